"""What ``sw.audit`` checks before a step and restores after it: the model it can audit, clear
errors for one it cannot (frozen, inputs on another device, nothing to run backward from), the
model's buffers and the RNG left as found."""

from __future__ import annotations

import dataclasses
import os
import sys
import sysconfig
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch

from ..._compat import (
    compiled_in_place,
    compiled_original,
    own_tensors,
    restore_buffer,
    restore_parameter,
    set_version_counter,
    version_counter,
)
from ...errors import LayoutError
from .saved import released, same_bits, saved_values

COMPILED_NOTE = (
    "the model is torch.compile'd, but a compiled program is audited only without loss_fn and "
    "model_kwargs: the eager model it wraps was audited (the compiled graph did not run), so "
    "copies the compiler removes or adds are not in this report"
)
COMPILED_PARTS_NOTE = (
    "{parts} torch.compile'd (compiled in place with .compile(), a compiled submodule, forward "
    "or function attribute); the eager code was audited (the audit follows the model's Python op "
    "by op), so copies the compiler removes or adds are not in this report; "
    "sw.audit(torch.compile(model), ...) audits a compiled program"
)
COMPILED_CALLED_NOTE = (
    "the step called torch.compile'd code ({functions}, first), which ran eagerly (torch.compile runs "
    "no compiled code under the audit's dispatch modes), and the eager code was audited, so "
    "copies the compiler removes or adds are not in this report"
)


def eager_model(model: torch.nn.Module) -> tuple[torch.nn.Module, str]:
    """The module to audit and a note for the report: a ``torch.compile``d model's eager
    original (for a step with ``loss_fn`` or ``model_kwargs``, which the compiled audit does not
    take yet), said in the note and in a warning (never silently); so is a model compiled in
    place (``model.compile()``) or holding compiled submodules, whose eager code the audit's
    modes run."""
    original = compiled_original(model)
    if original is not None:
        warnings.warn(f"sw.audit: {COMPILED_NOTE}", UserWarning, stacklevel=3)
        return original, COMPILED_NOTE
    parts = [name for name, module in model.named_modules() if _holds_compiled(module)]
    if not parts:
        return model, ""
    shown = ", ".join(repr(name) if name else "the model" for name in parts[:3])
    more = f" and {len(parts) - 3} more" if len(parts) > 3 else ""
    verb = "is" if len(parts) == 1 else "are"
    note = COMPILED_PARTS_NOTE.format(parts=f"{shown}{more} {verb}")
    warnings.warn(f"sw.audit: {note}", UserWarning, stacklevel=3)
    return model, note


def _holds_compiled(module: torch.nn.Module) -> bool:
    """Is ``module`` compiled (in place, or a compiled wrapper), its class's ``forward`` a
    ``@torch.compile``d method, or one of its plain attributes a compiled function?"""
    if compiled_in_place(module) or compiled_original(module) is not None:
        return True
    if compiled_original(getattr(type(module), "forward", None)) is not None:
        return True
    return any(
        callable(value) and compiled_original(value) is not None
        for value in vars(module).values()
        if not isinstance(value, (dict, torch.nn.Module))
    )


def compiled_calls_note(skipped: list[str], said: bool) -> str:
    """The note (also warned) for torch.compile'd code the step called and ran eagerly
    (``skipped``: :func:`~stridewidget._compat.mode_skipped_compiles`, the first compiled
    function first), unless the note already ``said`` that eager code was audited; else ``""``.

    >>> compiled_calls_note([], said=False)
    ''
    >>> compiled_calls_note([f"wrapper ({torch.__file__}:1)"], said=False)  # torch's own compile
    ''
    """
    users = [frame for frame in skipped if not _library_frame(frame)]
    if not users or said:
        return ""
    called = COMPILED_CALLED_NOTE.format(functions=users[0])
    warnings.warn(f"sw.audit: {called}", UserWarning, stacklevel=3)
    return called


#: Where torch, the audit and Python's standard library live: frames there that dynamo skipped
#: are not the user's compiled code (``torch.cond`` and the other higher-order ops compile their
#: own wrapper, ``_hop_compile_and_call``, on every eager call).
_LIBRARY_ROOTS = (
    os.path.dirname(os.path.normpath(torch.__file__)) + os.sep,
    os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..")) + os.sep,
)


def _library_frame(frame: str) -> bool:
    """Is the skipped frame ``"name (file:line)"`` torch's, the audit's, generated code's
    (``<string>``) or the standard library's (outside site-packages), not the user's?"""
    file = os.path.normpath(frame.rpartition(" (")[2].rpartition(":")[0])
    if file.startswith("<") or file.startswith(_LIBRARY_ROOTS):
        return True
    stdlib = os.path.normpath(sysconfig.get_paths()["stdlib"]) + os.sep
    return file.startswith(stdlib) and "-packages" + os.sep not in file


def grad_targets(model: torch.nn.Module, inputs: Any) -> list[torch.Tensor]:
    """What backward computes the gradient of: the parameters that require grad, else (a
    parameter-free or frozen model) the input tensors that do (the gradient flows to them)."""
    params = [p for p in model.parameters() if p.requires_grad]
    if params:
        return params
    return list({id(t): t for t in output_tensors(inputs) if t.requires_grad}.values())


def check_model(model: torch.nn.Module, backward: bool, inputs: Any = ()) -> None:
    """Clear errors for a model the step cannot run backward through (``inputs``: the step's,
    an input that requires grad gets a gradient from a model with no trainable parameter)."""
    if backward and not any(p.requires_grad for p in model.parameters()):
        if _quantized(model):
            raise ValueError(
                "sw.audit: the model is quantized (its weights are packed, not parameters: "
                "nothing to train), so backward computes no gradient; audit its forward with "
                "backward=False"
            )
        if grad_targets(model, inputs):
            return
        if next(model.parameters(), None) is None:
            raise ValueError(
                f"sw.audit: the model ({type(model).__name__}) has no parameters and no input "
                "requires grad, so backward computes no gradient; pass backward=False to audit "
                "the forward only, or an input that requires grad to audit its gradient"
            )
        raise ValueError(
            "sw.audit: the model is frozen (no parameter requires grad), so backward computes "
            "no gradient; pass backward=False to audit the forward only, or unfreeze the "
            "parameters to train (model.requires_grad_(True))"
        )


def check_materialised(model: torch.nn.Module) -> None:
    """A clear error for a model with a lazy module (``LazyLinear``) not yet run: its
    uninitialized parameters have no shape, so no step, state saved or fix can use them."""
    lazy = [name for name, p in model.named_parameters() if torch.nn.parameter.is_lazy(p)]
    if lazy:
        raise ValueError(
            f"sw.audit: the model has uninitialized lazy parameters ({lazy[0]}"
            f"{f' and {len(lazy) - 1} more' if len(lazy) > 1 else ''}); run model(*inputs) once "
            "to materialise them, then audit it"
        )


def _quantized(model: torch.nn.Module) -> bool:
    """Does ``model`` hold a quantized module (``torch.ao.nn.quantized``, dynamic or static, or
    its older ``torch.nn.quantized`` name) or a quantized tensor?"""
    for module in model.modules():
        if ".quantized" in type(module).__module__:
            return True
    return any(t.is_quantized for t in model_tensors(model))


def model_tensors(model: torch.nn.Module) -> Iterator[torch.Tensor]:
    """The model's parameters and buffers (not ``state_dict()``: a quantized module's holds
    packed parameters, and ``get_extra_state`` may hold anything)."""
    yield from model.parameters()
    yield from model.buffers()


@contextmanager
def state_kept(model: torch.nn.Module, inputs: Any = ()) -> Iterator[None]:
    """The model's parameters and buffers (BatchNorm's running statistics,
    ``num_batches_tracked``, a weight normalised in place in ``forward``), each module's plain
    attributes (a call counter, a cache the step rebinds), the tensors in ``inputs`` (nested in
    tuples, lists and dicts: the positional inputs and ``model_kwargs``) and torch's RNG states
    bit for bit as they were before the block, after it: a training-mode step updates buffers,
    a forward may write its parameters or its input (``x.mul_(2)``), and dropout draws from the
    RNG.  Each name is given back its very tensor; each tensor's values are saved once (a weight
    tied under two names too), and written back only where its bits changed (one left alone keeps
    its version counter; one written back gets it back: :func:`_versions_given_back`).  Costs
    one copy of the parameters, buffers and inputs and one shallow copy of each module's
    ``__dict__``; an input is written back where its version counter moved,
    else where its bits changed (a write through NumPy, DLPack or ``x.data`` moves no version
    counter; a leaf that requires grad is kept too: ``x.detach().numpy()`` writes it).  The
    copies and the comparison are :mod:`.saved`'s (one huge-page buffer, kept for the next audit,
    ``memcmp``).  A module's plain tensor attributes (``self.cache``, in lists and dicts too) are
    kept as the inputs are, and the ``torch.Generator`` objects modules hold get their states
    back; so do Python's and NumPy's global generators, grad mode, and each parameter's
    ``requires_grad`` and ``.grad`` (the very tensor: a ``zero_grad()`` in ``forward`` would drop
    it)."""
    # (module, name, tensor, is a parameter) for every name, and one saved copy per tensor
    named: list[tuple[Any, str, torch.Tensor, bool]] = []
    saved: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}
    where: dict[int, tuple[Any, ...] | None] = {}  # each tensor's storage, offset, sizes, strides
    with torch.no_grad():
        for module in model.modules():
            params, buffers = own_tensors(module)
            for name, tensor in buffers:
                if isinstance(tensor, torch.Tensor):
                    named.append((module, name, tensor, False))
            for name, tensor in params:
                named.append((module, name, tensor, True))
        unique = list({id(tensor): tensor for _, _, tensor, _ in named}.values())
        held = [_held_values(tensor) for tensor in unique]  # a DTensor's: its local shard's
        saved_model, versions = saved_values(held), [(t, version_counter(t)) for t in held]
        for tensor, values in zip(held, saved_model):
            saved[id(tensor)] = (tensor, values)
            where[id(tensor)] = _placement(tensor)
        found = [t for t in dict.fromkeys(output_tensors(inputs)) if not t.is_inference()]
        saved_inputs = saved_values(found)
        kept_inputs = [(t, version_counter(t), values) for t, values in zip(found, saved_inputs)]
        attributes = [(module, type(module), dict(vars(module))) for module in model.modules()]
        kept = {id(t) for t in saved} | {id(k[0]) for k in kept_inputs}
        plain, generators = _plain_state(attributes, kept)
        kept_inputs.extend(plain)
    devices = sorted({t.device.index or 0 for t, _ in saved.values() if t.device.type == "cuda"})
    flags = [(t, t.requires_grad, t.grad) for t in unique if t.is_leaf]
    other_rngs, grad_mode = _other_rngs(), torch.is_grad_enabled()
    try:
        with torch.random.fork_rng(devices=devices):
            yield
    finally:
        torch.set_grad_enabled(grad_mode)
        for restore in other_rngs:
            restore()
        for tensor, requires_grad, grad in flags:
            if tensor.requires_grad != requires_grad:  # requires_grad_(False) in forward
                tensor.requires_grad_(requires_grad)
            if tensor.grad is not grad:  # zero_grad() / .grad = ... in forward
                tensor.grad = grad
        _attributes_restored(attributes)
        for generator, state in generators:
            generator.set_state(state)
        with torch.no_grad():
            failed = _given_back(_inputs_given_back, kept_inputs)
            for module, name, tensor, is_parameter in named:
                (restore_parameter if is_parameter else restore_buffer)(module, name, tensor)
            failed += _given_back(_model_given_back, [(*kept, where) for kept in saved.values()])
        _versions_given_back(versions, saved, kept_inputs)
        # nothing reads the saved values any more: their buffers serve the next audit
        released(saved_model)
        released(saved_inputs)
        if failed and sys.exc_info()[0] is None:  # else the step's own error goes through
            raise LayoutError(
                f"sw.audit could not give back {len(failed)} of the model's and inputs' "
                f"tensors ({failed[0]}); the rest of their state was given back"
            )


def _given_back(give_back: Callable[..., None], kept: list[tuple[Any, ...]]) -> list[str]:
    """``give_back(*entry)`` for each kept tensor's entry; what could not be given back (a tensor
    subclass that refuses ``copy_``), in words: one failure leaves the others given back."""
    failed = []
    for entry in kept:
        try:
            give_back(*entry)
        except Exception as error:
            failed.append(_failure(entry[0], error))
    return failed


def _inputs_given_back(tensor: torch.Tensor, version: int | None, values: torch.Tensor) -> None:
    """An input's (or a module's plain tensor's) values as before the step."""
    if version is not None and version_counter(tensor) != version:
        tensor.copy_(values)  # written in place by an ATen op
    elif _bits_moved(tensor, values):  # unseen: NumPy, DLPack, x.data.mul_(2)
        tensor.copy_(values)


def _model_given_back(
    tensor: torch.Tensor, values: torch.Tensor, where: dict[int, tuple[Any, ...] | None]
) -> None:
    """A parameter's or buffer's placement and values as before the step."""
    _placed_back(tensor, where[id(tensor)])  # set_, resize_, .data = ...double()
    same_kind = tensor.shape == values.shape and tensor.dtype == values.dtype
    if same_kind and not same_bits(tensor, values):
        tensor.copy_(values)


def _failure(tensor: torch.Tensor, error: Exception) -> str:
    """A tensor that could not be given back, and why, in one line."""
    message = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"a {type(tensor).__name__} of shape {tuple(tensor.shape)}: {type(error).__name__}: {message}"


def _versions_given_back(
    versions: list[tuple[torch.Tensor, int | None]],
    saved: dict[int, tuple[torch.Tensor, torch.Tensor]],
    kept_inputs: list[tuple[torch.Tensor, int | None, torch.Tensor]],
) -> None:
    """Each kept tensor (the model's, with ``versions`` from before the step, and the inputs,
    with theirs) whose values are now its saved ones bit for bit gets its version counter back:
    the step's writes (BatchNorm's running statistics) and their undoing each moved it, and a
    graph the caller built before the audit (``y = model(x)``; ``sw.audit(model, x)``;
    ``y.sum().backward()``) would refuse a buffer it saved as "modified by an inplace
    operation"."""
    values_of = {id(t): values for t, values in saved.values()}
    values_of.update((id(t), values) for t, _, values in kept_inputs)
    for tensor, version in [*versions, *[(t, v) for t, v, _ in kept_inputs]]:
        values = values_of.get(id(tensor))
        if version is None or values is None or version_counter(tensor) == version:
            continue
        same_kind = (tensor.shape, tensor.dtype) == (values.shape, values.dtype)
        if same_kind and tensor.layout == torch.strided and same_bits(tensor, values):
            set_version_counter(tensor, version)


def _held_values(tensor: torch.Tensor) -> torch.Tensor:
    """The tensor whose storage holds ``tensor``'s values on this process: a DTensor's local
    shard (FSDP2's sharded parameters: the DTensor itself is a wrapper with no storage of its
    own), else ``tensor``.  Called under ``no_grad``, where ``to_local()`` is the shard itself."""
    module = sys.modules.get("torch.distributed.tensor")
    dtensor = getattr(module, "DTensor", None) if module is not None else None
    if dtensor is not None and isinstance(tensor, dtensor):
        return tensor.to_local()
    return tensor


def _other_rngs() -> list[Callable[[], None]]:
    """Callables that give Python's ``random`` and NumPy's global generator (where NumPy is
    imported) their states back: a forward may draw from them (``random.random()`` for a
    drop-path, ``np.random.rand()`` for an augmentation)."""
    import random

    restores: list[Callable[[], None]] = []
    state = random.getstate()
    restores.append(lambda: random.setstate(state))
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy_state = numpy.random.get_state()
        restores.append(lambda: numpy.random.set_state(numpy_state))
    return restores


def _bits_moved(tensor: torch.Tensor, values: torch.Tensor) -> bool:
    """Do an input's (or plain attribute's) bits differ from its saved ``values``, where its
    version counter did not move?  ``False`` where they cannot be compared (a sparse tensor, a
    subclass without the views, another shape or dtype): it is then left as it is."""
    if tensor.layout != torch.strided or (tensor.shape, tensor.dtype) != (
        values.shape,
        values.dtype,
    ):
        return False
    try:
        return not same_bits(tensor, values)
    except (RuntimeError, NotImplementedError, TypeError):
        return False


#: What ``nn.Module.__init__`` puts in every module's ``__dict__`` (its parameters, buffers,
#: submodules and hooks): never a plain attribute of the user's, and not searched.
_OWN_DICTS = frozenset(vars(torch.nn.Module()))


_SCALARS = frozenset({int, float, bool, str, type(None)})


def _plain_state(
    attributes: list[tuple[torch.nn.Module, type, dict[str, Any]]], kept: set[int]
) -> tuple[list[tuple[torch.Tensor, int | None, torch.Tensor]], list[tuple[Any, Any]]]:
    """In the modules' ``__dict__``s (``attributes``): each tensor a module holds as a plain
    attribute (``self.cache = torch.zeros(3)``, in a list or dict too), not a parameter or
    buffer nor one already ``kept``, with its version counter and a copy of its values, as the
    inputs are kept (a step may write it in place); and each ``torch.Generator`` with its state
    (a step's own draws move it; ``fork_rng`` keeps torch's default generators only)."""
    tensors: dict[int, tuple[torch.Tensor, int | None, torch.Tensor]] = {}
    generators: dict[int, tuple[Any, Any]] = {}
    for _, _, found in attributes:
        for name, value in found.items():
            if name in _OWN_DICTS:
                continue
            if type(value) in _SCALARS or (
                type(value) is tuple and all(type(v) in _SCALARS for v in value)
            ):
                continue  # the common case (Conv2d's kernel_size): nothing to keep
            if type(value) is torch.Generator:  # (isinstance costs a metaclass check)
                generators.setdefault(id(value), (value, value.get_state()))
            elif isinstance(value, (torch.Tensor, list, tuple, dict)):
                for tensor in output_tensors(value):
                    if id(tensor) in kept or id(tensor) in tensors or tensor.is_inference():
                        continue
                    tensors[id(tensor)] = (tensor, version_counter(tensor), tensor.detach().clone())
    return list(tensors.values()), list(generators.values())


def _placement(tensor: torch.Tensor) -> tuple[Any, ...] | None:
    """Where ``tensor``'s elements are: its storage, offset, sizes, strides and dtype (``None``
    for a tensor without a storage of its own to read, such as a wrapper subclass)."""
    try:
        storage = tensor.untyped_storage()
        storage.data_ptr()  # a wrapper subclass's storage object raises here (no data)
    except (RuntimeError, NotImplementedError, TypeError):
        return None
    return storage, tensor.storage_offset(), tensor.size(), tensor.stride(), tensor.dtype


def _placed_back(tensor: torch.Tensor, placement: tuple[Any, ...] | None) -> None:
    """``tensor`` made to look at its elements again where :func:`_placement` found them, after a
    step that re-pointed it (``buffer.set_(other)``, ``buffer.resize_(2)``, ``p.data = p.data.
    double()``); its values are then compared and written back as for any tensor."""
    now = _placement(tensor)
    if placement is None or now is None:
        return
    storage, offset, size, stride, dtype = placement
    if (now[0].data_ptr(), now[0].nbytes(), *now[1:]) == (
        storage.data_ptr(),
        storage.nbytes(),
        offset,
        size,
        stride,
        dtype,
    ):
        return
    if tensor.dtype == dtype:
        tensor.set_(storage, offset, size, stride)
    else:  # .data = a tensor of another dtype: give it one of the old dtype
        tensor.data = torch.empty(0, dtype=dtype, device=tensor.device).set_(
            storage, offset, size, stride
        )


def _attributes_restored(attributes: list[tuple[torch.nn.Module, type, dict[str, Any]]]) -> None:
    """Each module's ``__dict__`` entries the step rebound, added or deleted, put back (by
    identity: an attribute mutated in place, a list appended to, stays as it is).  A module whose
    class the step changed (a lazy module materialised by its first call) is left as it is."""
    for module, cls, found in attributes:
        now = vars(module)
        if type(module) is not cls or (
            len(now) == len(found) and all(now.get(k, _MISSING) is v for k, v in found.items())
        ):
            continue  # nothing rebound: the common case
        for name in [name for name in now if name not in found]:
            del now[name]
        for name, value in found.items():
            if now.get(name, _MISSING) is not value:
                now[name] = value


_MISSING = object()


def output_tensors(value: Any) -> Iterator[torch.Tensor]:
    """Tensors in a model output: a tensor, tuple/list, dict, ``ModelOutput``-like object or
    ``@dataclass`` instance (its fields)."""
    if isinstance(value, torch.Tensor):
        yield value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            yield from output_tensors(getattr(value, field.name, None))
    elif isinstance(value, dict):
        for item in value.values():
            yield from output_tensors(item)
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from output_tensors(item)


def differentiable(
    output: Any, loss_fn: Callable[[Any], torch.Tensor] | None
) -> list[torch.Tensor]:
    """What backward starts from: ``loss_fn(output)``, a ``loss`` entry, or every output tensor
    that requires grad."""
    if loss_fn is not None:
        try:
            loss = loss_fn(output)
        except Exception as error:
            raise RuntimeError(
                f"sw.audit: loss_fn(output) raised {type(error).__name__}: {error} — the model "
                f"returned {type(output).__name__}; call loss_fn(model(*inputs)) directly to debug it"
            ) from error
        if not isinstance(loss, torch.Tensor):
            raise TypeError(f"sw.audit: loss_fn returned {type(loss).__name__}, expected a tensor")
        return [loss]
    if isinstance(output, dict):
        loss = output.get("loss")
    else:  # a dataclass's loss field
        loss = getattr(output, "loss", None) if dataclasses.is_dataclass(output) else None
    if isinstance(loss, torch.Tensor) and loss.requires_grad:
        return [loss]
    found = [t for t in output_tensors(output) if t.requires_grad]
    if not found:
        raise TypeError(
            f"sw.audit: the model returned {type(output).__name__} with no tensor that requires "
            "grad, so there is nothing to run backward from; pass loss_fn=lambda out: ... "
            "returning a tensor, or backward=False"
        )
    return found


def check_devices(model: torch.nn.Module, inputs: tuple[Any, ...]) -> set[torch.device]:
    """The devices of the model's parameters and buffers and of the input tensors; an input on a
    device the model has no tensor on is an error."""
    model_devices = {t.device for t in model_tensors(model)}
    devices = set(model_devices)
    for position, value in enumerate(inputs):
        for tensor in output_tensors(value):
            if model_devices and tensor.device not in model_devices:
                raise LayoutError(
                    f"sw.audit: input {position} is on {tensor.device} but the model's parameters "
                    f"are on {', '.join(sorted(map(str, model_devices)))}; move one of them "
                    "(inputs[i].to(device) or model.to(device)) before auditing"
                )
            devices.add(tensor.device)
    return devices
