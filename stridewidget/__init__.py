"""stridewidget: see and check a tensor's real memory layout.

>>> import torch, stridewidget as sw
>>> print(sw.inspect(torch.arange(12).reshape(3, 4).t()))
int64 (4,3):(1,4) +0 · storage 12 · F-contiguous
"""

from __future__ import annotations

import importlib
from typing import Any

from .adapters.as_strided import OverlapWarning, as_strided
from .adapters.inspect import inspect, overlap, same_storage
from .errors import LayoutError
from .layout.layout import Layout

__version__ = "0.1.0"

# Heavier parts (widget, renderers, tracker, tricks) load on first use, so that
# `import stridewidget` stays cheap and never imports IPython or matplotlib.
_LAZY = {
    "LayoutHazard": ".check.hazard",
    "LayoutHazardWarning": ".check.hazard",
    "StrideWidget": ".notebook.widget",
    "show": ".notebook.widget",
    "render_svg": ".render",
    "render_html": ".render",
    "render_text": ".render",
    "plot": ".render",
    "enable": ".notebook.display",
    "disable": ".notebook.display",
    "load_ipython_extension": ".notebook.display",
    "unload_ipython_extension": ".notebook.display",
    "track_copies": ".copies.tracker",
    "CopyLog": ".copies.log",
    "audit": ".copies.audit.report",
    "playground": ".notebook.playground",
    "tricks": ".tricks",
    "sanitize": ".check",
    "fuzz_layouts": ".check",
    "graph": ".graph",
}

__all__ = [
    "Layout",
    "LayoutError",
    "OverlapWarning",
    "__version__",
    "as_strided",
    "inspect",
    "overlap",
    "same_storage",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'stridewidget' has no attribute {name!r}")
    mod = importlib.import_module(module, __name__)
    value = mod if name == module.lstrip(".") else getattr(mod, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
