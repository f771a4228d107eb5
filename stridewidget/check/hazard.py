"""The sanitizer's findings as exceptions and warnings: :class:`LayoutHazard` (a write whose result
depends on memory layout) and :class:`LayoutHazardWarning`."""

from __future__ import annotations

from typing import Any

from ..errors import LayoutError


class LayoutHazard(LayoutError):
    """A write whose result depends on memory layout, found by :func:`stridewidget.sanitize`.

    ``kind`` is ``"internal-overlap"``, ``"partial-overlap"``, ``"out-of-bounds"`` or
    ``"custom-op-layout"``; ``op`` the ATen (or custom) op, ``where`` the user's line,
    ``witness`` a :class:`stridewidget.check.Witness` (two indices, one storage element) or
    ``None``, ``layouts`` the :class:`~stridewidget.Layout` of each tensor involved.  Raised
    before the write runs; in Jupyter it draws those layouts.

    >>> import torch, stridewidget as sw
    >>> with sw.sanitize(on_hazard="collect") as report:
    ...     _ = torch.arange(10.0).as_strided((4, 3), (2, 1)).mul_(2)
    >>> hazard = report.hazards[0]
    >>> isinstance(hazard, sw.LayoutError), hazard.kind, hazard.witness.address
    (True, 'internal-overlap', 2)
    """

    def __init__(
        self,
        message: str,
        *,
        kind: str = "",
        op: str = "",
        where: str = "",
        witness: Any = None,
        layouts: tuple[Any, ...] = (),
    ) -> None:
        super().__init__(message)
        self.kind, self.op, self.where = kind, op, where
        self.witness, self.layouts = witness, layouts

    def __reduce__(self) -> tuple[Any, ...]:
        # pickled whole (a DataLoader worker sends its exception back): the message, then the rest
        return (type(self), (str(self),), self.__dict__)

    def _repr_html_(self) -> str:
        from .picture import hazard_html  # the renderers load only when a picture is asked

        return hazard_html(self)


class LayoutHazardWarning(UserWarning):
    """A :class:`LayoutHazard` reported as a warning: ``sanitize(on_hazard="warn")``, and
    ``"custom-op-layout"`` hazards in every mode (the layout a custom op needs is its own to
    state)."""
