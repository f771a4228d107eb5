"""``sw.fuzz_layouts(fn, *inputs)``: does a function's result depend on its inputs' layout?

``fn`` runs once with every tensor input as a fresh contiguous copy (the reference), then once per
layout of :mod:`.relayout`, one input relaid at a time (the others contiguous copies), and each
run is compared with the reference: outputs leaf by leaf (dtype, shape, values by
``torch.testing.assert_close``'s rules), the inputs' values after the call (in-place changes),
and exceptions (their types).  The caller's tensors are never passed to ``fn``: every run gets
copies, and a module runs with copies of its parameters and buffers (``functional_call``).
The contiguous run is made twice: where the two differ, the function is nondeterministic and no
layout is compared (``report.nondeterministic``).  After each relaid run the cells of its storage
outside the input's elements must be unchanged (a ``"mutation"`` finding otherwise).  Each run starts from
the same random state (``seed``), inside ``torch.random.fork_rng``: the caller's is kept.
"""

from __future__ import annotations

import dataclasses
import random
import types
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np
import torch

from .._compat import tree_flatten
from ..adapters.inspect import inspect
from ..errors import LayoutError
from ..layout.layout import Layout
from ..unseen import unseen
from .relayout import not_relaid, relayouts

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

    def __init__(
        self,
        findings: list[FuzzFinding],
        runs: int,
        nondeterministic: bool = False,
        uncompared: tuple[str, ...] = (),
        random_values: int = 0,
        skipped: tuple[str, ...] = (),
    ) -> None:
        self.findings = findings
        self.runs = runs
        #: the contiguous run disagreed with itself, or ``random_values``: ``ok`` is False
        self.nondeterministic = nondeterministic or random_values > 0
        #: the types of outputs not compared (neither tensors, arrays, numbers nor plain values)
        self.uncompared = uncompared
        #: layouts whose values differed in a function that draws random numbers: a draw in
        #: memory order (dropout in training) explains them, so they are not findings
        self.random_values = random_values
        #: the inputs not relaid, each with why (``"input 1: quantized: ..."``)
        self.skipped = skipped

    @property
    def ok(self) -> bool:
        """No layout changed the result (and the result did not change by itself)."""
        return not self.findings and not self.nondeterministic

    def __repr__(self) -> str:
        if self.nondeterministic and not self.random_values:
            return "FuzzReport: nondeterministic (two contiguous runs differ); no layout compared"
        head = f"FuzzReport: {self.runs} layouts tried, {len(self.findings)} finding(s)"
        if self.random_values:
            head += (
                f"; nondeterministic: fn draws random numbers and {self.random_values} layout(s) "
                "changed its values (a draw in memory order, as dropout in training does), not "
                "reported as findings: fuzz it in eval() mode"
            )
        lines = [f"  input {f.input} as {f.name}: {f.kind} ({f.detail})" for f in self.findings]
        lines += [f"  not relaid: {reason}" for reason in self.skipped]
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
    """A contiguous copy of ``t`` (or ``relaid`` as is), of ``t``'s class (a subclass stays one),
    a leaf needing grad where ``t`` does."""
    with torch.no_grad():
        if relaid is not None:
            copy = relaid
            if type(t) not in (torch.Tensor, torch.nn.Parameter, type(relaid)):
                copy = relaid.as_subclass(type(t))
        elif not_relaid(t) is None:
            copy = t.clone(memory_format=torch.contiguous_format)
        else:  # sparse, nested, quantized, wrapper subclasses: a copy, never relaid
            copy = t.clone()
    return copy.requires_grad_(t.requires_grad)


# --- one run --------------------------------------------------------------------------------------


class _Run(NamedTuple):
    leaves: list[Any] | None  # outputs, detached copies; None when it raised
    structure: Any
    error: BaseException | None
    inputs_after: dict[tuple, torch.Tensor]
    drew: bool = False  # the run drew random numbers (the generator moved)


def _run(
    fn: Callable, call: tuple[tuple, dict], slots: list, seed: int, relaid: tuple | None
) -> _Run:
    tensors = {path: _fresh(t) for path, t in slots}
    filler = None
    if relaid is not None:
        tensors[relaid[0]] = _fresh(tensors[relaid[0]], relaid[1])
        filler = _Filler(tensors[relaid[0]])
    args = _rebuilt(call[0], ("args",), tensors)
    kwargs = _rebuilt(call[1], ("kwargs",), tensors)
    devices = sorted({t.device.index or 0 for t in tensors.values() if t.device.type == "cuda"})
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        start = _generators(devices)
        try:
            result = _call(fn, args, kwargs)
        except Exception as error:  # compared with the reference run's
            return _Run(None, None, error, _after(tensors))
        drew = any(not torch.equal(a, b) for a, b in zip(start, _generators(devices)))
    leaves, structure = _flatten(result)
    copied = [leaf.detach().clone() if isinstance(leaf, torch.Tensor) else leaf for leaf in leaves]
    after = _after(tensors)
    if filler is not None and filler.changed():
        after[("filler",)] = _FILLER_WRITTEN
    return _Run(copied, structure, None, after, drew)


def _beyond_draws(
    fn: Callable, call: tuple, slots: list, seed: int, relaid: tuple, tolerance: dict, cache: dict
) -> str | None:
    """A value difference of a run that drew random numbers, run again with every draw in
    logical order (a draw may follow memory order): its detail where it stays, else None (the
    draws explain it).  ``cache`` keeps the reference's ordered run."""
    if "reference" not in cache:
        cache["reference"] = _ordered_run(fn, call, slots, seed, None)
    ordered = _ordered_run(fn, call, slots, seed, relaid)
    still = [d for k, d in _compare(ordered, cache["reference"], tolerance) if k == "values"]
    return still[0] if still else None


def _ordered_run(
    fn: Callable, call: tuple[tuple, dict], slots: list, seed: int, relaid: tuple | None
) -> _Run:
    """:func:`_run` with every random op drawing in its tensors' logical order (so that a seed
    gives the same values in any layout)."""
    from ..copies.audit.compare import drawn_in_order

    with drawn_in_order():
        return _run(fn, call, slots, seed, relaid)


def _generators(devices: list[int]) -> list[torch.Tensor]:
    """The states of the random generators a run may draw from (CPU, and the CUDA devices)."""
    return [torch.get_rng_state(), *(torch.cuda.get_rng_state(d) for d in devices)]


def _call(fn: Callable, args: tuple, kwargs: dict) -> Any:
    """``fn(*args, **kwargs)``; a module runs with fresh copies of its parameters and buffers in
    their place (``torch.func.functional_call``), so nothing of the caller's is ever written: no
    version counter moves, no ``.grad`` accumulates, a pending backward still works."""
    if not isinstance(fn, torch.nn.Module):
        return fn(*args, **kwargs)
    with torch.no_grad():
        state = {
            name: value.detach().clone().requires_grad_(value.requires_grad)
            for name, value in (*fn.named_parameters(), *fn.named_buffers())
        }
    return torch.func.functional_call(fn, state, args, kwargs, tie_weights=True)


#: A marker in ``inputs_after``: the run wrote a cell of the relaid input's storage outside it.
_FILLER_WRITTEN = "filler written"


class _Filler:
    """The cells of a relaid input's storage outside its elements (gaps, padding, offset): a
    function writing past the view's logical elements changes them."""

    def __init__(self, t: torch.Tensor) -> None:
        self.storage = t.untyped_storage()
        nbytes = self.storage.nbytes()
        self.outside = torch.ones(nbytes, dtype=torch.bool, device=t.device)
        if t.numel():
            size = t.element_size()
            firsts = torch.arange(nbytes // size, device=t.device)
            firsts = firsts.as_strided(t.shape, t.stride(), t.storage_offset()) * size
            inside = firsts.reshape(-1, 1) + torch.arange(size, device=t.device)
            self.outside[inside.flatten()] = False
        self.before = self._bytes().clone()

    def _bytes(self) -> torch.Tensor:
        return torch.empty(0, dtype=torch.uint8, device=self.outside.device).set_(self.storage)

    def changed(self) -> bool:
        now = self._bytes()
        if now.numel() != self.outside.numel():  # resized by fn: its own business
            return False
        return not torch.equal(now[self.outside], self.before[self.outside])


def _after(tensors: dict[tuple, torch.Tensor]) -> dict[tuple, Any]:
    return {path: t.detach().clone() for path, t in tensors.items()}


def _flatten(result: Any) -> tuple[list[Any], Any]:
    """The leaves of an output and its structure: pytree's, dataclasses and namespaces opened."""
    leaves, structure = tree_flatten(result)
    opened: list[Any] = []
    shapes = []
    for leaf in leaves:
        fields = _fields(leaf)
        if fields is None:
            opened.append(leaf)
            shapes.append(None)
        else:
            inner, inner_structure = _flatten(fields)
            opened.extend(inner)
            shapes.append((type(leaf).__name__, inner_structure))
    return opened, (structure, tuple(shapes))


def _fields(value: Any) -> dict | None:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, types.SimpleNamespace):
        return dict(vars(value))
    return None


# --- comparing a run with the reference ------------------------------------------------------------


def _max_error(actual: torch.Tensor, expected: torch.Tensor) -> str:
    if actual.is_floating_point() and (actual.isnan() & ~expected.isnan()).any():
        return (
            "NaN where the contiguous run has a number: read a cell outside the tensor (filler NaN)"
        )
    if actual.is_complex() or expected.is_complex():
        difference = (actual.to(torch.complex128) - expected.to(torch.complex128)).abs()
    else:
        difference = (actual.double() - expected.double()).abs()
    return f"max abs error {difference.nan_to_num(float('inf')).max().item():.3g}"


#: Outputs compared with ``==`` (exact values, no tolerance).
_PLAIN_VALUES = (str, bytes, type(None), torch.dtype, torch.device, torch.Size, torch.layout)


def _as_tensor(value: Any) -> torch.Tensor | None:
    """A tensor (a nested one padded), or a NumPy array or Python number as one (compared by
    ``assert_close``'s rules, NaN equal to NaN), else ``None``."""
    if isinstance(value, torch.Tensor):  # a nested tensor as its padded form (it has no sizes)
        return value.to_padded_tensor(0) if value.is_nested else value
    if isinstance(value, (bool, int, float, complex)):
        return torch.tensor(value)
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype != object:
        return torch.as_tensor(np.array(value))
    return None


def _comparable(value: Any) -> bool:
    return isinstance(value, _PLAIN_VALUES) or _as_tensor(value) is not None


def _differs(actual: Any, expected: Any, tolerance: dict) -> tuple[str, str] | None:
    """``(kind, detail)`` when ``actual`` is not ``expected``, else ``None`` (also for outputs
    that cannot be compared: see ``FuzzReport.uncompared``)."""
    if type(actual) is not type(expected):
        return "values", f"a {type(actual).__name__} instead of a {type(expected).__name__}"
    if isinstance(expected, _PLAIN_VALUES):
        return None if actual == expected else ("values", f"{actual!r} instead of {expected!r}")
    actual_t, expected_t = _as_tensor(actual), _as_tensor(expected)
    if expected_t is None or actual_t is None:
        return None
    if actual_t.dtype != expected_t.dtype:
        return "dtype", f"{actual_t.dtype} instead of {expected_t.dtype}"
    if actual_t.shape != expected_t.shape:
        return "shape", f"{tuple(actual_t.shape)} instead of {tuple(expected_t.shape)}"
    try:
        torch.testing.assert_close(actual_t, expected_t, equal_nan=True, **tolerance)
    except AssertionError:
        return "values", _max_error(actual_t, expected_t)
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
    if _FILLER_WRITTEN in run.inputs_after.values():
        yield "mutation", "wrote storage outside the input's elements (its gaps or padding)"
        return
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
    streams = [(path, relayouts(t, rng)) for path, t in slots if not_relaid(t) is None]
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


def _check_arguments(fn: Any, rtol: Any, atol: Any, max_layouts: Any) -> None:
    if not callable(fn):
        raise LayoutError(f"fuzz_layouts: fn must be callable, got {type(fn).__name__}")
    if (rtol is None) != (atol is None):
        raise LayoutError("fuzz_layouts: give both rtol and atol, or neither")
    if not isinstance(max_layouts, int) or max_layouts < 0:
        raise LayoutError(f"fuzz_layouts: max_layouts must be an int >= 0, got {max_layouts!r}")


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
    does): when ``fn`` draws random numbers, layouts that change its values are counted in
    ``random_values`` and the report says ``nondeterministic``, not findings; fuzz such a
    module in ``eval()`` mode.  A Tensor subclass input is relaid as the same subclass; inputs
    that cannot be relaid (sparse, nested, quantized, wrapper subclasses) are listed in
    ``skipped``, and when no input can be, :class:`~stridewidget.errors.LayoutError` (one line).

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
    _check_arguments(fn, rtol, atol, max_layouts)
    call = (inputs, kwargs)
    slots: list[tuple[tuple, torch.Tensor]] = []
    _slots(inputs, ("args",), slots)
    _slots(kwargs, ("kwargs",), slots)
    if not slots:
        raise LayoutError("fuzz_layouts: no tensor among the inputs, so no layout to vary")
    skipped = tuple(
        f"input {_label(path)}: {not_relaid(t)}" for path, t in slots if not_relaid(t) is not None
    )
    if len(skipped) == len(slots):
        raise LayoutError(
            f"fuzz_layouts: no input can be laid out otherwise, so nothing to try "
            f"({'; '.join(skipped)})"
        )
    with unseen():  # the fuzzer's runs are no event of a track_copies() block around it
        tolerance = {} if rtol is None else {"rtol": rtol, "atol": atol}
        reference = _run(fn, call, slots, seed, None)
        uncompared = tuple(
            sorted(
                {type(leaf).__name__ for leaf in reference.leaves or () if not _comparable(leaf)}
            )
        )
        if next(_compare(_run(fn, call, slots, seed, None), reference, tolerance), None):
            return FuzzReport([], 0, nondeterministic=True, uncompared=uncompared)
        findings, runs, random_values = [], 0, 0
        ordered: dict[str, _Run] = {}
        for path, name, relaid in _plan(slots, seed, max_layouts):
            layout = inspect(relaid)
            run = _run(fn, call, slots, seed, (path, relaid))
            runs += 1
            for kind, detail in _compare(run, reference, tolerance):
                if kind == "values" and reference.drew:
                    detail = _beyond_draws(
                        fn, call, slots, seed, (path, relaid), tolerance, ordered
                    )
                    if detail is None:
                        random_values += 1
                        continue
                findings.append(FuzzFinding(_label(path), layout, name, kind, detail))
        return FuzzReport(
            findings, runs, uncompared=uncompared, random_values=random_values, skipped=skipped
        )
