"""What a tensor's memory is and how torch tracks it: storage identity, view bases, version
counters, lazily negated views, and a module's buffers put back in place."""

from __future__ import annotations

import sys
from typing import Any

__all__ = [
    "neg_view",
    "own_tensors",
    "restore_buffer",
    "set_version_counter",
    "sparse_parts",
    "storage_id",
    "storage_id_reader",
    "storage_identity",
    "version_counter",
    "view_base",
]


def storage_id(storage: Any) -> int:
    """The identity of a storage's ``StorageImpl``, shared by every tensor viewing it (views,
    ``detach()``, ``view(dtype)``): ``UntypedStorage._cdata``, checked on torch 2.0–2.13, else its
    data pointer (equal for storages at one address); without ``_cdata`` a storage with no memory
    (meta, empty: data pointer 0) raises a clear RuntimeError rather than share one identity.

    >>> import torch
    >>> x = torch.zeros(4)
    >>> storage_id(x.untyped_storage()) == storage_id(x[1:].untyped_storage())
    True
    """
    identity = getattr(storage, "_cdata", None)
    if identity is not None:
        return identity
    pointer = storage.data_ptr()
    if pointer == 0:  # meta and empty storages all sit at 0: no identity without _cdata
        raise RuntimeError(
            "stridewidget: this torch has no UntypedStorage._cdata, and a storage without "
            "memory (meta, empty) has no other identity; storages cannot be told apart"
        )
    return pointer


def storage_id_reader() -> Any:
    """:func:`storage_id` as one C call where torch has ``StorageBase._cdata`` (checked on torch
    2.0–2.13: then ``storage_id`` is that attribute): for code that asks per tensor per op.

    >>> import torch
    >>> s = torch.zeros(2).untyped_storage()
    >>> storage_id_reader()(s) == storage_id(s)
    True
    """
    import operator
    import sys

    base = getattr(sys.modules["torch"]._C, "StorageBase", None)
    if base is not None and "_cdata" in vars(base):
        return operator.attrgetter("_cdata")
    return storage_id


def storage_identity(tensor: Any) -> int | None:
    """An id of the StorageImpl behind ``tensor`` (shared by its views, see :func:`storage_id`,
    whose fallback it shares), ``None`` when it has no storage to tell (sparse, some subclasses).
    Checked on torch 2.13.

    >>> import torch
    >>> x = torch.zeros(4)
    >>> storage_identity(x) == storage_identity(x[1:]), storage_identity(x.to_sparse())
    (True, None)
    """
    try:
        return storage_id(tensor.untyped_storage())
    except (RuntimeError, NotImplementedError, TypeError, AttributeError):
        return None


def neg_view(t: Any) -> Any | None:
    """A lazily negated view of ``t`` (its neg bit set, no copy), or ``None`` where torch has none.

    ``torch._neg_view`` is private (checked on torch 2.0–2.13); it is the only way to rebuild a
    negative view, e.g. a freed ``torch._neg_view(x)`` the widget redraws from its base.

    >>> import torch
    >>> view = neg_view(torch.tensor([1.0, 2.0]))
    >>> view.is_neg(), view.tolist()
    (True, [-1.0, -2.0])
    """
    import torch

    make = getattr(torch, "_neg_view", None)
    if make is None:  # a torch without it: the caller treats the view as not rebuildable
        return None
    return make(t)


def view_base(t: Any) -> Any | None:
    """The tensor ``t`` is a view of (``Tensor._base``, checked on torch 2.0–2.13), ``None`` for
    a tensor that is not a view.  Without ``_base``, ``None``: the widget then follows the view's
    own version counter, which torch shares with its base, so refreshes still come.

    >>> import torch
    >>> x = torch.zeros(4)
    >>> view_base(x[1:]) is x, view_base(x) is None
    (True, True)
    """
    try:
        return t._base
    except AttributeError:
        return None


def sparse_parts(t: Any) -> tuple[Any, ...]:
    """The dense tensors holding a sparse tensor's data (what its copy copies): a COO tensor's
    indices and values (``Tensor._indices`` / ``_values``, torch 1.x to 2.13: unlike
    ``indices()`` / ``values()`` they read an uncoalesced one too; where gone, those of its
    coalesced copy), a compressed one's (CSR, CSC, BSR, BSC) index arrays and values; ``()`` for
    a strided tensor.

    >>> import torch
    >>> s = torch.eye(3).to_sparse()
    >>> sum(part.nbytes for part in sparse_parts(s))   # 3 x 2 int64 indices + 3 float32 values
    60
    """
    import torch

    layout = t.layout
    if layout == torch.strided:
        return ()
    if layout == torch.sparse_coo:
        try:
            return t._indices(), t._values()
        except AttributeError:  # gone: the coalesced copy's, the same for a coalesced tensor
            coalesced = t.coalesce()
            return coalesced.indices(), coalesced.values()
    if layout in (torch.sparse_csr, torch.sparse_bsr):
        return t.crow_indices(), t.col_indices(), t.values()
    if layout in (torch.sparse_csc, torch.sparse_bsc):
        return t.ccol_indices(), t.row_indices(), t.values()
    return ()  # another layout (jagged, mkldnn): counted as its elements


def version_counter(t: Any) -> int | None:
    """torch's in-place version counter of ``t`` (``Tensor._version``, checked on torch
    2.0–2.13; views share their base's), ``None`` where there is none (inference tensors) or
    where torch no longer has it (then the widget sees a write only in the shown cells' bytes,
    and on CUDA not at all).

    >>> import torch
    >>> x = torch.zeros(2)
    >>> before = version_counter(x)
    >>> _ = x.add_(1)
    >>> version_counter(x) - before
    1
    """
    try:
        return t._version
    except (AttributeError, RuntimeError):  # gone / inference tensors track no version
        return None


def set_version_counter(t: Any, version: int) -> bool:
    """Set ``t``'s in-place version counter (shared with its views) back to ``version``, as
    torch's own ``torch._C._autograd._unsafe_set_version_counter`` does for functionalization
    (checked on torch 2.13): for a tensor whose values were given back bit for bit, so that a graph
    saved it before still finds it unchanged.  ``False`` where torch lacks it or refuses.

    >>> import torch
    >>> x = torch.zeros(2)
    >>> _ = x.add_(1)
    >>> set_version_counter(x, 0), version_counter(x)
    (True, 0)
    """
    setter = getattr(_autograd_internals(), "_unsafe_set_version_counter", None)
    if setter is None:
        return False
    try:
        setter((t,), (version,))
    except (RuntimeError, TypeError):  # an inference tensor has no counter
        return False
    return True


def _autograd_internals() -> Any:
    """``torch._C._autograd`` (where torch keeps its autograd internals), or None."""
    torch = sys.modules.get("torch")
    return getattr(getattr(torch, "_C", None), "_autograd", None)


def own_tensors(module: Any) -> tuple[Any, Any]:
    """``module``'s own parameters and buffers, each as ``(name, tensor)`` pairs (not its
    submodules'; a name registered as ``None`` left out): ``Module._parameters`` and
    ``Module._buffers``'s items (checked on torch 2.13 (the floor)), read directly, without the
    generator machinery ``named_parameters(recurse=False)`` runs per module; without those dicts,
    that public iteration.

    >>> import torch
    >>> params, buffers = own_tensors(torch.nn.BatchNorm1d(2))
    >>> [name for name, _ in params], [name for name, _ in buffers]
    (['weight', 'bias'], ['running_mean', 'running_var', 'num_batches_tracked'])
    """
    parameters = getattr(module, "_parameters", None)
    buffers = getattr(module, "_buffers", None)
    if isinstance(parameters, dict) and isinstance(buffers, dict):
        return (
            [(name, t) for name, t in parameters.items() if t is not None],
            [(name, t) for name, t in buffers.items() if t is not None],
        )
    return (
        list(module.named_parameters(recurse=False, remove_duplicate=False)),
        list(module.named_buffers(recurse=False, remove_duplicate=False)),
    )


def restore_buffer(module: Any, name: str, buffer: Any) -> None:
    """Put ``buffer`` back as ``module``'s buffer ``name`` (the very tensor, whatever the module
    assigned there meanwhile), keeping it persistent or not as it was.

    ``Module._buffers[name] = buffer`` (checked on torch 2.13 (the floor)): no hook runs, as when
    the module was built.  Without that dict, the public ``setattr(module, name, buffer)``, which
    re-registers a name that is still a buffer (running torch's buffer-registration hooks) and
    else sets a plain attribute: either way ``getattr(module, name)`` is ``buffer`` again.

    >>> import torch
    >>> norm = torch.nn.BatchNorm1d(2)
    >>> saved = norm.running_mean
    >>> norm.running_mean = torch.ones(2)
    >>> restore_buffer(norm, "running_mean", saved)
    >>> norm.running_mean is saved
    True
    """
    buffers = getattr(module, "_buffers", None)
    if isinstance(buffers, dict):
        buffers[name] = buffer
    else:
        setattr(module, name, buffer)


def restore_parameter(module: Any, name: str, param: Any) -> None:
    """Put ``param`` back as ``module``'s parameter ``name`` (the very tensor, whatever the
    module assigned there meanwhile): ``Module._parameters[name] = param`` (checked on torch
    2.13 (the floor)), else the public ``setattr``.

    >>> import torch
    >>> layer = torch.nn.Linear(2, 2)
    >>> saved = layer.weight
    >>> layer.weight = torch.nn.Parameter(torch.ones(2, 2))
    >>> restore_parameter(layer, "weight", saved)
    >>> layer.weight is saved
    True
    """
    parameters = getattr(module, "_parameters", None)
    if isinstance(parameters, dict):
        parameters[name] = param
    else:
        setattr(module, name, param)
