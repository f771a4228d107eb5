"""Which stack frame is the user's, and how to name its line.

The copy tracker, the audit, the sanitizer, ``sw.graph`` and the widget all point at "the user's
line": the innermost frame outside torch and this package.  Decided from file names only (a prefix
test), so no code object or frame is ever kept.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from types import FrameType

#: torch's own source files (a frame there is never the user's); found without importing torch,
#: so a NumPy-only widget does not load it.
TORCH_DIR = os.path.dirname(importlib.util.find_spec("torch").origin) + os.sep
#: this package's own frames (the tracker's, the audit's wrapper around each module's forward).
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def package_caller() -> FrameType | None:
    """The innermost frame outside this package: the user's code that called us.

    >>> package_caller().f_code.co_filename.startswith(PACKAGE_DIR)
    False
    """
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(PACKAGE_DIR):
        frame = frame.f_back
    return frame


def user_line() -> tuple[str, int]:
    """File and line of the innermost frame outside torch and this package: the user's line.

    Decided from the file name (a prefix test, its verdict kept per file name in
    :data:`_LIBRARY_FILES`), so no code object is ever kept: a cache keyed by code objects would
    hold every function the user ever ran in a block.  The copy tracker calls this once per call,
    through a dozen frames of torch: one dict lookup per frame, not two prefix tests.
    """
    frame = sys._getframe(2)
    library = _LIBRARY_FILES
    while frame is not None:
        filename = frame.f_code.co_filename
        ours = library.get(filename)
        if ours is None:
            ours = library[filename] = filename.startswith((TORCH_DIR, PACKAGE_DIR))
        if not ours:
            return filename, frame.f_lineno
        frame = frame.f_back
    return "<unknown>", 0


#: ``co_flags`` of code whose frame can be resumed by another caller (its ``f_back`` changes).
_RESUMABLE = 0x20 | 0x80 | 0x200  # CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR


def user_line_cached(cache: list) -> tuple[str, int]:
    """:func:`user_line` for a caller that asks once per call in a block: ``cache`` (the caller's
    ``[frame, filename, line]``, cleared when its block ends) keeps the last walk's first frame
    when it was a library frame.  While that frame object is the caller's again, it is the same
    running function (the cache holds it, so no other frame can take its place), its callers
    are suspended in their calls, and the user's line above it is the one found before: an
    AdamW step's dozens of calls from one ``_single_tensor_adam`` frame, a backward's ops from
    one ``backward`` frame, are found with one identity test instead of a dozen frames' walk.
    A walk that meets that frame above its start (a call from a helper it called) stops there,
    and the kept frame stays: the next call from it is found at once again.

    A frame of this package (an op mode's handler recording an op no user-level call accounts
    for, a recorder's ``add``) is never kept: it returns with its one call, and a returned frame
    kept alive keeps its locals (the op's arguments and result) and its callers' frames with
    theirs.  An op's result held so would change the step: ``AccumulateGrad`` takes a gradient
    into ``.grad`` without a copy only when nothing else holds it (issue #37: ``sw.audit``'s
    backward inside ``sw.track_copies()`` copied each parameter's gradient).

    >>> cache = [None, "", 0]
    >>> def add():  # a recorder's add, called by ...
    ...     return user_line_cached(cache)
    >>> def handler():  # ... a tracker's handler, a frame of this package
    ...     return add()
    >>> handler.__code__ = handler.__code__.replace(co_filename=PACKAGE_DIR + "handler.py")
    >>> handler()[1] > 0, cache[0] is None
    (True, True)
    """
    frame = sys._getframe(2)
    kept = cache[0]
    if frame is kept:
        return cache[1], cache[2]
    start = frame
    library = _LIBRARY_FILES
    while frame is not None:
        if frame is kept:  # a callee of the kept frame (``_get_value`` in an AdamW step): its line
            return cache[1], cache[2]
        filename = frame.f_code.co_filename
        ours = library.get(filename)
        if ours is None:
            ours = library[filename] = filename.startswith((TORCH_DIR, PACKAGE_DIR))
        if not ours:
            line = frame.f_lineno
            if (
                frame is not start
                and not start.f_code.co_flags & _RESUMABLE
                and not start.f_code.co_filename.startswith(PACKAGE_DIR)
            ):
                cache[0], cache[1], cache[2] = start, filename, line
            return filename, line
        frame = frame.f_back
    return "<unknown>", 0


#: file name -> is it torch's or this package's (a frame there is never the user's line); one
#: entry per source file seen, strings only.
_LIBRARY_FILES: dict[str, bool] = {}


IPYTHON7_CELL = re.compile(r"<ipython-input-(\d+)-[0-9a-f]+>")


def describe_location(filename: str, line: int) -> str:
    """``In[3], line 2`` for a notebook cell, ``path/to/file.py:12`` otherwise.

    >>> describe_location("/elsewhere/train.py", 12)
    '/elsewhere/train.py:12'
    """
    ipython_module = sys.modules.get("IPython")
    shell = ipython_module.get_ipython() if ipython_module is not None else None
    if shell is not None:
        try:
            named = shell.compile.format_code_name(filename)
        except AttributeError:  # IPython < 8 names cells `<ipython-input-N-hash>` instead
            cell = IPYTHON7_CELL.fullmatch(filename)
            named = (filename, f"In[{cell[1]}]") if cell else None
        if named is not None:
            return f"{named[1]}, line {line}"
    try:
        relative = os.path.relpath(filename)
    except ValueError:  # another drive on Windows
        relative = filename
    return f"{filename if relative.startswith('..') else relative}:{line}"
