"""The texts the copy tracker and the audit show: byte counts, layouts, call names, op lists."""

from __future__ import annotations

from typing import Any

from ..layout.layout import Layout

__all__ = ["clip", "counted", "format_bytes", "layout_text", "ops_text", "short_call"]


def counted(count: int, word: str = "copy", plural: str = "copies") -> str:
    """``1 copy``, ``3 copies``: a count with its noun in the right number.

    >>> counted(1), counted(0), counted(2, "event", "events")
    ('1 copy', '0 copies', '2 events')
    """
    return f"{count} {word if count == 1 else plural}"


def short_call(call: str) -> str:
    """``Tensor.reshape``, ``F.linear``, ``torch.cat``: the names people write.

    >>> short_call("torch.Tensor.reshape"), short_call("torch.nn.functional.linear")
    ('Tensor.reshape', 'F.linear')
    """
    call = call.removesuffix(".__get__")  # properties: Tensor.T, Tensor.mT
    for long, short in (("torch.Tensor.", "Tensor."), ("torch.nn.functional.", "F.")):
        if call.startswith(long):
            return short + call[len(long) :]
    return call


def ops_text(ops: tuple[str, ...]) -> str:
    """``aten.clone aten._unsafe_view``; runs of one op as ``aten.view×3``.

    >>> ops_text(("aten.clone", "aten.view", "aten.view")), ops_text(())
    ('aten.clone aten.view×2', '(no op)')
    """
    if not ops:
        return "(no op)"
    parts: list[list[Any]] = []
    for op in ops:
        if parts and parts[-1][0] == op:
            parts[-1][1] += 1
        else:
            parts.append([op, 1])
    return " ".join(op if n == 1 else f"{op}×{n}" for op, n in parts)


def clip(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, the last one ``…`` when it was cut.

    >>> clip("aten.clone", 6), clip("aten", 6)
    ('aten.…', 'aten')
    """
    return text if len(text) <= width else text[: width - 1] + "…"


def layout_text(layouts: tuple[Layout | None, ...], compact: bool) -> str:
    """The first two layouts: in full, or compact as ``float32 (4,3):(1,4) +2``.

    >>> from stridewidget import Layout
    >>> layout_text((Layout((4, 3), (1, 4), offset=2, dtype="float32"), None), compact=True)
    'float32 (4,3):(1,4) +2; (no strides)'
    """
    shown = []
    for layout in layouts[:2]:
        if layout is None:
            shown.append("(no strides)")
        elif compact:
            dims = ",".join(map(str, layout.shape))
            steps = ",".join(map(str, layout.strides))
            offset = f" +{layout.offset}" if layout.offset else ""
            shown.append(f"{layout.dtype} ({dims}):({steps}){offset}")
        else:
            shown.append(str(layout))
    if len(layouts) > 2:
        shown.append(f"+{len(layouts) - 2} more")
    return ("; " if compact else "\n").join(shown)


def format_bytes(n: int) -> str:
    """A byte count as people read it: ``48 B``, ``1.5 KiB``, ``3.0 MiB``.

    >>> format_bytes(48), format_bytes(1536), format_bytes(3 * 2**20)
    ('48 B', '1.5 KiB', '3.0 MiB')
    """
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{n} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")
