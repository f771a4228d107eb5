"""HTML of an :class:`~stridewidget.copies.audit.report.AuditReport`: a sortable table of copies
whose rows open their source and result layouts (``sw.render_svg``), and the two summary tables.

Every string is escaped; the page is self-contained (inline SVG, CSS and a sort script that only
reorders existing rows by their ``data-sort`` numbers and text) and works offline.  In Jupyter the
same table is the report's ``text/html``; where scripts do not run the table simply stays unsorted.
"""

from __future__ import annotations

import hashlib
import html
from typing import TYPE_CHECKING

from ...limits import MAX_AUDIT_PICTURE_CHARS as MAX_PICTURE_CHARS
from ...limits import MAX_AUDIT_PICTURES as MAX_PICTURES
from ..format import format_bytes, layout_text
from .found import (
    COUNTS_NOTE,
    OPS_SEPARATOR,
    SCALARS_ROW,
    TOP,
    op_names,
    ops_cell,
    row_ops_parts,
)

if TYPE_CHECKING:
    from .found import AuditCopy, Row
    from .report import AuditReport
    from .suggest import Suggestion


_STYLE = """
.swa{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px;color:#222;
background:#fff}
.swa table{border-collapse:collapse;margin:6px 0}
.swa th,.swa td{text-align:left;vertical-align:top;padding:2px 8px;border-bottom:1px solid #ddd}
.swa th{cursor:pointer;background:#f3f3f3}
.swa tr.swa-fwd{background:rgba(230,120,40,0.10)}
.swa tr.swa-bwd{background:rgba(40,110,200,0.10)}
.swa details summary{cursor:pointer}
.swa{max-width:100%;overflow-x:auto}
.swa td{overflow-wrap:anywhere;max-width:40em}
.swa svg{max-width:100%;height:auto}
"""

# Sorting only moves existing <tr> nodes: no HTML is built from strings.
_SORT_SCRIPT = """
(function(){
  const root = document.getElementById(%s);
  if (!root) return;
  for (const table of root.querySelectorAll("table.swa-sortable")) {
    table.querySelectorAll("th").forEach((th, column) => {
      th.addEventListener("click", () => {
        const body = table.tBodies[0];
        const rows = Array.from(body.rows);
        const descending = th.dataset.order !== "desc";
        th.dataset.order = descending ? "desc" : "asc";
        const key = (row) => row.cells[column].dataset.sort ?? row.cells[column].textContent;
        rows.sort((a, b) => {
          const x = key(a), y = key(b);
          const nx = Number(x), ny = Number(y);
          const order = (isNaN(nx) || isNaN(ny)) ? String(x).localeCompare(String(y)) : nx - ny;
          return descending ? -order : order;
        });
        rows.forEach((row) => body.appendChild(row));
      });
    });
  }
})();
"""


def _cell(text: str, sort: int | None = None) -> str:
    attribute = f" data-sort='{sort}'" if sort is not None else ""
    return f"<td{attribute}>{html.escape(text)}</td>"


def _pictures(item: AuditCopy) -> str:
    from ...render import render_svg

    drawn = {}
    if item.source and item.source[0] is not None:
        drawn["source"] = item.source[0]
    if item.result and item.result[0] is not None:
        drawn["result"] = item.result[0]
    if not drawn:
        return ""
    # render_svg escapes every string it draws
    picture = render_svg(**drawn)
    return picture if len(picture) <= MAX_PICTURE_CHARS else ""


def _copies_table(report: AuditReport) -> str:
    head = "".join(
        f"<th>{html.escape(h)}</th>"
        for h in ("#", "phase", "module", "where", "call", "ATen ops", "bytes", "source → result")
    )
    biggest = sorted(range(len(report.copies)), key=lambda i: -report.copies[i].bytes)
    drawn = set(biggest[:MAX_PICTURES])
    rows = []
    scalars = [item for item in report.copies if item.wrapped_scalar]
    for number, item in enumerate(report.copies):
        if item.wrapped_scalar:  # one row for all of them, below
            continue
        layouts = (
            f"{layout_text(item.source, compact=True)} → {layout_text(item.result, compact=True)}"
        )
        picture = _pictures(item) if number in drawn else ""
        if picture:
            layout_cell = (
                f"<td><details><summary>{html.escape(layouts)}</summary>{picture}</details></td>"
            )
        else:
            layout_cell = _cell(layouts)
        tint = "swa-fwd" if item.phase == "forward" else "swa-bwd"
        rows.append(
            f"<tr class='{tint}'>"
            + _cell(str(number), number)
            + _cell(item.phase)
            + _cell(item.module or TOP)
            + _cell(f"{item.where} (in {item.detail})" if item.detail else item.where)
            + _cell(item.call)
            + _cell(ops_cell(op_names(item)))
            + _cell(format_bytes(item.bytes), item.bytes)
            + layout_cell
            + "</tr>"
        )
    if scalars:
        size = sum(item.bytes for item in scalars)
        rows.append(
            "<tr>"
            + _cell("")
            + _cell(", ".join(sorted({item.phase for item in scalars})))
            + _cell("")
            + _cell(f"{len(scalars)} places")
            + _cell(SCALARS_ROW)
            + _cell("aten._to_copy")
            + _cell(format_bytes(size), size)
            + _cell("")
            + "</tr>"
        )
    return (
        f"<table class='swa-sortable'><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _suggestions_section(suggestions: list[Suggestion], unmeasured: list[str]) -> str:
    items = "".join(
        f"<li><pre>{html.escape(str(suggestion))}\nhelps: {suggestion.helps}</pre></li>"
        for suggestion in suggestions
    )
    section = (
        f"<p>Suggestions (each applied to copies and measured):</p><ul>{items}</ul>"
        if items
        else ""
    )
    if unmeasured:
        left = "".join(f"<li>{html.escape(text)}</li>" for text in unmeasured)
        section += (
            f"<p>Not measured: {len(unmeasured)} more candidate fixes, past the page's time "
            "budget (read <code>report.suggestions</code> to measure them all) or breaking the "
            f"model (said so):</p><ul>{left}</ul>"
        )
    return section


def _summary_table(title: str, rows: list[Row]) -> str:
    head = "".join(
        f"<th>{html.escape(h)}</th>" for h in (title, "phase", "count", "bytes", "ATen ops")
    )
    body = "".join(
        "<tr>"
        + _cell(row.key)
        + _cell(row.phase)
        + _cell(str(row.count), row.count)
        + _cell(format_bytes(row.bytes), row.bytes)
        + _cell(OPS_SEPARATOR.join(row_ops_parts(row)))
        + "</tr>"
        for row in rows
    )
    return (
        f"<table class='swa-sortable'><caption>{html.escape(COUNTS_NOTE)}</caption>"
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    )


def report_html(
    report: AuditReport,
    standalone: bool,
    suggestions: list[Suggestion] | None = None,
    unmeasured: list[str] | None = None,
) -> str:
    """The report as an HTML fragment (Jupyter) or a whole page (``to_html``), with
    ``suggestions`` (none when ``None``) and the candidates ``unmeasured`` named."""
    parts = [f"<p><b>{html.escape(report.summary())}</b></p>"]
    if report.copies:
        parts.append(
            "<p>Copies (click a header to sort; ▸ on the biggest draws the source and result):</p>"
        )
        parts.append(_copies_table(report))
        parts.append("<p>By source line:</p>" + _summary_table("line", report.by_line()))
        parts.append("<p>By module:</p>" + _summary_table("module", report.by_module(True)))
    if suggestions is not None:
        parts.append(_suggestions_section(suggestions, unmeasured or []))
    # The sort script finds its tables by this id: derived from the content (same report, same
    # id; reports on one page differ) so that saved notebooks stay byte-stable.
    root_id = "swa-" + hashlib.blake2b("".join(parts).encode(), digest_size=5).hexdigest()
    body = (
        f"<style>{_STYLE}</style><div class='swa' id='{root_id}'>{''.join(parts)}</div>"
        f"<script>{_SORT_SCRIPT % repr(root_id)}</script>"
    )
    if not standalone:
        return body
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>stridewidget audit</title>"
        f"</head><body>{body}</body></html>"
    )
