"""The user's line an FX node came from, read off the stack trace the graph kept."""

from __future__ import annotations

import os
import re
from typing import Any

from ..frames import PACKAGE_DIR, TORCH_DIR, describe_location

__all__ = ["where"]

_FRAME = re.compile(r'File "([^"]+)", line (\d+), in')


def _is_torch(filename: str) -> bool:
    # torch as imported, or as installed (a stack trace may name the other path of a symlink),
    # or relative to torch's parent folder, as torch writes the frames of the nodes its own
    # passes insert (``torch/fx/passes/runtime_assert.py``)
    path = filename.replace(os.sep, "/")
    return (
        filename.startswith(TORCH_DIR)
        or "-packages/torch/" in path
        or (path.startswith("torch/") and not os.path.isabs(filename))
    )


def _torch_relative(filename: str) -> str:
    path = filename.replace(os.sep, "/")
    return path if path.startswith("torch/") else f"torch/{path.rsplit('/torch/', 1)[-1]}"


def where(node: Any) -> str:
    """``file.py:LINE`` of the innermost frame of the node's stack trace that is the user's
    (not torch's, not this package's); for a torch module called directly, torch's own line,
    marked ``(torch)``; ``""`` when the graph kept no trace."""
    trace = node.meta.get("stack_trace") or ""
    frames = [(f, int(line)) for f, line in _FRAME.findall(trace)]
    frames = [(f, line) for f, line in frames if not f.startswith(PACKAGE_DIR)]
    for filename, line in reversed(frames):
        if not _is_torch(filename):
            return describe_location(filename, line)
    if frames:
        filename, line = frames[-1]
        return f"{_torch_relative(filename)}:{line} (torch)"
    return ""
