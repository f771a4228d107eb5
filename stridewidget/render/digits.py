"""Fewer digits: a value too wide for its cell is printed as its library would print it with a
lower precision (``torch.set_printoptions(precision=p)``), never replaced by a colour first.

Every number in a text keeps its form (fixed ``0.5000``, scientific ``1.2500e+03``, the parts of a
complex ``1.0000+2.5000j``); only the digits after the point go, the same count for every value
of one tensor (one format per tensor, as ``print`` gives).  The hover line keeps all the digits.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["fewer_digits", "has_digits", "most_digits"]

# a decimal number as torch and NumPy print one: sign, digits, point, digits, exponent
_NUMBER = re.compile(r"(?<![\w.])([-+]?)(\d+)\.(\d+)(e[-+]\d+)?")


def _with_digits(text: str, digits: int) -> str:
    def shorter(match: re.Match) -> str:
        sign, whole, fraction, exponent = match.groups()
        if len(fraction) <= digits:
            return match.group(0)
        value = float(f"{whole}.{fraction}{exponent or ''}")
        body = f"{value:.{digits}e}" if exponent else f"{value:.{digits}f}"
        return sign + body

    return _NUMBER.sub(shorter, text)


def most_digits(texts: Sequence[str | None]) -> int:
    """The most digits after the point any number in ``texts`` has.

    >>> most_digits(["0.5000", None, "1.25e+03", "nan"])
    4
    """
    return max(
        (len(m.group(3)) for t in texts if t is not None for m in _NUMBER.finditer(t)), default=0
    )


def fewer_digits(
    texts: Sequence[str | None], fits: Callable[[str], bool], at_most: int | None = None
) -> tuple[list[str | None], int | None]:
    """``texts`` with as many digits after the point as lets every one of them ``fit`` (at least
    one digit), and that count; ``None`` when they fit as they are or nothing shorter does.
    ``at_most`` caps the digits (a picture too tall for its budget asks for fewer).

    >>> fewer_digits(["5.0000+2.5000j", "-1.0000-0.5000j"], lambda t: len(t) <= 12)
    (['5.00+2.50j', '-1.00-0.50j'], 2)
    >>> fewer_digits(["-1.1258e+00", "8.9182e-04"], lambda t: len(t) <= 9)
    (['-1.13e+00', '8.92e-04'], 2)
    >>> fewer_digits(["0.5000", "nan", "inf"], lambda t: len(t) <= 6)
    (['0.5000', 'nan', 'inf'], None)
    >>> fewer_digits(["1234567.5"], lambda t: len(t) <= 3)
    (['1234567.5'], None)
    >>> fewer_digits(["-1.1258e+00", "8.9182e-04"], lambda t: True, at_most=1)
    (['-1.1e+00', '8.9e-04'], 1)
    """
    known = [t for t in texts if t is not None]  # None: a value the scene could not read
    fit = all(fits(t) for t in known)
    if fit and at_most is None:  # the commonest: no digit counted
        return list(texts), None
    most = most_digits(known)
    capped = at_most is not None and 0 < at_most < most
    if fit and not capped:
        return list(texts), None
    top = min(most - 1, at_most) if at_most is not None else most - 1
    for digits in range(max(top, 0), 0, -1):
        shorter = [None if t is None else _with_digits(t, digits) for t in texts]
        if all(fits(t) for t in shorter if t is not None):
            return shorter, digits
    return list(texts), None


def has_digits(scene: Mapping[str, Any]) -> bool:
    """Does a value of ``scene`` show more than one digit after the point (the height ladder's
    first step: fewer digits)?

    >>> import torch
    >>> from stridewidget.scene.build import build_scene
    >>> has_digits(build_scene({"x": torch.tensor([0.25, 1.0])}))
    True
    >>> has_digits(build_scene({"x": torch.arange(3.0)}))
    False
    """
    storages = scene.get("storages", [])
    return max((most_digits(s["cells"]["text"] or []) for s in storages), default=0) > 1
