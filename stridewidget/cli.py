"""Both command lines: ``python -m stridewidget EXPR …`` (a tensor's layout) and
``python -m stridewidget.audit MODEL …`` (every copy one step of a model makes).

``python -m stridewidget EXPR [--html [out.html]] [--text] [--wrap N]``: ``EXPR`` is **your own
Python code**, evaluated like ``python -c`` would run it (with ``torch``, ``np``/``numpy`` and
``sw`` in scope): only pass expressions you would run yourself.  It may give one tensor/array, a
tuple/list of them, or a dict of name → tensor.  It prints each tensor's layout line
(``str(sw.inspect(x))``), its ``explain()`` and the text picture (storage strip with markers,
logical grid); ``--text`` prints only the picture.  ``--html out.html`` also writes a standalone
page with the interactive widget (:func:`stridewidget.notebook.page.widget_page`: the widget's
own bundle, its state and a small host script, all inlined; tens of KB) that works offline and
without a kernel, from any install: nothing is fetched when a page is written or opened.
``--html`` alone (or ``--html -``) prints only the page, to stdout: ``EXPR --html > out.html``.

``python -m stridewidget.audit MODEL --input EXPR [--input EXPR ...] [--kwargs EXPR]
[--no-backward] [--html out.html]`` audits one step of a model from the terminal and prints
:func:`stridewidget.audit`'s tables.  ``MODEL`` and each ``--input`` are **your own Python
code**, evaluated like ``python -c`` would run them: ``torch``, ``np`` and ``sw`` are in scope,
and any other top-level name is imported on first use (``torchvision.models.resnet18()``).
Only pass expressions you would run yourself.

    python -m stridewidget.audit "torch.nn.TransformerEncoderLayer(64, 4)" \\
        --input "torch.randn(8, 10, 64).transpose(0, 1)" --html audit.html

``stridewidget/__main__.py`` and ``stridewidget/audit.py`` are the thin entry points ``python -m``
needs; the ``stridewidget`` script runs :func:`main`.
"""

from __future__ import annotations

import argparse
import builtins
import errno
import html
import importlib
import importlib.metadata
import os
import pathlib
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from .layout.ints import as_wrap

__all__ = ["audit_main", "evaluate", "main", "standalone_html"]


# --- python -m stridewidget EXPR ------------------------------------------------------------------


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


#: ``--html`` with no file (or ``-``): the page goes to stdout
STDOUT = pathlib.Path("-")


def _show_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m stridewidget",
        description=(
            "Show a tensor's memory layout. EXPR is your own Python code, evaluated with\n"
            "torch, np and sw in scope (only pass code you would run yourself)."
        ),
        # raw: argparse would rewrap an example across lines, and a copied one would then fail
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "examples:\n"
            '  python -m stridewidget "torch.arange(12.0).reshape(3, 4).t()" --html t.html\n'
            '  python -m stridewidget "torch.arange(12.0).reshape(3, 4).t()" --html > t.html'
        ),
    )
    parser.add_argument(
        "expr", metavar="EXPR", help="expression giving a tensor/array (or several)"
    )
    parser.add_argument(
        "--html",
        metavar="OUT.html",
        type=pathlib.Path,
        nargs="?",
        const=STDOUT,
        help="write a standalone interactive page to OUT.html; with no OUT.html (or -), print "
        "only the page, to stdout",
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
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:1] == ["audit"]:  # python -m stridewidget audit ...: the audit is its own module
        raise SystemExit(
            "stridewidget: the audit is its own command: python -m stridewidget.audit MODEL "
            "--input EXPR ... (python -m stridewidget EXPR shows a tensor's layout)"
        )
    args = _show_parser().parse_args(argv)
    # every option is checked before EXPR runs and anything is printed
    try:
        as_wrap(args.wrap)
    except ValueError as error:
        raise SystemExit(f"stridewidget: --{error}") from None
    to_stdout = args.html == STDOUT
    if args.html is not None and not to_stdout:
        _check_html_target(args.html)
    import stridewidget as sw

    from .render import render_text

    tensors = evaluate(args.expr)
    try:
        layouts = {name: sw.inspect(value) for name, value in tensors.items()}
    except (sw.LayoutError, TypeError) as error:
        raise SystemExit(f"stridewidget: {error}") from None
    if to_stdout:  # stdout is the page alone: `... --html > page.html` is a valid page
        sys.stdout.write(
            standalone_html(tensors, title=f"stridewidget: {args.expr}", wrap=args.wrap)
        )
        return 0
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


# --- python -m stridewidget.audit MODEL ----------------------------------------------------------


class _ImportOnUse(dict):
    """Evaluation namespace that imports an unknown top-level name as a module, else fails as
    Python would."""

    def __missing__(self, name: str) -> Any:
        if hasattr(builtins, name):  # dict(...), len(...): a lookup that fails here ends there
            return getattr(builtins, name)
        try:
            module = importlib.import_module(name)
        except ImportError:
            raise NameError(f"name {name!r} is not defined") from None
        except RuntimeError as error:
            raise SystemExit(_import_failure(name, error)) from error
        self[name] = module
        return module


def _import_failure(name: str, error: RuntimeError) -> str:
    """One line for a package whose import fails inside torch: a compiled extension built for
    another torch (PyPI's torchvision wheel is built for CUDA torch) cannot register its
    operators, and its import fails with ``operator torchvision::nms does not exist``.

    >>> line = _import_failure("torchvision", RuntimeError("operator torchvision::nms does not exist"))
    >>> "torchvision" in line and "built for another torch" in line and "install" in line
    True
    >>> len(line.splitlines())
    1
    >>> line = _import_failure("transformers", RuntimeError("operator torchvision::nms does not exist"))
    >>> "transformers imports torchvision" in line and "the installed torchvision" in line
    True
    """
    import torch

    if "does not exist" not in str(error) or "operator" not in str(error):
        return f"stridewidget.audit: importing {name} failed: {type(error).__name__}: {error}"
    # the operator's namespace names the package that registers it: the one at fault, which
    # may be one the imported package imports (transformers and timm import torchvision)
    at_fault = re.search(r"operator (\w+)::", str(error))
    culprit = at_fault.group(1) if at_fault else name
    name = name or culprit
    via = f"{name} imports {culprit}, and " if culprit != name else ""
    imported, name = name, culprit
    try:
        version = importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        version = "(version unknown)"
    source = (
        f"the CPU index: pip install {name} --index-url https://download.pytorch.org/whl/cpu"
        if "+cpu" in torch.__version__
        else "the index torch came from"
    )
    return (
        f"stridewidget.audit: importing {imported} failed ({error}): {via}the installed {name} "
        f"{version} was built for another torch than this one ({torch.__version__}); install "
        f"the {name} release made for torch {torch.__version__} from the same source as torch "
        f"({source}), or audit a model that does not need {name}"
    )


def _evaluate(expression: str, what: str) -> Any:
    import numpy
    import torch

    import stridewidget

    namespace = _ImportOnUse(torch=torch, np=numpy, numpy=numpy, sw=stridewidget)
    try:
        return eval(expression, {"__builtins__": __builtins__}, namespace)
    except Exception as error:
        missing = _missing_operator(error)
        if missing is not None:  # a lazy import (transformers.BertModel) that failed in torch
            imported = [name for name, value in namespace.items() if name not in _GIVEN]
            raise SystemExit(_import_failure(imported[-1] if imported else "", missing)) from error
        message = f"stridewidget.audit: could not evaluate {what} {expression!r}: {error}"
        raise SystemExit(message) from error


#: The names the audit's evaluation namespace starts with.
_GIVEN = frozenset({"torch", "np", "numpy", "sw"})


def _missing_operator(error: BaseException) -> RuntimeError | None:
    """The ``operator X::y does not exist`` error in ``error``'s cause chain, if any: what a
    package that imports lazily (``transformers``) hides behind its own ``ImportError``.

    >>> try:
    ...     try:
    ...         raise RuntimeError("operator torchvision::nms does not exist")
    ...     except RuntimeError as cause:
    ...         raise ModuleNotFoundError("Could not import module 'BertModel'") from cause
    ... except ImportError as error:
    ...     str(_missing_operator(error))
    'operator torchvision::nms does not exist'
    """
    seen: set[int] = set()
    link: BaseException | None = error
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        if isinstance(link, RuntimeError) and re.search(
            r"operator \w+::\w+ does not exist", str(link)
        ):
            return link
        link = link.__cause__ or link.__context__
    return None


def _audit_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m stridewidget.audit",
        description="Every copy one step of a model makes: by source line and by module.",
    )
    parser.add_argument(
        "model", help='Python expression giving the model, e.g. "torch.nn.GRU(8, 8)"'
    )
    parser.add_argument(
        "--input",
        action="append",
        default=[],
        help='expression giving one example input (repeat for several), e.g. "torch.randn(2, 8)"',
    )
    parser.add_argument(
        "--kwargs",
        metavar="EXPR",
        help='expression giving keyword inputs, e.g. "dict(input_ids=torch.randint(0, 9, (1, 4)))"',
    )
    parser.add_argument("--no-backward", action="store_true", help="audit the forward only")
    parser.add_argument("--html", metavar="PATH", help="also write a standalone HTML report")
    parser.add_argument("--rows", type=int, default=20, help="rows per table (default 20)")
    return parser


def audit_main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line, audit the model, print the tables (and write the page).

    >>> import contextlib, io
    >>> out = io.StringIO()
    >>> with contextlib.redirect_stdout(out):
    ...     code = audit_main(["torch.nn.Linear(4, 2)", "--input", "torch.randn(3, 4)", "--no-backward"])
    >>> code, out.getvalue().strip()
    (0, 'sw.audit: no copies — the audited step moved no data into new storage')
    """
    args = _audit_parser().parse_args(argv)

    from .copies.audit.report import audit

    if args.html:
        _check_writable(args.html)
    model = _evaluate(args.model, "the model")
    if not isinstance(model, _torch_module()):
        raise SystemExit(
            f"stridewidget.audit: the model expression {args.model!r} gave a "
            f"{type(model).__name__}, not a torch.nn.Module"
        )
    inputs = [_evaluate(text, "the input") for text in args.input]
    kwargs = _evaluate(args.kwargs, "--kwargs") if args.kwargs else None
    if kwargs is not None and not isinstance(kwargs, dict):
        raise SystemExit(
            f"stridewidget.audit: --kwargs {args.kwargs!r} gave a {type(kwargs).__name__}, "
            'not a dict; write it as "dict(name=...)"'
        )
    try:
        report = audit(model, *inputs, backward=not args.no_backward, model_kwargs=kwargs)
    except (TypeError, ValueError, RuntimeError) as error:
        hint = "" if inputs or kwargs else " (no --input was given: pass one per model input)"
        raise SystemExit(f"stridewidget.audit: {error}{hint}".replace("\n", " ")) from None
    print(report.to_text(max_rows=args.rows))
    if args.html:
        report.to_html(args.html)
        print(f"wrote {args.html}")
    return 0


def _torch_module() -> type:
    import torch

    return torch.nn.Module


def _check_writable(path: str) -> None:
    """A path the report can be written to, checked before the (long) audit runs."""
    try:
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as error:
        raise SystemExit(
            f"stridewidget.audit: cannot write the HTML report to {path!r}: {error.strerror}"
        ) from None
