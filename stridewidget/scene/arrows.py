"""The stride arrows of a scene: one per distinct stride of a tensor's dims of size > 1, from its
first element to its neighbour along those dims, each in its own lane above the storage strip.
"""

from __future__ import annotations

from typing import Any

from ..layout.layout import Layout

__all__ = ["stride_arrows"]


def stride_arrows(layout: Layout) -> list[dict[str, Any]]:
    """One arrow per distinct stride of the dims of size > 1, from the first element to its
    neighbour along those dims; each gets its own lane above the storage strip.

    >>> from stridewidget import Layout
    >>> [(a["label"], a["lane"]) for a in stride_arrows(Layout((3, 4, 2), (0, 1, 1)))]
    [('d0 ×0', 0), ('d1,d2 +1', 1)]
    """
    if layout.numel == 0:
        return []
    origin = (0,) * layout.ndim
    start = layout.address(origin)
    by_stride: dict[int, list[int]] = {}
    for dim, (n, stride) in enumerate(zip(layout.shape, layout.strides)):
        if n > 1:
            by_stride.setdefault(stride, []).append(dim)
    # Loops first (they sit on their cell), then arcs from short to long: nested arcs never cross.
    ordered = sorted(by_stride.items(), key=lambda item: (item[0] != 0, abs(item[0]), item[1][0]))
    arrows = []
    for lane, (stride, dims) in enumerate(ordered):
        dim = dims[0]
        neighbour = tuple(1 if d == dim else 0 for d in range(layout.ndim))
        names = ",".join(f"d{d}" for d in dims)
        step = "×0" if stride == 0 else (f"+{stride}" if stride > 0 else f"−{-stride}")
        arrows.append(
            {
                "dims": dims,
                "dim": dim,
                "stride": stride,
                "byte_stride": layout.byte_strides[dim],
                "from": start,
                "to": layout.address(neighbour),
                "from_index": list(origin),
                "to_index": list(neighbour),
                "label": f"{names} {step}",
                "lane": lane,
            }
        )
    arrows.sort(key=lambda arrow: arrow["dim"])
    return arrows
