"""``python -m stridewidget EXPR …``: the entry point; the command line is :func:`stridewidget.cli.main`."""

from __future__ import annotations

import sys

from .cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
