"""sw.sanitize, hostile inputs round 4 (#38): broadcast reads, one-value and list-shared writes,
sort in place, Tensor subclasses.  Each hazard is first shown real by torch itself: its in-place
result on a clone differs from the out-of-place result on another clone."""

import typing

import pytest
import torch

import stridewidget as sw


def _storage(n: int = 12) -> torch.Tensor:
    return torch.arange(1.0, n + 1) * 1.5  # distinct, nonzero values


def _torch_differs(run, reference, base: torch.Tensor) -> bool:
    """Does ``run`` (in place, on a clone of ``base``) leave a storage other than ``reference``
    (out of place, on another clone) does?"""
    return not torch.equal(run(base.clone()), reference(base.clone()))


def _refused(run, base: torch.Tensor) -> bool:
    x = base.clone()
    try:
        with sw.sanitize():
            run(x)
    except sw.LayoutHazard:
        return torch.equal(x, base)  # refused before it wrote
    return False


def _inplace(write):
    def run(x):
        write(x)
        return x

    return run


def _reference(view, compute):
    """The out-of-place result written back: ``view(x).copy_(compute(x))`` on fresh memory."""

    def run(x):
        result = compute(x.clone())
        view(x).copy_(result)
        return x

    return run


BROADCAST_READS = {
    "div_ by its own first column": (
        _inplace(lambda x: x.view(3, 4).div_(x.view(3, 4)[:, :1])),
        _reference(lambda x: x.view(3, 4), lambda x: x.view(3, 4) / x.view(3, 4)[:, :1]),
    ),
    "sub out= over self": (
        _inplace(lambda x: torch.sub(x.view(3, 4), x.view(3, 4)[:, :1], out=x.view(3, 4))),
        _reference(lambda x: x.view(3, 4), lambda x: x.view(3, 4) - x.view(3, 4)[:, :1]),
    ),
    "_foreach_sub_": (
        _inplace(lambda x: torch._foreach_sub_([x.view(3, 4)], [x.view(3, 4)[:, :1]])),
        _reference(lambda x: x.view(3, 4), lambda x: x.view(3, 4) - x.view(3, 4)[:, :1]),
    ),
    "add_ of an expanded element": (
        _inplace(lambda x: x[1:5].add_(x[2:3].expand(4))),
        _reference(lambda x: x[1:5], lambda x: x[1:5] + x[2:3].expand(4)),
    ),
    "mul_ by a broadcast row (leading dim)": (
        _inplace(lambda x: x.view(3, 4)[:, 1:].mul_(x[5:8])),
        _reference(lambda x: x.view(3, 4)[:, 1:], lambda x: x.view(3, 4)[:, 1:] * x[5:8]),
    ),
}


@pytest.mark.parametrize("name", sorted(BROADCAST_READS))
def test_a_read_through_a_broadcast_dim_is_a_hazard(name):
    run, reference = BROADCAST_READS[name]
    base = _storage()
    assert _torch_differs(run, reference, base)  # torch itself gets it wrong
    assert _refused(run, base)


def test_a_broadcast_read_of_memory_not_written_is_no_hazard():
    x = _storage()
    with sw.sanitize():
        x[:8].view(2, 4).div_(x[8:9])  # x[8] broadcast, never written
        x.view(3, 4)[1:].add_(x.view(3, 4)[0])  # row 0 broadcast, not written


def _scatter_reference(x):
    index = torch.tensor([2, 0, 1])
    source = x[2:3].expand(3).clone()
    x.scatter_(0, index, source, reduce="add")  # the same op, on a source of its own memory
    return x


def _foreach_div_reference(x):
    s, t = x[0].clone(), x[1:4].clone()
    torch._foreach_div_([s, t], x[0].clone())
    x[0], x[1:4] = s, t
    return x


ONE_VALUE_AND_SHARED_READS = {
    "scatter_ reduce='add' of an expanded element": (
        _inplace(lambda x: x.scatter_(0, torch.tensor([2, 0, 1]), x[2:3].expand(3), reduce="add")),
        _scatter_reference,
    ),
    "_foreach_div_ by the list's own first entry": (
        _inplace(lambda x: torch._foreach_div_([x[0], x[1:4]], x[0])),
        _foreach_div_reference,
    ),
    "copy_ of one element read as another dtype": (
        _inplace(lambda x: x.copy_(x.view(torch.int64)[2:3].expand(12))),
        _reference(lambda x: x, lambda x: x.view(torch.int64)[2:3].expand(12).double()),
    ),
}


@pytest.mark.parametrize("name", sorted(ONE_VALUE_AND_SHARED_READS))
@pytest.mark.filterwarnings("ignore:The reduce argument")
def test_not_one_value_nor_a_same_position_read(name):
    run, reference = ONE_VALUE_AND_SHARED_READS[name]
    base = _storage().double()
    assert _torch_differs(run, reference, base)
    assert _refused(run, base)


def test_one_value_writes_still_pass():
    """Each written element gets the very bits of one element: no order to depend on."""
    base = _storage().double()
    for run, reference in (
        (
            _inplace(lambda x: x.scatter_(0, torch.tensor([0, 1, 2]), x[2:3].expand(3))),
            _reference(lambda x: x[:3], lambda x: x[2:3].expand(3)),
        ),
        (_inplace(lambda x: x.copy_(x[2:3].expand(12))), _reference(lambda x: x, lambda x: x[2])),
        (
            _inplace(lambda x: torch._foreach_div_([x[1:4], x[4:6]], x[7])),
            _reference(lambda x: x[1:6], lambda x: x[1:6] / x[7]),
        ),
    ):
        assert not _torch_differs(run, reference, base)
        x = base.clone()
        with sw.sanitize():
            run(x)


SORT_VIEWS = {
    "1-d": lambda b: b[:6],
    "rows": lambda b: b[:12].view(3, 4),
    "transposed": lambda b: b[:12].view(3, 4).t(),
    "every other column": lambda b: b[:18].view(3, 6)[:, ::2],
    "stepped": lambda b: b[1:16:3],
    "permuted 3-d": lambda b: b[:24].view(2, 3, 4).permute(2, 0, 1),
    "0-d": lambda b: b[3],
}


@pytest.mark.parametrize("name", sorted(SORT_VIEWS))
@pytest.mark.parametrize("descending", [False, True])
def test_sort_into_its_own_input_is_exact_and_passes(name, descending):
    view = SORT_VIEWS[name]
    base = torch.randint(0, 5, (40,)).double()  # ties: stable order shows in the indices
    for dim in range(-1, view(base).dim()) if view(base).dim() else (0,):
        expected = base.clone()
        values, indices = torch.sort(
            view(expected).clone(), dim=dim, descending=descending, stable=True
        )
        view(expected).copy_(values)
        x = base.clone()
        out = torch.empty(view(x).shape, dtype=torch.long)
        with sw.sanitize():  # torch sorts values in place: no hazard
            torch.sort(view(x), dim=dim, descending=descending, stable=True, out=(view(x), out))
        assert torch.equal(x, expected) and torch.equal(out, indices)


def test_sort_into_another_view_of_its_input_is_still_refused():
    base = torch.randn(10)
    assert _refused(
        lambda x: torch.sort(x[:5], out=(x[::2], torch.empty(5, dtype=torch.long))), base
    )
    assert _refused(
        lambda x: torch.sort(x[:5], out=(x[1:10:2], torch.empty(5, dtype=torch.long))), base
    )


class Tagged(torch.Tensor):
    """An ``as_subclass`` tensor: its own geometry, torch's dispatch."""


class Logged(torch.Tensor):
    """A subclass with its own ``__torch_function__`` (the sanitizer must not call it)."""

    calls: typing.ClassVar[list] = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.calls.append(func)
        return super().__torch_function__(func, types, args, kwargs or {})


README_HAZARDS = {
    "rows share elements (mul_)": (
        _inplace(lambda x: x.as_strided((4, 3), (2, 1)).mul_(2)),
        _reference(
            lambda x: x.as_strided((4, 3), (2, 1)), lambda x: x.as_strided((4, 3), (2, 1)) * 2
        ),
    ),
    "out= partly over its input": (
        _inplace(lambda x: torch.add(x[:5], 1, out=x.as_strided((5,), (2,), 1))),
        _reference(lambda x: x.as_strided((5,), (2,), 1), lambda x: x[:5] + 1),
    ),
    "a broadcast read (div_)": (
        _inplace(lambda x: x[:8].view(2, 4).div_(x[:8].view(2, 4)[:, :1])),
        _reference(
            lambda x: x[:8].view(2, 4), lambda x: x[:8].view(2, 4) / x[:8].view(2, 4)[:, :1]
        ),
    ),
}


@pytest.mark.parametrize("kind", [Tagged, Logged, torch.nn.Parameter])
@pytest.mark.parametrize("name", sorted(README_HAZARDS))
def test_a_subclass_is_checked_as_its_plain_geometry(kind, name):
    run, reference = README_HAZARDS[name]
    base = torch.arange(1.0, 11.0)
    assert _torch_differs(run, reference, base)

    def wrap(t):
        return (
            torch.nn.Parameter(t, requires_grad=False)
            if kind is torch.nn.Parameter
            else t.as_subclass(kind)
        )

    x = wrap(base.clone())
    with torch.no_grad(), sw.sanitize(), pytest.raises(sw.LayoutHazard):
        run(x)
    assert torch.equal(x.as_subclass(torch.Tensor), base)  # refused before it wrote


def test_a_subclass_is_unwrapped_without_its_torch_function():
    x = torch.arange(1.0, 11.0).as_subclass(Logged)
    view = x.as_strided((4, 3), (2, 1))
    Logged.calls.clear()
    with sw.sanitize(on_hazard="collect") as report:
        torch.ops.aten.mul_.Tensor(view, torch.tensor(2.0))
    assert [h.kind for h in report] == ["internal-overlap"]
    assert Logged.calls == [torch.ops.aten.mul_.Tensor]  # the user's call only, none of ours


def test_a_subclass_out_is_resized_on_meta_never_on_the_users_tensor():
    x = torch.arange(60.0)
    out = x[1:1].as_subclass(Tagged)
    with sw.sanitize(on_hazard="collect") as report:
        torch.add(x[:50], 1, out=out)  # resizes out onto x[1:51], over its input
    assert [h.kind for h in report] == ["partial-overlap"]


def test_a_copy_from_its_own_broadcast_column_is_exact_and_passes():
    """Each element is written with the bits it reads: the shared column is left as it was."""
    run = _inplace(lambda x: x.view(3, 4).copy_(x.view(3, 4)[:, :1]))
    reference = _reference(lambda x: x.view(3, 4), lambda x: x.view(3, 4)[:, :1].expand(3, 4))
    base = _storage()
    assert not _torch_differs(run, reference, base)
    x = base.clone()
    with sw.sanitize():
        run(x)
    assert torch.equal(x, reference(base.clone()))
    assert _refused(_inplace(lambda x: x.view(3, 4)[:, 1:].copy_(x.view(3, 4)[:, :3])), base)
