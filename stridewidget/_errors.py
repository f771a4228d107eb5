"""Errors raised by stridewidget."""

from __future__ import annotations


class LayoutError(ValueError):
    """A layout that cannot be built, inspected or viewed, with the reason and what to do.

    >>> import stridewidget as sw
    >>> issubclass(sw.LayoutError, ValueError)
    True
    """
