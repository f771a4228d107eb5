"""``sw.fuzz_layouts(fn, *inputs)``: does a function's result depend on its inputs' layout?

``fn`` runs once with every tensor input as a fresh contiguous copy (the reference), then once per
layout of :mod:`.relayout`, one input relaid at a time (the others contiguous copies), and each
run is compared with the reference: outputs leaf by leaf (dtype, shape, values by
``torch.testing.assert_close``'s rules), the inputs' values after the call (in-place changes),
and exceptions (their types).  The caller's tensors are never passed to ``fn``: every run gets
copies, and a module's parameters and buffers are put back after each run.  Each run starts from
the same random state (``seed``), inside ``torch.random.fork_rng``: the caller's is kept.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import torch

from .._compat import tree_flatten
from .._errors import LayoutError
from .._inspect import inspect
from .._layout import Layout
from .relayout import relayouts

__all__ = ["FuzzFinding", "FuzzReport", "fuzz_layouts"]

KINDS = ("values", "raised", "dtype", "shape", "mutation")


class FuzzFinding(NamedTuple):
    """One way a run with ``input`` laid out as ``layout`` differed from the contiguous run.

    ``input`` is the input's position (an int), keyword (a str), or path into nested lists,
    tuples and dicts (a tuple); ``name`` names the layout; ``kind`` is one of ``"values"``,
    ``"raised"``, ``"dtype"``, ``"shape"``, ``"mutation"``; ``detail`` says which output and by
    how much, or which exception.  Draws the input's layout in Jupyter.
    """

    input: Any
    layout: Layout
    name: str
    kind: str
    detail: str

    def __repr__(self) -> str:
        return f"FuzzFinding(input {self.input!r} as {self.name}: {self.kind}, {self.detail})"

    def _repr_html_(self) -> str:
        from .picture import finding_html

        return finding_html(self)


class FuzzReport:
    """What :func:`fuzz_layouts` found: ``findings`` (empty when ``ok``) and ``runs`` made.

    >>> import torch, stridewidget as sw
    >>> sw.fuzz_layouts(torch.mm, torch.ones(2, 3), torch.ones(3, 2)).ok
    True
    """

    def __init__(self, findings: list[FuzzFinding], runs: int) -> None:
        self.findings = findings
        self.runs = runs

    @property
    def ok(self) -> bool:
        """No layout changed the result."""
        return not self.findings

    def __repr__(self) -> str:
        head = f"FuzzReport: {self.runs} layouts tried, {len(self.findings)} finding(s)"
        lines = [f"  input {f.input} as {f.name}: {f.kind} ({f.detail})" for f in self.findings]
        return "\n".join([head, *lines])

    def _repr_html_(self) -> str:
        from .picture import finding_html

        pictures = "".join(finding_html(finding) for finding in self.findings[:5])
        head = f"<p><b>FuzzReport: {self.runs} layouts tried, {len(self.findings)} finding(s)</b>"
        return f"<div>{head}</p>{pictures}</div>"


# --- the inputs' tensors ----------------------------------------------------------------------------


def _slots(value: Any, path: tuple, found: list[tuple[tuple, torch.Tensor]]) -> None:
    """Every tensor in ``value`` with its path, looking into tuples, lists and dicts."""
    if isinstance(value, torch.Tensor):
        found.append((path, value))
    elif type(value) in (tuple, list):
        for i, item in enumerate(value):
            _slots(item, (*path, i), found)
    elif type(value) is dict:
        for key, item in value.items():
            _slots(item, (*path, key), found)


def _rebuilt(value: Any, path: tuple, tensors: dict[tuple, torch.Tensor]) -> Any:
    """``value`` with the tensor at each path of ``tensors`` put in its place."""
    if isinstance(value, torch.Tensor):
        return tensors[path]
    if type(value) in (tuple, list):
        return type(value)(_rebuilt(item, (*path, i), tensors) for i, item in enumerate(value))
    if type(value) is dict:
        return {key: _rebuilt(item, (*path, key), tensors) for key, item in value.items()}
    return value


def _fresh(t: torch.Tensor, relaid: torch.Tensor | None = None) -> torch.Tensor:
    """A contiguous copy of ``t`` (or ``relaid`` as is), a leaf needing grad where ``t`` does."""
    with torch.no_grad():
        if relaid is not None:
            copy = relaid
        elif t.layout is torch.strided:
            copy = t.clone(memory_format=torch.contiguous_format)
        else:  # sparse and other layouts: a copy, never relaid
            copy = t.clone()
    return copy.requires_grad_(t.requires_grad)


# --- one run --------------------------------------------------------------------------------------


class _Run(NamedTuple):
    leaves: list[Any] | None  # outputs, detached copies; None when it raised
    structure: Any
    error: BaseException | None
    inputs_after: dict[tuple, torch.Tensor]


def _run(
    fn: Callable, call: tuple[tuple, dict], slots: list, seed: int, relaid: tuple | None
) -> _Run:
    tensors = {path: _fresh(t) for path, t in slots}
    if relaid is not None:
        tensors[relaid[0]] = _fresh(tensors[relaid[0]], relaid[1])
    args = _rebuilt(call[0], ("args",), tensors)
    kwargs = _rebuilt(call[1], ("kwargs",), tensors)
    devices = sorted({t.device.index or 0 for t in tensors.values() if t.device.type == "cuda"})
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        try:
            result = fn(*args, **kwargs)
        except Exception as error:  # compared with the reference run's
            return _Run(None, None, error, _after(tensors))
    leaves, structure = tree_flatten(result)
    copied = [leaf.detach().clone() if isinstance(leaf, torch.Tensor) else leaf for leaf in leaves]
    return _Run(copied, structure, None, _after(tensors))


def _after(tensors: dict[tuple, torch.Tensor]) -> dict[tuple, torch.Tensor]:
    return {path: t.detach().clone() for path, t in tensors.items()}


class _ModuleState:
    """A module's parameters and buffers, put back after each run (BatchNorm's running stats)."""

    def __init__(self, fn: Callable) -> None:
        self.state = {}
        if isinstance(fn, torch.nn.Module):
            self.state = {
                name: (value, value.detach().clone())
                for name, value in fn.state_dict(keep_vars=True).items()
                if isinstance(value, torch.Tensor)
            }

    def restore(self) -> None:
        with torch.no_grad():
            for value, saved in self.state.values():
                value.copy_(saved)


# --- comparing a run with the reference ------------------------------------------------------------


def _max_error(actual: torch.Tensor, expected: torch.Tensor) -> str:
    if actual.is_complex() or expected.is_complex():
        difference = (actual.to(torch.complex128) - expected.to(torch.complex128)).abs()
    else:
        difference = (actual.double() - expected.double()).abs()
    return f"max abs error {difference.nan_to_num(float('inf')).max().item():.3g}"


def _differs(actual: Any, expected: Any, tolerance: dict) -> tuple[str, str] | None:
    """``(kind, detail)`` when ``actual`` is not ``expected``, else ``None``."""
    if not isinstance(expected, torch.Tensor) or not isinstance(actual, torch.Tensor):
        same = type(actual) is type(expected) and actual == expected
        return None if same else ("values", f"{actual!r} instead of {expected!r}")
    if actual.dtype != expected.dtype:
        return "dtype", f"{actual.dtype} instead of {expected.dtype}"
    if actual.shape != expected.shape:
        return "shape", f"{tuple(actual.shape)} instead of {tuple(expected.shape)}"
    try:
        torch.testing.assert_close(actual, expected, equal_nan=True, **tolerance)
    except AssertionError:
        return "values", _max_error(actual, expected)
    return None


def _compare(run: _Run, reference: _Run, tolerance: dict) -> Iterator[tuple[str, str]]:
    """``(kind, detail)`` of each kind of difference, the first output showing it."""
    if (run.error is None) != (reference.error is None) or (
        run.error is not None and type(run.error) is not type(reference.error)
    ):
        got = "no error" if run.error is None else f"{type(run.error).__name__}: {run.error}"
        expected = "no error" if reference.error is None else type(reference.error).__name__
        yield "raised", f"{got[:300]} (contiguous run: {expected})"
        return
    seen = set()
    if run.leaves is not None:
        if run.structure != reference.structure:
            yield "shape", f"outputs {run.structure} instead of {reference.structure}"
            seen.add("shape")
        else:
            for i, (actual, expected) in enumerate(zip(run.leaves, reference.leaves)):
                found = _differs(actual, expected, tolerance)
                if found is not None and found[0] not in seen:
                    seen.add(found[0])
                    yield found[0], f"output {i}: {found[1]}"
    for path, expected in reference.inputs_after.items():
        found = _differs(run.inputs_after[path], expected, tolerance)
        if found is not None:
            yield "mutation", f"input {_label(path)} after the call: {found[1]}"
            return


def _label(path: tuple) -> Any:
    """An input's position (int), keyword (str), or path into nested containers (tuple)."""
    return path[1] if len(path) == 2 else path[1:]


# --- the fuzzer --------------------------------------------------------------------------------------


def _plan(slots: list, seed: int, max_layouts: int) -> Iterator[tuple[tuple, str, torch.Tensor]]:
    """``(path, layout name, relaid tensor)``: each input's layouts in turn, round robin."""
    rng = random.Random(seed)
    streams = [(path, relayouts(t, rng)) for path, t in slots if t.layout is torch.strided]
    made = 0
    while streams and made < max_layouts:
        for stream in list(streams):
            if made >= max_layouts:
                return
            item = next(stream[1], None)
            if item is None:
                streams.remove(stream)
                continue
            made += 1
            yield stream[0], item[0], item[1]


def fuzz_layouts(
    fn: Callable,
    *inputs: Any,
    seed: int = 0,
    max_layouts: int = 32,
    rtol: float | None = None,
    atol: float | None = None,
    **kwargs: Any,
) -> FuzzReport:
    """Run ``fn(*inputs, **kwargs)`` with each tensor input in other layouts; report differences.

    Same values, other layouts: transposed-contiguous, gapped slices of a bigger storage, a
    storage offset, channels-last(-3d) where the rank fits, stride 0 and odd strides on dims of
    size 1, other dim orders (see :mod:`stridewidget.check.relayout`).  At most ``max_layouts``
    runs besides the contiguous one; deterministic for a ``seed``; ``rtol`` / ``atol`` as in
    ``torch.testing.assert_close`` (both or neither).  ``fn`` may be a function, a module or a
    custom op; the caller's tensors are never passed to it.  Every run starts from the same random
    state, but an op that draws per element may draw in memory order (dropout in training mode
    does): fuzz such a module in ``eval()`` mode.

    >>> import torch, stridewidget as sw
    >>> def first_row(t):                      # reads t's storage as if t were contiguous
    ...     flat = torch.empty(0, dtype=t.dtype).set_(t.untyped_storage())
    ...     return flat[: t.shape[1]].clone()
    >>> report = sw.fuzz_layouts(first_row, torch.arange(6.0).reshape(2, 3))
    >>> report.ok, [f.name for f in report.findings][:3]
    (False, ['F-contiguous', 'gapped slice', 'storage offset'])
    >>> sw.fuzz_layouts(torch.relu, torch.randn(2, 3)).ok
    True
    """
    if not callable(fn):
        raise LayoutError(f"fuzz_layouts: fn must be callable, got {type(fn).__name__}")
    if (rtol is None) != (atol is None):
        raise LayoutError("fuzz_layouts: give both rtol and atol, or neither")
    if not isinstance(max_layouts, int) or max_layouts < 0:
        raise LayoutError(f"fuzz_layouts: max_layouts must be an int >= 0, got {max_layouts!r}")
    call = (inputs, kwargs)
    slots: list[tuple[tuple, torch.Tensor]] = []
    _slots(inputs, ("args",), slots)
    _slots(kwargs, ("kwargs",), slots)
    if not slots:
        raise LayoutError("fuzz_layouts: no tensor among the inputs, so no layout to vary")
    tolerance = {} if rtol is None else {"rtol": rtol, "atol": atol}
    state = _ModuleState(fn)
    try:
        reference = _run(fn, call, slots, seed, None)
        state.restore()
        findings, runs = [], 0
        for path, name, relaid in _plan(slots, seed, max_layouts):
            layout = inspect(relaid)
            run = _run(fn, call, slots, seed, (path, relaid))
            state.restore()
            runs += 1
            for kind, detail in _compare(run, reference, tolerance):
                findings.append(FuzzFinding(_label(path), layout, name, kind, detail))
    finally:
        state.restore()
    return FuzzReport(findings, runs)
