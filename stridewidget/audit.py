"""``python -m stridewidget.audit MODEL …``: the entry point; the command line is
:func:`stridewidget.cli.audit_main`.

``sw.audit`` stays the function: importing this module (``python -m`` does not, doctest
collection does) would make ``stridewidget.audit`` name the module, so the module is callable and
calling it runs the function.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from .cli import audit_main as main

__all__ = ["main"]


class _CallableModule(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from .copies.audit.report import audit

        return audit(*args, **kwargs)


if __name__ == "__main__":
    sys.exit(main())
else:
    sys.modules[__name__].__class__ = _CallableModule
