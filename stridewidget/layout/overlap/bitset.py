"""Small totals: every reachable sum at once, as the bits of one integer.

Problem.  ``sum(c_i * x_i) == t`` with ``0 <= x_i <= u_i`` (positive ``c_i``), asked only for
*whether* it has a solution (``sw.overlap``'s yes or no), when ``t`` is small: views of one
modest tensor whose strides do not divide each other (``x.unfold(0, 4, 3)`` against ``x[1::2]``).
The portfolio (:mod:`.portfolio`) decides these too, but its set-up alone costs several times what
NumPy's ``np.shares_memory`` spends on the whole question.

Method.  Bit ``s`` of an integer says "the sum ``s`` is reachable".  Starting from ``1`` (the empty
sum), a variable of coefficient ``c`` and bound ``u`` is split into the chunks ``1, 2, 4, ...`` and
a remainder, whose subset sums are exactly ``0..u`` (binary splitting of a bounded knapsack), and
each chunk ``k`` adds ``sums << c*k``.  Bits above ``t`` are cut off after each shift.  The
variable with the most chunks is not shifted in: the bits ``t - c*x`` for all its values are tested
at once, as one mask.  :func:`.reduce.ranges_overlap` asks this for three or more coefficients
(fewer are closed forms).  Two exact cuts first: a value ``x_i > t // c_i`` overshoots on its own, so the bound drops to it; and
``x_i -> u_i - x_i`` turns the target ``t`` into ``reach - t``, so the smaller of the two is asked.

Cost.  One shift, ``and`` and ``or`` of an integer of at most ``t`` bits per chunk: about
``sum(log2(u_i + 1))`` chunks of about 150 ns plus 2 ns per 64-bit word each.
:func:`_sums_reach` declines (``None``) when that estimate passes ``_MAX_WORK`` (about 4 µs),
leaving the problem to the other solvers: it is for small problems only.

Failure modes.  None: exact on every input it accepts; it declines the rest before any work.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

#: What one chunk costs besides the length of its integer, in 64-bit words: about 150 ns of
#: CPython (the shift, ``and``, ``or`` and the loop) against about 2 ns per word (measured on a
#: 2-core machine: 65 ns for a one-word shift-and-or, 1.5 µs for a 1024-word one).
_CHUNK_OVERHEAD = 75
#: Declined above this estimate, in words (about 2 ns each): about 4 µs, less than the
#: portfolio's set-up on the smallest problem it is given.
_MAX_WORK = 2000


def _sums_reach(
    coeffs: Sequence[int], bounds: Sequence[int], target: int, reach: int
) -> bool | None:
    """Has ``sum(c*x) == target``, ``0 <= x <= bounds``, a solution?  ``None``: too big to ask
    this way (the caller asks another solver).  Coefficients must be positive; ``reach`` is
    ``sum(c*u)``, which the caller knows already (the two views' extents).

    >>> _sums_reach([3, 2], [12, 19], 1, 74)    # 3x + 2y == 1: nothing reaches 1
    False
    >>> _sums_reach([3, 2, 1], [12, 19, 3], 39, 77)
    True
    >>> _sums_reach([10**12, 3], [10**6, 10**6], 10**15, 10**18 + 3 * 10**6) is None   # too big
    True
    """
    if target < 0 or target > reach:
        return False
    g = math.gcd(*coeffs)
    if g > 1:
        if target % g:
            return False
        target //= g
        reach //= g
        coeffs = [c // g for c in coeffs]
    if reach - target < target:  # x -> u - x: the same question, fewer bits
        target = reach - target
    words = (target >> 6) + 1
    if 4 * words > _MAX_WORK:  # the mask and the last variable's test alone
        return None
    items = []  # (c, u) with u cut to target // c: more steps of c overshoot alone
    chunks = most = last = spans = 0
    for c, u in zip(coeffs, bounds):
        if u > target // c:
            u = target // c
        if u:
            n = u.bit_length()
            chunks += n
            spans += c * u
            if n > most:
                most, last = n, len(items)
            items.append((c, u))
    if not items:
        return target == 0
    c_last, u_last = items.pop(last)  # the one with most chunks is tested, not shifted
    # The integer holds at most the sums the shifted variables reach, and never more than t bits.
    shifted_words = (min(spans - c_last * u_last, target) >> 6) + 1
    if (chunks - most) * (shifted_words + _CHUNK_OVERHEAD) + 4 * words > _MAX_WORK:
        return None
    mask = (1 << (target + 1)) - 1
    sums = 1
    for c, u in items:
        step = 1
        while u:
            k = step if step < u else u
            sums |= (sums << c * k) & mask
            u -= k
            step <<= 1
    # The last variable: is some target - c_last * x, 0 <= x <= u_last, reachable by the rest?
    return sums & (_every(c_last, u_last + 1) << (target - c_last * u_last)) != 0


def _every(step: int, count: int) -> int:
    """The integer whose bits ``0, step, 2*step, ..., (count - 1)*step`` are set.

    >>> bin(_every(3, 4))
    '0b1001001001'
    """
    if step < 30:  # a one-digit divisor: CPython divides in one linear pass
        return ((1 << step * count) - 1) // ((1 << step) - 1)
    bits, have = 1, 1
    while have < count:
        more = min(have, count - have)
        bits |= (bits & ((1 << step * more) - 1)) << step * have
        have += more
    return bits
