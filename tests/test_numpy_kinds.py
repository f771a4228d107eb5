"""NumPy dtypes that are not plain numbers (issue 38): StringDType is refused naming what it
is; dates and durations are written as NumPy's own printer writes them, ``NaT`` included (not
``None``, which is what ``tolist()`` gives).  Oracles: NumPy's own ``np.isnat`` and
``np.datetime_as_string``."""

from __future__ import annotations

import numpy as np
import pytest

import stridewidget as sw
from stridewidget.adapters.numbers import value_texts


@pytest.mark.parametrize("unit", ["D", "s", "ms", "us", "ns", "M", "Y"])
def test_datetimes_read_as_numpy_writes_them(unit):
    rng = np.random.default_rng(len(unit))
    stamps = rng.integers(0, 10_000, 7).astype(f"datetime64[{unit}]")
    stamps[rng.integers(0, 7, 3)] = np.datetime64("NaT")
    texts, _ = value_texts(stamps.tolist(), stamps.dtype)
    assert texts == [np.datetime_as_string(s) for s in stamps]
    assert [t == "NaT" for t in texts] == list(np.isnat(stamps))
    drawn = sw.render_text(stamps)
    assert "NaT" in drawn and "None" not in drawn


@pytest.mark.parametrize("unit", ["s", "ms", "ns", "D"])
def test_durations_say_nat(unit):
    spans = np.array([5, "NaT", -3, "NaT"], dtype=f"timedelta64[{unit}]")
    texts, _ = value_texts(spans.tolist(), spans.dtype)
    assert [t == "NaT" for t in texts] == list(np.isnat(spans))
    assert [t for t in texts if t != "NaT"] == [
        str(int(v)) for v in spans[~np.isnat(spans)].astype(np.int64)
    ]
    assert "None" not in sw.render_text(spans)


@pytest.mark.skipif(
    not hasattr(np, "dtypes") or not hasattr(np.dtypes, "StringDType"),
    reason="NumPy < 2 has no StringDType",
)
@pytest.mark.parametrize("show", [sw.inspect, sw.render_text])
def test_string_dtype_is_named_not_called_an_object_array(show):
    strings = np.array(
        ["a", "bb", "a longer string than sixteen bytes"], dtype=np.dtypes.StringDType()
    )
    with pytest.raises(sw.LayoutError) as caught:
        show(strings)
    message = str(caught.value)
    assert "StringDType" in message and "object array" not in message and "\n" not in message
    width = max(len(s) for s in strings)
    assert f"astype('U{width}')" in message
    assert show(strings.astype(f"U{width}")) is not None  # the conversion it names works


def test_a_structured_array_with_an_object_field_is_named():
    records = np.array([(1, "x")], dtype=[("n", "i4"), ("o", "O")])
    with pytest.raises(sw.LayoutError, match="structured array with an object field"):
        sw.inspect(records)
