"""Issue 24, "Hostile inputs, round 3": one regression test (or group) per item, named after it.

Each test failed on the code before the fix (checked against the pre-fix tree).  DTensor runs on a
single-process gloo group over a FileStore in a temporary folder, destroyed after the module.
"""

from __future__ import annotations

import gc
import threading
import weakref

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from IPython.core.interactiveshell import InteractiveShell
from torch.testing._internal.two_tensor import TwoTensor

import stridewidget as sw
from stridewidget import cli
from stridewidget.layout.ints import as_index
from stridewidget.scene.build import build_scene
from stridewidget.scene.validate import validate_scene
from stridewidget.tricks import PeakMemory


@pytest.fixture(scope="module")
def mesh(tmp_path_factory):
    """A one-rank CPU device mesh (gloo, FileStore on local disk: no network, no other process)."""
    dist = pytest.importorskip("torch.distributed")
    from torch.distributed.device_mesh import init_device_mesh

    store = dist.FileStore(str(tmp_path_factory.mktemp("gloo") / "store"), 1)
    dist.init_process_group("gloo", store=store, rank=0, world_size=1)
    try:
        yield init_device_mesh("cpu", (1,))
    finally:
        dist.destroy_process_group()


def _dtensor(local: torch.Tensor, mesh):
    from torch.distributed.tensor import DTensor, Shard

    return DTensor.from_local(local, mesh, [Shard(0)])


# --- 1. wrapper subclasses share their inner tensors' storage, everywhere --------------------------


def test_item01_wrapper_subclasses_share_storage_with_what_they_wrap(mesh):
    x = torch.arange(12.0)
    other = torch.zeros(12)
    pair = TwoTensor(x, other)
    # oracle: the wrapped tensors are x and other themselves
    assert pair.a.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    assert sw.same_storage(pair, x) and sw.same_storage(x, pair) and sw.same_storage(pair, other)
    assert not sw.same_storage(pair, x.clone())
    assert sw.overlap(pair, x[3:4])
    # exact, through the wrapper: even elements of both halves never touch x's odd elements
    assert not sw.overlap(TwoTensor(x[::2], x[::2]), x[1::2])
    dt = _dtensor(x, mesh)
    assert dt._local_tensor.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    assert sw.same_storage(dt, x) and sw.overlap(dt, x[5:])
    assert not sw.same_storage(dt, x.clone()) and not sw.overlap(dt, other)
    # the copy tracker gives the same answer: a view of the wrapper aliases its input
    with sw.track_copies() as log:
        pair.view(3, 4)
    assert log.events[-1].kind == "view"


# --- 2. out= resizes: a new allocation -------------------------------------------------------------


def test_item02_peak_memory_counts_an_out_argument_resized_by_the_op():
    parts = [torch.ones(1000)] * 3
    with PeakMemory() as fresh:
        expected = torch.cat(parts)
    with PeakMemory() as into_empty:
        out = torch.cat(parts, out=torch.empty(0))
    # oracle: the bytes the resized out= storage really holds, and torch.cat without out=
    assert into_empty.peak == out.untyped_storage().nbytes() == expected.nbytes == fresh.peak
    assert into_empty.live == out.untyped_storage().nbytes()
    buffer = torch.empty(3000)
    with PeakMemory() as fits:  # big enough already: written in place, nothing allocated
        torch.cat(parts, out=buffer)
    assert fits.peak == 0


# --- 3. functionalize: add_ is in-place ------------------------------------------------------------


def test_item03_functionalized_in_place_op_is_logged_in_place():
    kinds = {}

    def step(x):
        y = x.clone()
        with sw.track_copies() as log:
            y.add_(1)  # functionalized: aten.add, its result swapped into y
            y.contiguous()  # returns y itself, writes nothing: a view
        kinds.update((event.call, event.kind) for event in log.events)
        return y

    result = torch.func.functionalize(step)(torch.zeros(3))
    assert torch.equal(result, torch.ones(3))  # the add_ did write (oracle: the values)
    assert kinds == {"torch.Tensor.add_": "in-place", "torch.Tensor.contiguous": "view"}
    kinds.clear()  # the functional wrapper under vmap's wrapper: the same answer
    result = torch.func.functionalize(torch.func.vmap(step))(torch.zeros(2, 3))
    assert torch.equal(result, torch.ones(2, 3))
    assert kinds == {"torch.Tensor.add_": "in-place", "torch.Tensor.contiguous": "view"}


# --- 4. enable twice, disable once -----------------------------------------------------------------


def test_item04_disable_after_enabling_twice_restores_the_plain_repr():
    ip = InteractiveShell.instance()
    try:
        sw.enable(ip)
        shown_first, _ = ip.display_formatter.format(torch.arange(3.0))
        sw.enable(ip)
        sw.disable(ip)
        data, _ = ip.display_formatter.format(torch.arange(3.0))
    finally:
        sw.disable(ip)
    assert "application/vnd.jupyter.widget-view+json" in shown_first
    assert sorted(data) == ["text/plain"]


# --- 5. Layout validates its ints ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"shape": (2.7, 3), "strides": (3, 1)}, "shape"),
        ({"shape": "34", "strides": (4, 1)}, "shape"),
        ({"shape": (3, 4), "strides": (4, 1.0)}, "strides"),
        ({"shape": (3,), "strides": (1,), "storage_size": 2.5}, "storage_size"),
        ({"shape": (3,), "strides": (1,), "offset": 1.5}, "offset"),
        ({"shape": (3,), "strides": (1,), "itemsize": 4.0}, "itemsize"),
        ({"shape": (True, 2), "strides": (2, 1)}, "shape"),
    ],
)
def test_item05_layout_refuses_non_integers_naming_the_argument(kwargs, named):
    with pytest.raises(TypeError, match=rf"Layout: {named}"):
        sw.Layout(**kwargs)


def test_item05_layout_accepts_what_torch_accepts_and_keeps_symints():
    layout = sw.Layout(
        shape=(np.int64(3), torch.tensor(4)),
        strides=(np.int32(4), 1),
        offset=torch.tensor(2),
        storage_size=np.uint8(14),
    )
    assert (layout.shape, layout.strides, layout.offset, layout.storage_size) == (
        (3, 4),
        (4, 1),
        2,
        14,
    )
    assert all(type(v) is int for v in (*layout.shape, *layout.strides, layout.offset))
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    shape_env = ShapeEnv()
    rows = shape_env.create_unbacked_symint()  # any guard on it would raise
    symbolic = sw.Layout(shape=(rows, 3), strides=(3, 1), storage_size=rows * 3)
    assert symbolic.shape[0] is rows and isinstance(symbolic.storage_size, torch.SymInt)
    assert not shape_env.guards


def test_item05_symbolic_fake_tensors_still_inspect():
    """Keeping SymInts in Layout must not break inspecting a tensor with symbolic sizes."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import (
        DimDynamic,
        ShapeEnv,
        StatelessSymbolicContext,
    )

    mode = FakeTensorMode(shape_env=ShapeEnv())
    dynamic = StatelessSymbolicContext(dynamic_sizes=[DimDynamic.DYNAMIC] * 2)
    fake = mode.from_tensor(torch.zeros(4, 6), symbolic_context=dynamic)
    assert isinstance(fake.shape[0], torch.SymInt)
    layout = sw.inspect(fake.t())
    # drawn with its symbols (sw.graph's symbolic layouts), and looking added no guard
    assert str(layout).startswith(f"float32 ({fake.shape[1]},{fake.shape[0]}):(1,{fake.shape[1]})")
    assert layout.shape == (fake.shape[1], fake.shape[0])
    assert not mode.shape_env.guards


# --- 6. threads: documented, and the documented way works -------------------------------------------


def test_item06_a_worker_thread_is_tracked_by_its_own_block():
    from pathlib import Path

    from stridewidget.copies.tracker import track_copies

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    for text in (track_copies.__doc__, readme):
        assert "per\n    thread" in text or "per thread" in text.replace("\n", " ")
        assert "threading.Thread" in text  # the runnable example (doctest / README test run it)
    worker_logs = []

    def worker(t):
        with sw.track_copies() as worker_log:
            t.t().contiguous()
        worker_logs.append(worker_log)

    x = torch.arange(6.0).reshape(2, 3)
    with sw.track_copies() as main_log:
        thread = threading.Thread(target=worker, args=(x,))
        thread.start()
        thread.join()
    assert main_log.events == []
    assert [e.kind for e in worker_logs[0].events] == ["view", "copy"]
    assert worker_logs[0].total_bytes == x.nbytes


# --- 7. lrn on empty input -------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.int64, torch.bool, torch.float16, torch.float32])
@pytest.mark.parametrize("shape", [(0, 3, 4), (2, 0, 4), (2, 3, 0, 5)])
def test_item07_lrn_on_empty_input_matches_local_response_norm(dtype, shape):
    x = torch.zeros(shape, dtype=dtype)
    expected = F.local_response_norm(x, 3)
    result = sw.tricks.lrn(x, 3)
    assert (result.dtype, result.shape) == (expected.dtype, expected.shape)


# --- 8. the playground is freed ---------------------------------------------------------------------


def test_item08_closed_playground_frees_itself_and_its_base():
    x = torch.arange(6.0)
    base, playground = weakref.ref(x), weakref.ref(sw.playground(x))
    playground().close()
    del x
    gc.collect()
    assert playground() is None and base() is None


# --- 9. DTensor ops in the tracker ------------------------------------------------------------------


def test_item09_dtensor_ops_are_tracked(mesh):
    local = torch.arange(6.0)
    dt = _dtensor(local, mesh)
    with sw.track_copies() as log:
        summed = dt + 1
        viewed = dt.view(2, 3)
        cloned = dt.clone()
    kinds = {e.call: e.kind for e in log.events}
    assert kinds["torch.Tensor.add"] == "compute"
    assert kinds["torch.Tensor.view"] == "view"
    assert kinds["torch.Tensor.clone"] == "copy"
    # oracle: the bytes of the local shard the clone made
    assert log.events[-1].bytes_copied == cloned._local_tensor.nbytes == local.nbytes
    assert torch.equal(summed.to_local(), local + 1) and viewed.shape == (2, 3)


# --- 10. functorch transforms in the tracker ---------------------------------------------------------


def test_item10_vmap_and_grad_are_tracked_through():
    x = torch.arange(24.0).reshape(4, 2, 3)
    with sw.track_copies() as log:
        torch.func.vmap(lambda m: m.t().contiguous())(x)
    view, copy = log.events[-2:]
    assert (view.kind, copy.kind) == ("view", "copy")
    assert copy.transforms == ("vmap",)
    # the physical copy: all 4 batch elements, batch dim included in the layouts
    assert copy.bytes_copied == x.nbytes
    assert copy.outputs[0].shape == (4, 3, 2) and view.inputs[0].shape == tuple(x.shape)

    def loss(w):
        return (w.clone() * 2).sum()

    with sw.track_copies() as log:
        gradient = torch.func.grad(loss)(torch.ones(3))
    assert torch.equal(gradient, torch.full((3,), 2.0))
    clone = next(e for e in log.events if e.call == "torch.Tensor.clone")
    assert (clone.kind, clone.bytes_copied, clone.transforms) == ("copy", 12, ("grad",))
    assert "[grad]" in log.to_text()


# --- 11. refreshing a freed FakeTensor view ----------------------------------------------------------


def test_item11_freed_fake_tensor_view_is_rebuilt_from_its_base():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        base = torch.zeros(4, 6)
    view = base[:, 1::2]
    expected = str(sw.inspect(view))
    widget = sw.show(v=view)
    del view
    gc.collect()
    widget.refresh()
    assert expected in widget.summary()
    widget.close()


# --- 12. numel past int64 ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda: sw.as_strided(torch.zeros(1), (2**32, 2**32), (0, 0), allow_overlap=True),
        lambda: sw.tricks.broadcast(torch.zeros(1, 1), (2**32, 2**32)),
        lambda: sw.as_strided(torch.zeros(1), (3, 2**62), (0, 0), allow_overlap=True),
    ],
)
def test_item12_views_with_more_than_int64_elements_are_refused(make):
    with pytest.raises(sw.LayoutError, match=r"2\*\*63 - 1"):
        make()


def test_item12_largest_views_torch_makes_still_pass_and_the_playground_refuses():
    size = (2**31, 2**32 - 1)  # 2**63 - 2**31 elements: torch makes it (the oracle)
    assert torch.zeros(1).as_strided(size, (0, 0)).numel() == size[0] * size[1]
    assert sw.as_strided(torch.zeros(1), size, (0, 0), allow_overlap=True).shape == size
    playground = sw.playground(torch.zeros(1, 1), size=(2**32, 2**32), stride=(0, 0))
    assert "2**63 - 1" in playground.error and playground.view is None
    playground.close()


# --- 13. a refused playground whose lengths differ displays ------------------------------------------


@pytest.mark.parametrize(
    ("size", "stride", "refusal"),
    [
        ((2, 2), (1,), "2 dims but stride"),
        ((), (1,), "0 dims but stride"),
        ((-1, 2), (1, 1), "negative entry"),  # no view either: nothing to enumerate
        ((2, -3), (1, 1), "negative entry"),
    ],
)
def test_item13_refused_playground_that_is_no_view_displays(size, stride, refusal):
    playground = sw.playground(torch.zeros(4), size=size, stride=stride)
    data, _ = playground._repr_mimebundle_()
    assert refusal in playground.error
    assert "refused" in data["text/plain"] and "refused" in data["text/html"]
    playground.close()


# --- 14. a hostile __repr__ never replaces the intended error ----------------------------------------


class _HostileRepr:
    def __repr__(self):
        raise RuntimeError("repr exploded")

    def __getattr__(self, name):
        raise ValueError(f"no attribute {name} either")


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda h: as_index(h, "size"), TypeError, r"size must be an int.*_HostileRepr"),
        (lambda h: sw.Layout(shape=h, strides=(1,)), TypeError, "shape must be a sequence"),
        (lambda h: sw.Layout(shape=(h,), strides=(1,)), TypeError, "shape entry must be an int"),
        (lambda h: sw.as_strided(torch.zeros(4), h, (1,)), TypeError, "size must be a sequence"),
        (lambda h: sw.as_strided(torch.zeros(4), (h,), (1,)), TypeError, "size entry"),
        (lambda h: sw.tricks.broadcast(torch.zeros(1), h), TypeError, "size must be a sequence"),
        (lambda h: sw.inspect(h), TypeError, "takes a torch.Tensor or numpy.ndarray"),
        (lambda h: sw.Layout((2,), (1,)).address(h), TypeError, "index must be ints"),
        (
            lambda h: build_scene({"x": torch.zeros(2)}, wrap=h),
            TypeError,
            r"wrap \(storage cells per row\) must be an int",
        ),
        (
            lambda h: sw.render_text(torch.zeros(2), wrap=h),
            TypeError,
            r"wrap \(storage cells per row\) must be an int",
        ),
    ],
)
def test_item14_hostile_repr_keeps_the_intended_error(call, error, message):
    with pytest.raises(error, match=message):
        call(_HostileRepr())


def test_item14_hostile_repr_in_a_scene():
    scene = build_scene({"x": torch.zeros(2, 3)})
    scene["tensors"][0]["order"] = _HostileRepr()
    with pytest.raises(sw.LayoutError, match=r"tensors\[0\]\.order must be an int"):
        validate_scene(scene)


# --- 15. DLPack capsules and __cuda_array_interface__ ------------------------------------------------


def test_item15_dlpack_capsule_says_what_to_pass_and_the_advice_works():
    source = torch.arange(6.0)
    capsule = source.__dlpack__()
    for call in (sw.inspect, lambda c: sw.as_strided(c, (2,), (1,)), sw.tricks.transpose):
        with pytest.raises(TypeError, match=r"torch\.from_dlpack\(capsule\)"):
            call(capsule)
    assert sw.same_storage(torch.from_dlpack(capsule), source)  # following the advice


def test_item15_cuda_array_interface_says_what_to_pass():
    class GpuArray:  # what CuPy / Numba device arrays expose (no DLPack here)
        @property
        def __cuda_array_interface__(self):
            return {"shape": (3,), "typestr": "<f4", "data": (0, False), "version": 3}

    with pytest.raises(TypeError, match=r"__cuda_array_interface__.*torch\.as_tensor\(x, device"):
        sw.inspect(GpuArray())


@pytest.mark.parametrize(
    ("make", "advice", "follow"),
    [
        (
            lambda: torch.arange(6.0).untyped_storage(),
            r"torch\.empty\(0, dtype=torch\.uint8",
            lambda s: torch.empty(0, dtype=torch.uint8, device=s.device).set_(s),
        ),
        (
            lambda: memoryview(bytearray(8)),
            r"numpy\.frombuffer\(x, dtype=numpy\.uint8\)",
            lambda b: np.frombuffer(b, dtype=np.uint8),
        ),
    ],
    ids=["storage", "buffer"],
)
def test_item15_storages_and_buffers_say_what_to_pass_and_the_advice_works(make, advice, follow):
    source = make()
    with pytest.raises(TypeError, match=advice):
        sw.inspect(source)
    assert sw.inspect(follow(source)).storage_nbytes in (8, 24)


# --- 16. the CLI validates --wrap before anything runs ------------------------------------------------


def test_item16_cli_refuses_wrap_zero_before_evaluating_or_printing(capsys):
    # EXPR would raise if it were evaluated: the --wrap refusal must come first
    with pytest.raises(SystemExit, match=r"--wrap .*must be a positive int"):
        cli.main(["1 / 0", "--wrap", "0"])
    with pytest.raises(SystemExit, match=r"--wrap .*must be a positive int"):
        cli.main(["torch.zeros(2)", "--wrap", "-3"])
    with pytest.raises(SystemExit, match="cannot write --html"):  # a folder is no page
        cli.main(["1 / 0", "--html", "."])
    assert capsys.readouterr().out == ""


def test_item14_cli_survives_an_exception_whose_message_raises():
    expression = (
        "(_ for _ in ()).throw(type('Odd', (Exception,), {'__str__': lambda self: 1 / 0})())"
    )
    message = escaped = None
    try:
        cli.main([expression])
    except SystemExit as exit_:
        message = str(exit_)
    except Exception as error:  # kept out of pytest's report: its message cannot be printed
        escaped = type(error).__name__
    assert escaped is None, f"the CLI let {escaped} escape"
    assert message is not None and "raised Odd: (its message could not be shown)" in message
