"""sw.sanitize: what a refusal leaves (nothing, subclass tensors and the random state included),
nested blocks, warnings at the user's line, and threads."""

import sys
import threading
import warnings

import pytest
import torch

import stridewidget as sw


class MyT(torch.Tensor):
    pass


def test_a_refused_sort_leaves_its_subclass_output_unwritten():
    x = torch.randn(10)
    idx = torch.full((5,), -1, dtype=torch.long).as_subclass(MyT)
    x_before = x.clone()
    with sw.sanitize(), pytest.raises(sw.LayoutHazard):
        torch.sort(x[:5], out=(x[::2], idx))
    assert torch.equal(idx.as_subclass(torch.Tensor), torch.full((5,), -1))
    assert torch.equal(x, x_before)


def test_a_refused_foreach_leaves_a_subclass_entry_unwritten():
    base = torch.arange(10.0)
    other = torch.ones(3).as_subclass(MyT)
    with sw.sanitize(), pytest.raises(sw.LayoutHazard):
        torch._foreach_mul_([base.as_strided((4, 3), (2, 1)), other], 2.0)
    assert torch.equal(other.as_subclass(torch.Tensor), torch.ones(3))
    assert torch.equal(base, torch.arange(10.0))


def test_a_refused_random_write_draws_nothing():
    torch.manual_seed(0)
    expected = torch.rand(3)  # what the global generator gives next, untouched
    torch.manual_seed(0)
    x = torch.zeros(10)
    with sw.sanitize(), pytest.raises(sw.LayoutHazard):
        x.as_strided((4, 3), (2, 1)).bernoulli_(torch.full((4, 3), 0.5))
    assert torch.equal(torch.rand(3), expected)


def test_nested_blocks_the_innermost_decides():
    x = torch.arange(10.0)
    with sw.sanitize() as outer, sw.sanitize(on_hazard="collect") as inner:
        x.as_strided((4, 3), (2, 1)).mul_(2)
    assert [h.kind for h in inner] == ["internal-overlap"] and outer.ok
    assert x[2].item() == 8.0  # collect let it run
    x = torch.arange(10.0)
    with (
        sw.sanitize(on_hazard="collect") as outer,
        sw.sanitize() as inner,
        pytest.raises(sw.LayoutHazard),
    ):
        x.as_strided((4, 3), (2, 1)).mul_(2)
    assert len(inner) == 1 and outer.ok and torch.equal(x, torch.arange(10.0))


def test_a_warning_points_at_the_users_line():
    x = torch.arange(10.0)
    with warnings.catch_warnings(record=True) as caught, sw.sanitize(on_hazard="warn"):
        warnings.simplefilter("always")
        x.as_strided((4, 3), (2, 1)).mul_(2)
        line = sys._getframe().f_lineno - 1
    found = [w for w in caught if issubclass(w.category, sw.LayoutHazardWarning)]
    assert [(w.filename, w.lineno) for w in found] == [(__file__, line)]


def test_a_thread_started_in_the_block_is_sanitized_only_by_its_own_block():
    seen = {}

    def worker(own: bool) -> None:
        x = torch.arange(10.0)
        try:
            if own:
                with sw.sanitize():
                    x.as_strided((4, 3), (2, 1)).mul_(2)
            else:
                x.as_strided((4, 3), (2, 1)).mul_(2)
            seen[own] = "ran"
        except sw.LayoutHazard:
            seen[own] = "refused"

    with sw.sanitize():
        for own in (False, True):
            thread = threading.Thread(target=worker, args=(own,))
            thread.start()
            thread.join()
    assert seen == {False: "ran", True: "refused"}
