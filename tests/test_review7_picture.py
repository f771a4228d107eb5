"""Issue 36, hostile review of 2026-12-04 (7): what the picture got wrong, each against an oracle
the package did not write (NumPy's own byte bounds and values, torch's pointers)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

import stridewidget as sw
from stridewidget.render.picture import draw, scene_of

_AS_STRIDED = np.lib.stride_tricks.as_strided


def test_an_as_strided_array_past_its_buffer_is_drawn_without_reading_past_it():
    """NumPy's ``as_strided`` makes views that reach past their memory (NumPy does not check):
    the picture printed the whole view to choose its number format, reading far past the buffer
    (a segfault for a stride of 10**9 or -10**6).  It reads none of it now; run in a child so a
    crash fails the test instead of killing the run."""
    code = (
        "import numpy as np, stridewidget as sw\n"
        "a = np.zeros(3)\n"
        "for s in (10**9, -10**6):\n"
        "    x = np.lib.stride_tricks.as_strided(a, shape=(10,), strides=(s,))\n"
        "    assert '<svg' in sw.render_svg(x=x)\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stderr[-500:]


def test_a_small_overrun_says_the_values_inside_the_buffer_as_numpy_holds_them():
    """Past its buffer by two elements, the view's printed format came from bytes that are not
    the array's: its hover said ``z[0] = 0.00000000e+000 · storage[0] holds 0.``, as if the view
    read another value than memory holds.  Each cell inside the buffer says NumPy's value."""
    base = np.arange(3.0)
    z = _AS_STRIDED(base, (5,), (16,))
    picture = draw(scene_of(z=z))
    titles = [item.title for item in picture.items if getattr(item, "title", None)]
    for i in range(2):  # z[0] and z[1] lie inside the buffer: storage[0] and storage[2]
        line = next(t for t in titles if t.startswith(f"z[{i}] →"))
        assert line == f"z[{i}] → storage[{2 * i}] = {np.format_float_positional(base[2 * i])}"
    assert sw.inspect(z).in_bounds is False
