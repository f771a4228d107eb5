"""Issue 36, hostile review of 2026-12-04 (7): what the picture got wrong, each against an oracle
the package did not write (NumPy's own byte bounds and values, torch's pointers)."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

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


def _texts(items, found):
    from stridewidget.render.primitives import Group, Text

    for item in items:
        if isinstance(item, Group):
            _texts(item.children, found)
        elif isinstance(item, Text):
            found.append(item)
    return found


@pytest.mark.parametrize("device", ["meta", "cpu"])
@pytest.mark.parametrize("width", [900, 1280])
def test_a_tensor_left_alone_by_listing_the_other_gets_the_whole_width(device, width):
    """Two 5-D tensors over the height budget: the second is listed in words, and the first
    kept the half width it had beside the second (its 25-column panels split into 24 + 1,
    1,738 px at 900 for meta).  One card left is laid out at the whole width, and fits."""
    import torch

    from stridewidget.render.picture import height_budget

    x = torch.empty(3, 2, 50, 50, 25, device=device)
    scene = scene_of(x=x, y=x.transpose(0, 1))
    picture = draw(scene, width=width)
    assert picture.height <= height_budget(scene, width) and picture.width <= width + 1


def _slice_notes(picture) -> list[str]:
    """Each "⋯ N slices not shown" note of the cards, its lines joined."""
    notes: list[str] = []
    for text in (t.text for t in _texts(picture.items, [])):
        if " slices not shown" in text or " slice not shown" in text:
            notes.append(text)
        elif notes and text.startswith("    ") and not notes[-1].endswith(")"):
            notes[-1] += " " + text.strip()
    return notes


def test_a_long_list_of_slices_left_out_is_counted_past_four_lines(monkeypatch):
    """A 20-D tensor's card listed every range of slices it leaves out: 600 px of ranges (2,086
    px at 900, budget 1,540).  Past four lines the rest are counted: the ranges said plus the
    count are the ranges of the note written whole."""
    import re

    import torch

    from stridewidget.render import card
    from stridewidget.render.picture import height_budget

    scene = scene_of(x=torch.zeros([2] * 20, device="meta"))
    picture = draw(scene, width=900)
    monkeypatch.setattr(card, "_NOTE_LINES", 10**6)
    whole = _slice_notes(draw(scene, width=900))
    capped = _slice_notes(picture)
    assert len(capped) == len(whole) >= 1 and picture.height <= height_budget(scene)
    for said, full in zip(capped, whole):
        more = re.search(r"… and (\d+) more range", said)
        shown = len(re.findall(r"\]", said.split("… and")[0]))
        between = (
            len(re.findall(r"\]", full[full.index(" (between") :])) if "(between" in full else 0
        )
        assert (
            more is not None
            and shown + int(more.group(1)) == len(re.findall(r"\]", full)) - between
        )


@pytest.mark.parametrize(
    "make",
    [
        lambda f: {"a": f, "b": f.view(__import__("torch").int32)},
        lambda f: {"a": f, "u": f.view(__import__("torch").uint8)[:6]},
    ],
)
def test_every_surface_says_two_dtype_views_are_one_memory(make):
    """Only the strips' headers said "same memory as s1": the picture's title and aria-label
    (what a screen reader and the saved fallback's text say) and the widget's summary said two
    storages.  Both now say which storages are one memory (torch's storage pointers agree)."""
    import html
    import re

    import torch

    tensors = make(torch.arange(8.0))
    pointers = {t.untyped_storage().data_ptr() for t in tensors.values()}
    assert len(pointers) == 1  # the oracle: one memory
    svg = sw.render_svg(**tensors)
    title = html.unescape(re.search(r"<title>(.*?)</title>", svg, re.S).group(1))
    label = html.unescape(re.search(r'aria-label="([^"]*)"', svg).group(1))
    dtypes = " and ".join(str(t.dtype).removeprefix("torch.") for t in tensors.values())
    said = f"storages s0 and s1 are one memory, viewed as {dtypes}"
    assert said in title and said in label
    assert said in sw.StrideWidget(**tensors).summary().splitlines()[0]


def test_a_gap_untouched_by_its_strip_says_whose_reads_it_counts():
    """``f`` and ``f.view(torch.int32)[:4]``: the int32 strip's gap hovered "60 cells untouched:
    storage[4] … storage[63]" while ``f`` reads every one of those bytes (torch's pointers).  Its
    hover now says the count is of this strip's tensors."""
    import torch

    from stridewidget.render.primitives import Group

    f = torch.arange(64.0)
    i = f.view(torch.int32)[:4]
    base = f.untyped_storage().data_ptr()
    read_by_f = set(range(f.data_ptr() - base, f.data_ptr() - base + f.nbytes))
    gaps = []

    def walk(items):
        for item in items:
            if isinstance(item, Group):
                if "sws-gap" in item.cls and item.title and "untouched" in item.title:
                    gaps.append(item.title)
                walk(item.children)

    walk(draw(scene_of(f=f, i=i), width=900).items)
    assert gaps
    for title in gaps:
        first, last = (
            int(n.replace(",", "")) for n in re.findall(r"storage(?: s\d+)?\[([\d,]+)\]", title)
        )
        touched_bytes = set(range(first * 4, (last + 1) * 4))  # int32 cells: 4 bytes each
        assert touched_bytes <= read_by_f  # f reads them: "untouched" is of i's strip alone
        assert title.endswith("(by this strip's tensors)")


@pytest.mark.parametrize("seed", range(6))
def test_a_long_gap_over_one_strided_run_counts_its_read_cells(seed):
    """``torch.arange(10**6.)[::1000]``: the gap between its drawn cells (994,999 cells) said
    "not shown" and nothing of the 994 cells x reads in it (too long to count by touch).  One
    tensor whose cells are one arithmetic run is counted exactly: brute force over its storage
    indices (torch's offset and stride)."""
    import random

    import torch

    from stridewidget.scene.build import build_scene

    rng = random.Random(seed)
    n, step = rng.choice([10**5, 10**6]), rng.choice([7, 100, 999, 1000, 10007])
    start = rng.randrange(step)
    x = torch.arange(float(n))[start::step]
    cells = {x.storage_offset() + k * x.stride(0) for k in range(x.shape[0])}
    storage = build_scene({"x": x})["storages"][0]
    gaps = [g for g in storage["segments"] if g["kind"] == "gap" and g["in_span"]]
    assert any(g["stop"] - g["start"] > 4096 for g in gaps)
    for gap in gaps:
        assert gap["read"] == sum(1 for c in cells if gap["start"] <= c < gap["stop"]), gap


@pytest.mark.parametrize(
    "make",
    [
        lambda t: t.zeros(2, 3, 2, 2, 2).to(memory_format=t.channels_last_3d),
        lambda t: t.zeros(2, 1, 3, 3).to(memory_format=t.channels_last),
        lambda t: t.zeros(2, 3, 4, 5).to(memory_format=t.channels_last),
    ],
)
def test_the_card_and_the_title_name_one_layout(make):
    """The title said ``channels-last-3d`` where the card said ``dense``; the title
    ``contiguous`` where the card said ``contiguous · channels-last``.  Both name the flags
    torch's own ``is_contiguous(memory_format=...)`` gives, the same way."""
    import torch

    from stridewidget.render.facts import layout_summary
    from stridewidget.render.picture import described

    x = make(torch)
    scene = scene_of(x=x)
    card = layout_summary(scene["tensors"][0]["layout"]).split(" · ")[-1]
    title = described(scene).split(" · ")[-1]
    ndim = x.dim()
    form = torch.channels_last if ndim == 4 else torch.channels_last_3d
    expected = (
        "contiguous"
        if x.is_contiguous()
        else ("channels-last" if ndim == 4 else "channels-last-3d")
        if x.is_contiguous(memory_format=form)
        else None
    )
    assert card == title == expected
