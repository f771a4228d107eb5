"""sw.audit on one-op models, each step cross-checked against an independent
``torch.profiler(profile_memory=True)`` run of the plain step (the zoo's oracle,
``tests/test_audit_zoo.py``): per phase, the report's bytes are the profiler's.  Each op here was
once reported other than the profiler saw it, with either of the audit's profiler sessions."""

import pytest
import torch
import torch.nn.functional as F
from test_audit_zoo import _into_blank_buffer, _oracle

import stridewidget as sw


class _OneOp(torch.nn.Module):
    """``op(x * w)``: the op's input needs a gradient, and so its backward runs."""

    def __init__(self, op, shape) -> None:
        super().__init__()
        self.op = op
        self.w = torch.nn.Parameter(torch.randn(*shape))

    def forward(self, x):
        return self.op(x * self.w)


class _Embedding(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.table = torch.nn.Embedding(20, 8)

    def forward(self, indices):
        return self.table(indices)


def _values(out):
    """The tensor a loss sums: the values of an op that returns (values, indices)."""
    return out[0] if isinstance(out, tuple) else out


OPS = {
    # its CPU kernel clones input and result channels-last, then copies back (2304 != 1024)
    "interpolate-nearest": (lambda x: F.interpolate(x, scale_factor=2), (1, 4, 4, 4)),
    "interpolate-nearest-wide": (lambda x: F.interpolate(x, scale_factor=2), (2, 16, 8, 8)),
    "interpolate-nearest-exact": (
        lambda x: F.interpolate(x, scale_factor=2, mode="nearest-exact"),
        (1, 4, 4, 4),
    ),
    # it copies the wrapped edges into its new buffer, then the corners over them (640 != 576)
    "pad-circular": (lambda x: F.pad(x, (1, 1, 1, 1), mode="circular"), (1, 4, 4, 4)),
    # to its own size, its backward copies the gradient, made contiguous inside it, into its
    # result: a copy_ of a tensor the op made, not of its input (2048 != 1024)
    "interpolate-bicubic-same-size": (
        lambda x: F.interpolate(x.transpose(1, 2).reshape(2, 8, 4, 4), size=4, mode="bicubic"),
        (2, 16, 8),
    ),
    # index_fill clones self and fills the clone (256 != 128, both phases)
    "index-fill": (lambda x: x.index_fill(1, torch.tensor([0, 2]), 0.0), (4, 8)),
    # its backward, pixel_unshuffle, clones its input (1024 != 512)
    "pixel-shuffle": (lambda x: F.pixel_shuffle(x, 2), (1, 8, 4, 4)),
    # Their backward scatters the gradient into a zero buffer: in place in the plain step, out
    # of place under a dispatch mode (FUNCTIONAL_UNDER_A_MODE; 128 != 0 each)
    "sort": (lambda x: torch.sort(x, dim=1), (4, 8)),
    "topk": (lambda x: torch.topk(x, 3, dim=1), (4, 8)),
    "kthvalue": (lambda x: torch.kthvalue(x, 3, dim=1), (4, 8)),
    "median": (lambda x: torch.median(x, dim=1), (4, 8)),
    "nanmedian": (lambda x: torch.nanmedian(x, dim=1), (4, 8)),
    "mode": (lambda x: torch.mode(x, dim=1), (4, 8)),
    "max-dim": (lambda x: torch.max(x, dim=1), (4, 8)),
    "min-dim": (lambda x: torch.min(x, dim=1), (4, 8)),
    # masked_scatter_ into zeros in the plain step, masked_scatter under a mode (128 != 0)
    "masked-select": (lambda x: torch.masked_select(x, x > 0), (4, 8)),
    # the plain CPU step fills zeros, under a mode it multiplies its bool mask (388 != 260)
    "max-all": (lambda x: torch.max(x), (4, 8)),
    "min-all": (lambda x: torch.min(x), (4, 8)),
    # given its lengths as tensors, its subclass-safe branch divides by int64 lengths (12 != 4)
    "ctc-loss": (
        lambda x: F.ctc_loss(
            x.log_softmax(2),
            torch.tensor([[1, 2], [2, 1]]),
            torch.tensor([5, 5]),
            torch.tensor([2, 2]),
        ),
        (5, 2, 4),
    ),
    # Each output element an input element or a constant, in a new buffer: the tracker calls
    # them copies (its reference decompositions: a select with a mask, a gather), as the
    # oracle's list of data moves does since 2026-12-04 (both phases: their backward is one too)
    "triu": (lambda x: torch.triu(x), (4, 8)),
    "tril": (lambda x: x.tril(-1), (4, 8)),
    "diag-embed": (lambda x: torch.diag_embed(x), (4, 8)),
    "diagflat": (lambda x: torch.diagflat(x), (8,)),
    "block-diag": (lambda x: torch.block_diag(x, x[:2]), (4, 8)),
    "index-copy": (lambda x: x.index_copy(0, torch.tensor([1, 0]), x[2:]), (4, 8)),
    "complex": (lambda x: torch.view_as_real(torch.complex(x, x)), (4, 8)),
    "channel-shuffle": (lambda x: F.channel_shuffle(x, 2), (1, 4, 4, 4)),
    "pixel-unshuffle": (lambda x: F.pixel_unshuffle(x, 2), (1, 2, 4, 4)),
}
# A loss whose gradient is a contiguous tensor: sum()'s is a stride-0 expand, which
# masked_scatter_ clones inside itself in the plain step only (60 B the audit cannot see).
_SQUARED = {"masked-select"}


@pytest.fixture(params=["legacy collector", "torch.profiler"])
def collector(request, monkeypatch):
    from stridewidget.copies.audit import profiler as _audit

    if request.param == "torch.profiler":
        monkeypatch.setattr(_audit, "_legacy_profiler_usable", lambda devices: False)
    return request.param


def _agrees(model, inputs, squared=False):
    def loss_fn(out):
        return _values(out).pow(2).sum() if squared else _values(out).sum()

    report = sw.audit(model, *inputs, loss_fn=loss_fn)
    expected = _oracle(model, inputs, {}, loss_fn)
    for phase in ("forward", "backward"):
        items = [c for c in report.copies if c.phase == phase and not _into_blank_buffer(c)]
        assert (phase, sum(c.bytes for c in items)) == (phase, expected[phase])


@pytest.mark.parametrize("name", sorted(OPS))
def test_the_report_of_one_op_agrees_with_the_profiler(name, collector):
    op, shape = OPS[name]
    torch.manual_seed(0)
    _agrees(_OneOp(op, shape), (torch.randn(*shape),), name in _SQUARED)


def test_a_clone_of_an_ops_other_input_is_a_copy_of_its_own(collector):
    """Inside ``embedding`` (a copy of the tracker's), the clone its kernel makes of transposed
    indices to reshape them is a copy besides the gather (800 B, the profiler's)."""
    torch.manual_seed(0)
    _agrees(_Embedding(), (torch.randint(0, 20, (5, 4)).t(),))


# Their kernels copy their one input into a buffer they allocate, directly under the op the
# audit marks (sort(stable=True) is aten::sort.stable itself; sort() calls it): 0 != 128, 64, 64
COPY_INTO_RESULT = {
    "sort-stable": (lambda x: torch.sort(x, dim=1, stable=True), (4, 8)),
    "eigvalsh": (lambda x: torch.linalg.eigvalsh(x + x.mT), (4, 4)),
    "qr": (lambda x: torch.linalg.qr(x)[0], (4, 4)),
    "lu-factor": (lambda x: torch.linalg.lu_factor(x)[0], (4, 4)),
}


@pytest.mark.parametrize("name", sorted(COPY_INTO_RESULT))
def test_a_copy_of_its_input_directly_under_an_op_is_found(name, collector):
    op, shape = COPY_INTO_RESULT[name]
    torch.manual_seed(0)
    model = _OneOp(op, shape)
    loss_fn = lambda out: _values(out).sum()  # noqa: E731
    x = torch.randn(*shape)
    report = sw.audit(model, x, loss_fn=loss_fn)
    expected = _oracle(model, (x,), {}, loss_fn)["forward"]
    assert sum(c.bytes for c in report.copies if c.phase == "forward") == expected > 0


def test_a_copy_of_a_0d_input_is_found_where_dtypes_are_recorded(monkeypatch):
    """sort.stable of a 0-d tensor copies it into its values (4 B): ``torch.profiler`` records
    its dtype, so it is told from a number (the legacy collector records both alike: missed)."""
    from stridewidget.copies.audit import profiler as _audit

    monkeypatch.setattr(_audit, "_legacy_profiler_usable", lambda devices: False)
    torch.manual_seed(0)
    model = _OneOp(lambda x: torch.sort(x[0, 0], stable=True), (4, 8))
    loss_fn = lambda out: _values(out).sum()  # noqa: E731
    x = torch.randn(4, 8)
    report = sw.audit(model, x, loss_fn=loss_fn)
    expected = _oracle(model, (x,), {}, loss_fn)["forward"]
    assert sum(c.bytes for c in report.copies if c.phase == "forward") == expected == 4


class _Unpermuted(torch.nn.Module):
    """transformers' grouped MoE experts restore their tokens' order through an inverse
    permutation written into a blank buffer (``inv[perm] = arange``: an ``index_put_``)."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)

    def forward(self, x):
        perm = torch.argsort(x[:, 0])
        inverse = torch.empty_like(perm)
        inverse[perm] = torch.arange(perm.size(0))
        return self.linear(x[perm])[inverse]


def test_an_index_write_into_a_blank_buffer_is_the_copy_the_oracle_explains(collector):
    torch.manual_seed(0)
    _agrees(_Unpermuted(), (torch.randn(6, 8),))


def test_pad_sequence_moves_its_sequences_not_its_padding(collector):
    """``pad_sequence`` fills a new buffer with the padding value, then copies each sequence into
    it: the audit counts the bytes copied (the sequences': torch's own ``nbytes``), not the
    padded buffer the profiler sees allocated (a fill moves no data)."""
    torch.manual_seed(0)
    model = _OneOp(lambda x: torch.nn.utils.rnn.pad_sequence([x[0], x[1, :3]]), (4, 8))
    x = torch.randn(4, 8)
    report = sw.audit(model, x, loss_fn=lambda out: out.sum())
    sequences = x[0].nbytes + x[1, :3].nbytes
    padded = torch.nn.utils.rnn.pad_sequence([x[0], x[1, :3]]).nbytes
    forward = sum(c.bytes for c in report.copies if c.phase == "forward")
    assert (forward, padded) == (sequences, 64) and sequences == 44


def _backward_ops(model, x, mode=None) -> list[str]:
    """The ATen ops torch's profiler sees in the backward of ``model(x).sum()``, under ``mode``."""
    from torch.profiler import ProfilerActivity, profile

    loss = model(x).sum()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        if mode is None:
            loss.backward()
        else:
            with mode:
                loss.backward()
    return sorted(e.name for e in prof.events() if e.name.startswith("aten::"))


# Under any dispatch mode torch runs another backward formula for these (the zero-safe one):
# other ops, other copies; the audit reports none of them and says so
OTHER_FORMULA = {
    "prod-dim": (lambda x: x.prod(1), "ProdBackward1"),
    "prod-all": (lambda x: x.prod(), "ProdBackward0"),
    "cumprod": (lambda x: x.cumprod(1), "CumprodBackward0"),
}


@pytest.mark.parametrize("name", sorted(OTHER_FORMULA))
def test_a_backward_formula_the_modes_change_is_said_not_measured(name, collector):
    from torch.utils._python_dispatch import TorchDispatchMode

    class Bare(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    op, node = OTHER_FORMULA[name]
    torch.manual_seed(0)
    model, x = _OneOp(op, (4, 8)), torch.randn(4, 8)
    # the rule's premise, from torch's own profiler: under a bare mode the backward runs other ops
    assert _backward_ops(model, x) != _backward_ops(model, x, Bare())
    report = sw.audit(model, x, loss_fn=lambda out: out.sum())
    expected = _oracle(model, (x,), {}, lambda out: out.sum())
    assert sum(c.bytes for c in report.copies if c.phase == "forward") == expected["forward"]
    assert not [c for c in report.copies if c.phase == "backward" and node in c.call]
    assert f"not measured: the copies of {node} in backward" in report.note


def test_quantile_checks_q_in_the_plain_step_alone(collector):
    """``torch.quantile``'s range check on ``q`` runs only without a dispatch mode: the bytes its
    ``ge``/``le``/``all`` move (converting ``q``, copying a bool) are the audit's one shortfall,
    read from the plain step's profile with the zoo oracle's own rules."""
    from test_audit_zoo import _EventType, _into_callers_output, _subtree_allocations
    from torch.profiler import ProfilerActivity, profile

    torch.manual_seed(0)
    model, x = _OneOp(lambda x: torch.quantile(x, 0.5, dim=1), (4, 8)), torch.randn(4, 8)
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True, record_shapes=True) as p:
        model(x)

    def checks(node):
        for child in node.children:
            if child.tag == _EventType.TorchOp and child.name in (
                "aten::ge",
                "aten::le",
                "aten::all",
            ):
                yield child
            else:
                yield from checks(child)

    check_bytes = 0
    for root in p.profiler.kineto_results.experimental_event_tree():
        for check in checks(root):
            for child in check.children:
                if child.name == "aten::copy_":  # all's bool result copied into its output
                    check_bytes += _into_callers_output(check, child)
                elif child.name == "aten::to":  # q converted to the input's dtype
                    check_bytes += sum(
                        a.extra_fields.alloc_size for a in _subtree_allocations(child, [])
                    )
    report = sw.audit(model, x, loss_fn=lambda out: out.sum())
    expected = _oracle(model, (x,), {}, lambda out: out.sum())["forward"]
    forward = sum(c.bytes for c in report.copies if c.phase == "forward")
    assert forward == expected - check_bytes and check_bytes > 0
