"""``python -m stridewidget EXPR [--html out.html] [--text] [--wrap N]``: a tensor's layout from the command line.

``EXPR`` is **your own Python code**, evaluated like ``python -c`` would run it (with ``torch``,
``np``/``numpy`` and ``sw`` in scope): only pass expressions you would run yourself.  It may give
one tensor/array, a tuple/list of them, or a dict of name → tensor.

Prints each tensor's layout line (``str(sw.inspect(x))``), its ``explain()`` and the text picture
(storage strip with markers, logical grid); ``--text`` prints only the picture.  ``--html out.html``
also writes a standalone page with the interactive widget — widget state embedded with
``ipywidgets.embed``, the widget bundle, require.js and the widget HTML manager all inlined — that
works offline and without a kernel.  The two third-party scripts come from
``stridewidget/_vendor/`` (``scripts/fetch_static_assets.sh`` puts them there at setup time);
nothing is downloaded when a page is written or opened.
"""

from __future__ import annotations

import argparse
import html
import json
import pathlib
import sys
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["evaluate", "main", "standalone_html"]

VENDOR = pathlib.Path(__file__).parent / "_vendor"
_VENDOR_FILES = ("require.js", "html-manager-embed-amd.js")
# anywidget's AMD bundle registers itself anonymously; the page defines it under its module name.
_ANYWIDGET_DEFINE = 'define(["@jupyter-widgets/base"]'


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
        raise SystemExit(
            f"stridewidget: evaluating EXPR raised {type(error).__name__}: {error}"
        ) from None
    if isinstance(result, Mapping):
        return {str(name): value for name, value in result.items()}
    if isinstance(result, Sequence) and not isinstance(result, (str, bytes)):
        if not result:
            raise SystemExit("stridewidget: EXPR gave an empty sequence: nothing to show")
        return {f"t{i}": value for i, value in enumerate(result)}
    return {"x": result}


def _vendor_script(name: str) -> str:
    path = VENDOR / name
    if not path.is_file():
        raise SystemExit(
            f"stridewidget: {path} is missing, so no offline page can be written. Run "
            "scripts/fetch_static_assets.sh once (needs npm) to fetch the widget HTML manager "
            "and require.js."
        )
    return path.read_text(encoding="utf-8")


def _anywidget_amd() -> str:
    import anywidget

    source = (pathlib.Path(anywidget.__file__).parent / "nbextension" / "index.js").read_text(
        encoding="utf-8"
    )
    if source.count(_ANYWIDGET_DEFINE) != 1:
        raise SystemExit(
            "stridewidget: this anywidget version's AMD bundle has an unexpected shape; "
            "cannot inline it (please report it with `pip show anywidget`)"
        )
    return source.replace(_ANYWIDGET_DEFINE, 'define("anywidget", ["@jupyter-widgets/base"]')


def _script_json(data: Any) -> str:
    """JSON safe inside a ``<script>`` element (no ``</script>`` or ``<!--`` can end it)."""
    return json.dumps(data).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _inline_script(source: str) -> str:
    if "</script" in source.lower():
        raise ValueError("an inlined script contains '</script'; it cannot be inlined safely")
    return f"<script>{source}</script>"


def standalone_html(
    tensors: Mapping[str, Any], title: str = "stridewidget", wrap: int | None = None
) -> str:
    """A self-contained HTML page with the interactive widget for ``tensors`` (no kernel, offline).

    >>> import torch
    >>> page = standalone_html({"x": torch.arange(6.0).reshape(2, 3)}, title="<demo>")
    >>> "application/vnd.jupyter.widget-state+json" in page, "<title>&lt;demo&gt;</title>" in page
    (True, True)
    """
    from ipywidgets.embed import dependency_state, embed_data

    from ._widget import StrideWidget
    from .render import render_html, render_text

    widget = StrideWidget(wrap=wrap, **tensors)
    # drop_defaults=False: anywidget's `_esm`/`_css` are trait defaults and would be left out.
    state = dependency_state([widget], drop_defaults=False)
    data = embed_data(views=[widget], drop_defaults=False, state=state)
    picture = render_text(widget)
    fallback = render_html(widget)  # for browsers with JavaScript off
    widget.close()
    view_tags = "".join(
        f'<script type="application/vnd.jupyter.widget-view+json">{_script_json(view)}</script>'
        for view in data["view_specs"]
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<style>body{font-family:system-ui,sans-serif;margin:16px;color:#222;background:#fff}"
        "pre{background:#f6f6f6;padding:8px;overflow-x:auto}</style>"
        + _inline_script(_vendor_script("require.js"))
        + _inline_script(_vendor_script("html-manager-embed-amd.js"))
        + _inline_script(_anywidget_amd())
        + '<script type="application/vnd.jupyter.widget-state+json">'
        + _script_json(data["manager_state"])
        + "</script></head><body>"
        + f'<h1 style="font-size:18px">{html.escape(title)}</h1>'
        + f'<div class="stridewidget-page">{view_tags}</div>'
        + f"<noscript>{fallback}</noscript>"
        + "<details><summary>as text</summary>"
        + f'<pre class="stridewidget-text">{html.escape(picture)}</pre></details>'
        + "</body></html>\n"
    )


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


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m stridewidget`` and the ``stridewidget`` script.

    >>> main(["torch.zeros(2, 3)[:, 1]"])  # doctest: +ELLIPSIS
    x: float32 (2):(3) +1 · storage 6 · strided
    ...
    0
    """
    args = _parser().parse_args(argv)
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
    if args.wrap is not None and args.wrap < 1:
        raise SystemExit(
            f"stridewidget: --wrap must be a positive number of cells, got {args.wrap}"
        )
    print(render_text(wrap=args.wrap, **tensors))
    if args.html is not None:
        page = standalone_html(tensors, title=f"stridewidget: {args.expr}", wrap=args.wrap)
        args.html.write_text(page, encoding="utf-8")
        print(f"\nwrote {args.html} ({len(page.encode()) / 1e6:.1f} MB, works offline)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
