"""Pictures of hazards and fuzz findings in Jupyter: the project's static HTML renderer
(:func:`stridewidget.render_html`) drawing the layouts involved, under one line of words."""

from __future__ import annotations

import html
from typing import Any

from ..limits import MAX_HAZARD_PICTURES as _MAX_PICTURES
from ..render import render_html

__all__ = ["finding_html", "hazard_html", "report_html"]

#: What each of a hazard's layouts is called in its picture, by the hazard's kind.
_NAMES = {
    "partial-overlap": ("written", "input"),
}


def _picture(layouts: tuple[Any, ...], names: tuple[str, ...]) -> str:
    drawn = {
        names[i] if i < len(names) else f"tensor{i}": layout
        for i, layout in enumerate(layouts)
        if layout is not None
    }
    return render_html(**drawn) if drawn else ""


def hazard_html(hazard: Any) -> str:
    """One hazard: its message, then the written tensor's layout (and the input's) drawn."""
    names = _NAMES.get(hazard.kind, ("written",))
    return (
        f"<div><p><b>{html.escape(hazard.kind)}</b> in <code>{html.escape(hazard.op)}</code> "
        f"at <code>{html.escape(hazard.where)}</code></p>"
        f"<p>{html.escape(str(hazard))}</p>{_picture(hazard.layouts, names)}</div>"
    )


def report_html(report: Any) -> str:
    """A sanitize report: its summary line, then each hazard (the first few drawn)."""
    if report.ok:
        return "<p>SanitizeReport: no layout hazard</p>"
    parts = [f"<p><b>SanitizeReport: {len(report.hazards)} layout hazard(s)</b></p>"]
    for i, hazard in enumerate(report.hazards):
        if i < _MAX_PICTURES:
            parts.append(hazard_html(hazard))
        else:
            parts.append(f"<p>{html.escape(hazard.kind)} in {html.escape(hazard.op)}</p>")
    return "<div>" + "".join(parts) + "</div>"


def finding_html(finding: Any) -> str:
    """One fuzz finding: what differed, and the input's layout that made it differ."""
    return (
        f"<div><p><b>{html.escape(finding.kind)}</b> with input "
        f"<code>{html.escape(str(finding.input))}</code> as <code>{html.escape(finding.name)}"
        f"</code>: {html.escape(finding.detail)}</p>{_picture((finding.layout,), ('input',))}</div>"
    )
