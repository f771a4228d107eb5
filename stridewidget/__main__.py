"""``python -m stridewidget EXPR [--html out.html] [--text] [--wrap N]``: a tensor's layout from the command line.

``EXPR`` is **your own Python code**, evaluated like ``python -c`` would run it (with ``torch``,
``np``/``numpy`` and ``sw`` in scope): only pass expressions you would run yourself.  It may give
one tensor/array, a tuple/list of them, or a dict of name → tensor.

Prints each tensor's layout line (``str(sw.inspect(x))``), its ``explain()`` and the text picture
(storage strip with markers, logical grid); ``--text`` prints only the picture.  ``--html out.html``
also writes a standalone page with the interactive widget (:func:`stridewidget.notebook.page.widget_page`:
the widget's own bundle, its state and a small host script, all inlined; tens of KB) that works
offline and without a kernel, from any install: nothing is fetched when a page is written or opened.
"""

from __future__ import annotations

import argparse
import errno
import html
import os
import pathlib
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from .layout.ints import as_wrap

__all__ = ["evaluate", "main", "standalone_html"]


def evaluate(expression: str) -> dict[str, Any]:
    """Evaluate the user's expression and name its tensors (``x`` for one, ``t0``... for several).

    >>> sorted(evaluate("{'a': torch.zeros(2), 'b': np.ones(3)}"))
    ['a', 'b']
    >>> list(evaluate("torch.arange(4), torch.arange(4).flip(0)"))
    ['t0', 't1']
    """
    import numpy
    import torch

    import stridewidget

    scope = {"torch": torch, "np": numpy, "numpy": numpy, "sw": stridewidget}
    try:
        code = compile(expression, "<command line>", "eval")
    except SyntaxError as error:
        raise SystemExit(f"stridewidget: EXPR is not a Python expression: {error.msg}") from None
    try:
        result = eval(code, scope)  # the user's own command-line code, see the module docstring
    except Exception as error:  # the user's code failed: say so in one line, not our traceback
        try:
            reason = str(error)
        except Exception:  # the user's exception cannot even say what it is
            reason = "(its message could not be shown)"
        raise SystemExit(
            f"stridewidget: evaluating EXPR raised {type(error).__name__}: {reason}"
        ) from None
    if isinstance(result, Mapping):
        if not result:
            raise SystemExit("stridewidget: EXPR gave an empty dict: nothing to show")
        return {str(name): value for name, value in result.items()}
    if isinstance(result, Sequence) and not isinstance(result, (str, bytes)):
        if not result:
            raise SystemExit("stridewidget: EXPR gave an empty sequence: nothing to show")
        return {f"t{i}": value for i, value in enumerate(result)}
    return {"x": result}


def standalone_html(
    tensors: Mapping[str, Any], title: str = "stridewidget", wrap: int | None = None
) -> str:
    """A self-contained HTML page with the interactive widget for ``tensors`` (no kernel, offline).

    >>> import torch
    >>> page = standalone_html({"x": torch.arange(6.0).reshape(2, 3)}, title="<demo>")
    >>> "application/vnd.stridewidget.view+json" in page, "<title>&lt;demo&gt;</title>" in page
    (True, True)
    """
    from .notebook.page import widget_page
    from .notebook.widget import StrideWidget
    from .render import render_html, render_text

    widget = StrideWidget(tensors, wrap=wrap)  # one mapping: a tensor may be named "wrap"
    picture = render_text(widget)
    fallback = render_html(widget)  # for browsers with JavaScript off
    try:
        return widget_page(
            widget,
            title=title,
            before=f'<h1 style="font-size:18px">{html.escape(title)}</h1>',
            after=(
                f"<noscript>{fallback}</noscript>"
                "<details><summary>as text</summary>"
                f'<pre class="stridewidget-text">{html.escape(picture)}</pre></details>'
            ),
        )
    finally:
        widget.close()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m stridewidget",
        description=(
            "Show a tensor's memory layout. EXPR is your own Python code, evaluated with torch, "
            "np and sw in scope (only pass code you would run yourself)."
        ),
        epilog='example: python -m stridewidget "torch.arange(12.0).reshape(3, 4).t()" --html t.html',
    )
    parser.add_argument(
        "expr", metavar="EXPR", help="expression giving a tensor/array (or several)"
    )
    parser.add_argument(
        "--html", metavar="OUT.html", type=pathlib.Path, help="write a standalone interactive page"
    )
    parser.add_argument("--text", action="store_true", help="print only the text picture")
    parser.add_argument(
        "--wrap", metavar="N", type=int, help="storage cells per row (default: automatic)"
    )
    return parser


def _check_html_target(path: pathlib.Path) -> None:
    """Refuse a ``--html`` path that cannot be a file (a folder, or in a missing folder) up
    front; what only writing can tell (permissions) is reported when the page is written."""
    problem = None
    if path.is_dir():
        problem = errno.EISDIR
    elif not path.parent.is_dir():
        problem = errno.ENOENT
    if problem is not None:
        raise SystemExit(f"stridewidget: cannot write --html {path}: {os.strerror(problem)}")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m stridewidget`` and the ``stridewidget`` script.

    >>> main(["torch.zeros(2, 3)[:, 1]"])  # doctest: +ELLIPSIS
    x: float32 (2):(3) +1 · storage 6 · strided
    ...
    0
    """
    args = _parser().parse_args(argv)
    # every option is checked before EXPR runs and anything is printed
    try:
        as_wrap(args.wrap)
    except ValueError as error:
        raise SystemExit(f"stridewidget: --{error}") from None
    if args.html is not None:
        _check_html_target(args.html)
    import stridewidget as sw

    from .render import render_text

    tensors = evaluate(args.expr)
    try:
        layouts = {name: sw.inspect(value) for name, value in tensors.items()}
    except (sw.LayoutError, TypeError) as error:
        raise SystemExit(f"stridewidget: {error}") from None
    if not args.text:
        for name, layout in layouts.items():
            print(f"{name}: {layout}")
            print("  " + layout.explain().replace("\n", "\n  "))
        print()
    print(render_text(tensors, wrap=args.wrap))
    if args.html is not None:
        page = standalone_html(tensors, title=f"stridewidget: {args.expr}", wrap=args.wrap)
        try:
            args.html.write_text(page, encoding="utf-8")
        except OSError as error:  # missing folder, a folder, no permission: one line, no traceback
            reason = error.strerror or type(error).__name__
            raise SystemExit(f"stridewidget: cannot write --html {args.html}: {reason}") from None
        print(f"\nwrote {args.html} ({len(page.encode()) / 1e6:.1f} MB, works offline)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
