"""Helpers the tutorial notebooks share, and their registry of seed claims.

The notebooks in ``notebooks/`` teach the layout model by proving each rule with code. The
few measuring helpers they all need live here rather than pasted into every notebook, and
so does the reader for ``notebooks/claims.toml``: the one list of seed-article claims the
notebooks judge. Every verdict a notebook shows is rendered from that file, so a verdict is
written in exactly one place (``tests/test_notebooks_meta.py`` checks the rest).

This module is private: it is lesson scaffolding, not the library's API.

>>> import torch
>>> x = torch.arange(6.0).reshape(2, 3)
>>> shares_storage(x, x.t()), shares_storage(x, x.clone())
(True, False)
>>> copy_ops(lambda: x.t().contiguous())
['aten::clone', 'aten::copy_']
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from stridewidget.tricks import PeakMemory

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

VERDICTS = ("right", "wrong", "partly", "not measured")
# Timing verdicts rest on the full-size benchmark run stored beside the notebooks (variants timed
# side by side in one run, one thread), never on a live run on a shared machine, and a verdict
# must clear its threshold by TIMING_MARGIN. The path is relative to notebooks/.
STORED_RUN = "results/cpu-full-1thread.json"
TIMING_MARGIN = 2.0
# The ATen ops that move data: clone (new storage) and copy_ (into a given tensor). Composite
# ops that copy (contiguous, to, reshape) run one of these, so each copy is listed once.
COPY_OPS = frozenset({"aten::clone", "aten::copy_"})
# The seed articles, each by its file in ``/work/shared/seeds/`` and the article's own heading, so
# that a reader can find what a box quotes. Seed 004's file opens with an unrelated page title and
# some page junk; the article's heading follows them, so it is not the file's first line.
ARTICLES = {
    "000": (
        "000_ea4163bb16e47daf.txt",
        "PyTorch视图操作实战：torch.as_strided()的5个隐藏技巧与内存优化",
    ),
    "001": ("001_7eb861f26f5bc7ed.txt", "PyTorch Tensor布局与拷贝：GPU高性能训练的底层核心"),
    "002": (
        "002_3c713bb66b92bd02.txt",
        "PyTorch张量扩展的隐藏技巧：用expand()高效实现数据复制与广播",
    ),
    "004": ("004_9729a3b02e165019.txt", "PyTorch 中的 contiguous 与 non-contiguous 内存详解"),
}
# A claim's `device`: "gpu" when the seed's passage is about a GPU (CUDA, cuBLAS, a named card),
# whether or not the paraphrase says so; "" otherwise. Without a stored CUDA run such a claim reads
# "not measured", unless arithmetic or CPU facts decide it and its `why` says which.
DEVICES = ("", "gpu")
# A claim id's letter names its article; S claims (notebook 05) name theirs in an `article` field.
ARTICLE_OF_LETTER = {"A": "000", "B": "001", "C": "002", "D": "004"}


def stored_cuda_runs(results_dir: str | Path = "results") -> list[str]:
    """The stored CUDA benchmark runs (``cuda-*.json`` under ``notebooks/results``), by file name.

    A GPU timing claim is judged only on one of these; while there is none it reads "not
    measured" (the path is relative to ``notebooks/``, where the notebooks run).

    >>> root = Path(__file__).resolve().parent.parent
    >>> stored_cuda_runs(root / "notebooks" / "results")
    []
    """
    return sorted(path.name for path in Path(results_dir).glob("cuda-*.json"))


def storage_values(t: torch.Tensor) -> torch.Tensor:
    """The whole flat storage behind ``t`` as a 1-d tensor over the same memory (no copy).

    >>> x = torch.arange(6).reshape(2, 3)
    >>> storage_values(x[:, 1:]).tolist()
    [0, 1, 2, 3, 4, 5]
    """
    return torch.empty(0, dtype=t.dtype, device=t.device).set_(t.untyped_storage())


def shares_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether two tensors sit on one allocation, checked with torch alone (no stridewidget).

    >>> x = torch.zeros(4)
    >>> shares_storage(x, x[1:]), shares_storage(x, x + 0)
    (True, False)
    """
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def allocated(fn: Callable[[], Any]) -> tuple[Any, int]:
    """Run ``fn()``; return its result and the peak bytes of new tensor storage while it ran.

    Counts the storages ATen ops return (:class:`stridewidget.tricks.PeakMemory`); scratch
    memory a kernel allocates and frees inside itself is not seen, which is why a "no copy"
    verdict also checks the op names with :func:`copy_ops`.

    >>> x = torch.zeros(100)
    >>> allocated(lambda: x.view(10, 10))[1], allocated(lambda: x.clone())[1]
    (0, 400)
    """
    with PeakMemory() as memory:
        result = fn()
    return result, memory.peak


def copy_ops(fn: Callable[[], Any]) -> list[str]:
    """The data-copying ATen ops (clone, copy_, ...) that ran inside ``fn``, in order.

    Read with ``torch.profiler``, which records every op the dispatcher runs, including those
    a kernel calls internally (``addmm`` cloning a gapped operand, say), which no
    ``TorchDispatchMode`` sees.

    >>> w = torch.randn(4, 4)
    >>> copy_ops(lambda: torch.randn(3, 8)[:, ::2] @ w)
    ['aten::clone', 'aten::copy_']
    >>> copy_ops(lambda: torch.randn(8, 3).t() @ torch.randn(8, 4))
    []
    """
    activities = [torch.profiler.ProfilerActivity.CPU]
    with _quiet_stderr(), torch.profiler.profile(activities=activities) as profile:
        fn()
    return [event.name for event in profile.events() if event.name in COPY_OPS]


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    # The profiler's C++ side writes "profiler_start/stop" lines with timestamps straight to
    # file descriptor 2, which a notebook would save as output that differs on every run.
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


# The backend of all_reduce_column_view: what notebook 02 says about collectives is said of it.
ALL_REDUCE_BACKEND = "gloo"


def _all_reduce_worker(rank: int, port: int, column_step: int, result_path: str) -> None:
    # One of two gloo processes: all_reduce (sum) a column view of the same 3x4 tensor.
    import torch.distributed as dist

    dist.init_process_group(
        ALL_REDUCE_BACKEND, init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2
    )
    try:
        x = torch.arange(12.0).reshape(3, 4)
        dist.all_reduce(x[:, ::column_step])
        if rank == 0:
            torch.save(x, result_path)
    finally:
        dist.destroy_process_group()


def all_reduce_column_view(column_step: int) -> torch.Tensor:
    """Sum ``x[:, ::column_step]`` across two real gloo processes; return rank 0's whole ``x``.

    ``x`` is ``torch.arange(12.0).reshape(3, 4)`` in both processes, so a correct all-reduce
    doubles exactly the elements of the view. Step 1 is the whole, contiguous tensor.

    >>> all_reduce_column_view(1)[0].tolist()
    [0.0, 2.0, 4.0, 6.0]
    """
    import socket
    import tempfile

    import torch.multiprocessing as mp

    with socket.socket() as probe:  # a free port for the rendezvous
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with tempfile.TemporaryDirectory() as folder:
        result_path = str(Path(folder) / "x.pt")
        mp.spawn(_all_reduce_worker, args=(port, column_step, result_path), nprocs=2)
        return torch.load(result_path)


@dataclass(frozen=True)
class Claim:
    """One seed claim the tutorials judge (one ``[[claim]]`` entry of ``claims.toml``)."""

    id: str  # unique; the letter names the seed: A = 000, B = 001, C = 002, D = 004, S = 05's
    notebook: str  # "01" ... "05": where it is judged
    cell: str  # the label "[cell]" on the first line of the code cell that asserts it
    seed: str  # what the article says (paraphrased; the extraction lost = < > @)
    verdict: str  # one of VERDICTS
    why: str  # the measurement behind the verdict
    article: str = ""  # the seed file number ("001"); only S claims give it, the others' id does
    device: str = ""  # "gpu" when the seed's passage is about a GPU (see DEVICES)

    @property
    def source(self) -> str:
        """Which seed article the claim is from: its number, its file and the article's heading."""
        number = self.article or ARTICLE_OF_LETTER[self.id[0]]
        file_name, heading = ARTICLES[number]
        return f"seed {number}, file `{file_name}`, the article's heading “{heading}”"


def load_claims(path: str | Path = "claims.toml") -> dict[str, Claim]:
    """Read the claims registry; refuse unknown verdicts, missing fields and repeated ids.

    >>> root = Path(__file__).resolve().parent.parent
    >>> claims = load_claims(root / "notebooks" / "claims.toml")
    >>> claims["B2"].verdict
    'wrong'
    """
    with open(path, "rb") as file:
        entries = tomllib.load(file)["claim"]
    claims: dict[str, Claim] = {}
    for entry in entries:
        claim = Claim(**entry)
        if claim.verdict not in VERDICTS:
            raise ValueError(
                f"claim {claim.id}: verdict {claim.verdict!r} is not one of {VERDICTS}"
            )
        if claim.device not in DEVICES:
            raise ValueError(f"claim {claim.id}: device {claim.device!r} is not one of {DEVICES}")
        if (claim.article or ARTICLE_OF_LETTER.get(claim.id[0])) not in ARTICLES:
            raise ValueError(f"claim {claim.id}: no seed article {claim.article!r} in ARTICLES")
        if claim.id in claims:
            raise ValueError(f"claim id {claim.id} appears twice in {path}")
        claims[claim.id] = claim
    return claims


class _Markdown:
    # Shows as markdown in Jupyter and as the same text elsewhere (and in nbval's comparison).
    def __init__(self, text: str) -> None:
        self.text = text

    def _repr_markdown_(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def verdict_table(
    notebook: str | None = None, ids: Iterable[str] = (), path: str | Path = "claims.toml"
) -> _Markdown:
    """The verdict table of one notebook's claims (or of the claims named in ``ids``).

    >>> root = Path(__file__).resolve().parent.parent
    >>> print(verdict_table(ids=["B2"], path=root / "notebooks" / "claims.toml").text.splitlines()[0])
    | id | seed claim | verdict | shown in | measured |
    """
    claims = load_claims(path)
    chosen = [claims[i] for i in ids] + [
        c for c in claims.values() if notebook is not None and c.notebook == notebook
    ]
    lines = ["| id | seed claim | verdict | shown in | measured |", "|---|---|---|---|---|"]
    lines += [
        f"| {c.id} | {_cell(c.seed)} | **{c.verdict}** | {c.notebook} `[{c.cell}]` | {_cell(c.why)} |"
        for c in chosen
    ]
    return _Markdown("\n".join(lines))


def seed_myth(*ids: str, path: str | Path = "claims.toml") -> _Markdown:
    """A short, marked box with what a seed article claimed and the verdict, after the proof.

    >>> root = Path(__file__).resolve().parent.parent
    >>> print(seed_myth("B2", path=root / "notebooks" / "claims.toml").text[:47])
    > **Seed article says** [B2] · wrong (seed 001,
    """
    claims = load_claims(path)
    lines = []
    for claim_id in ids:
        claim = claims[claim_id]
        lines.append(
            f"> **Seed article says** [{claim.id}] · {claim.verdict} ({claim.source}): "
            f"“{claim.seed}”  \n"
            f"> → {claim.why}"
        )
    return _Markdown("\n>\n".join(lines))
