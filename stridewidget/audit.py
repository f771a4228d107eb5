"""``python -m stridewidget.audit MODEL --input EXPR [--input EXPR ...] [--kwargs EXPR] [--no-backward] [--html out.html]``.

Audits one step of a model from the terminal and prints :func:`stridewidget.audit`'s tables.
``MODEL`` and each ``--input`` are **your own Python code**, evaluated like ``python -c`` would
run them: ``torch``, ``np`` and ``sw`` are in scope, and any other top-level name is imported
on first use (``torchvision.models.resnet18()``).  Only pass expressions you would run yourself.

    python -m stridewidget.audit "torch.nn.TransformerEncoderLayer(64, 4)" \\
        --input "torch.randn(8, 10, 64).transpose(0, 1)" --html audit.html

``sw.audit`` stays the function: importing this module (``python -m`` does not, doctest
collection does) would make ``stridewidget.audit`` name the module, so the module is callable and
calling it runs the function.
"""

from __future__ import annotations

import argparse
import builtins
import importlib
import importlib.metadata
import re
import sys
import types
from collections.abc import Sequence
from typing import Any

__all__ = ["main"]


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
        message = f"stridewidget.audit: could not evaluate {what} {expression!r}: {error}"
        raise SystemExit(message) from error


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line, audit the model, print the tables (and write the page).

    >>> import contextlib, io
    >>> out = io.StringIO()
    >>> with contextlib.redirect_stdout(out):
    ...     code = main(["torch.nn.Linear(4, 2)", "--input", "torch.randn(3, 4)", "--no-backward"])
    >>> code, out.getvalue().strip()
    (0, 'sw.audit: no copies — the audited step moved no data into new storage')
    """
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
    args = parser.parse_args(argv)

    from .copies.audit.report import audit

    if args.html:
        _check_writable(args.html)
    model = _evaluate(args.model, "the model")
    if not isinstance(model, torch_module()):
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


def torch_module() -> type:
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


class _CallableModule(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from .copies.audit.report import audit

        return audit(*args, **kwargs)


if __name__ == "__main__":
    sys.exit(main())
else:
    sys.modules[__name__].__class__ = _CallableModule
