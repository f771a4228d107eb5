"""Errors raised by stridewidget."""

from __future__ import annotations


class LayoutError(ValueError):
    """A layout that cannot be built, inspected or viewed, with the reason and what to do.

    >>> import stridewidget as sw
    >>> issubclass(sw.LayoutError, ValueError)
    True
    """


def safe_repr(value: object, limit: int = 60) -> str:
    """``repr(value)`` for an error message, cut to ``limit`` characters, and never an error itself:
    a user object whose ``__repr__`` raises is shown by its type, so the intended error survives.

    >>> class Hostile:
    ...     def __repr__(self):
    ...         raise RuntimeError("no repr")
    >>> safe_repr(2.5), safe_repr(Hostile())
    ('2.5', '<Hostile object (its repr failed)>')
    """
    try:
        text = repr(value)
        if not isinstance(text, str):
            raise TypeError("__repr__ returned a non-string")
    except Exception:  # any user __repr__ may fail; the message must not
        return f"<{type(value).__name__} object (its repr failed)>"
    return text if len(text) <= limit else text[: limit - 1] + "…"
