"""What only a CUDA device shows: the inspector and the overlap solver never wait for the device;
the copy tracker, the sanitizer and the audit see a CUDA training step as torch's profiler does;
a picture of a CUDA tensor brings a window of it to the host, not the tensor.

Skipped without CUDA (this machine's CI has none); on a GPU machine: ``pytest tests/test_cuda.py``.
The oracles are torch's: ``torch.cuda.set_sync_debug_mode("error")`` (raises at any operation
that synchronises with the device), the tensors' own ``stride()``/``storage_offset()``, brute
force over element offsets, and ``torch.profiler``'s device-memory accounting.
"""

from __future__ import annotations

import itertools
from contextlib import contextmanager

import pytest
import torch
from models import outermost_moves
from torch.profiler import ProfilerActivity, profile

import stridewidget as sw

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


@contextmanager
def never_waits():
    """Any operation that synchronises with the device raises inside the block."""
    torch.cuda.synchronize()
    before = torch.cuda.get_sync_debug_mode()
    torch.cuda.set_sync_debug_mode("error")
    try:
        yield
    finally:
        torch.cuda.set_sync_debug_mode(before)


def _views() -> dict[str, torch.Tensor]:
    x = torch.arange(120.0, device="cuda").reshape(4, 5, 6)
    z = torch.randn(3, 4, dtype=torch.complex64, device="cuda")
    return {
        "contiguous": x,
        "permuted": x.permute(2, 0, 1),
        "sliced": x[1:, ::2, 3:],
        "expanded": x[:1].expand(3, 5, 6),
        "as_strided": x.view(-1).as_strided((5, 4), (3, 7), 2),
        "channels_last": torch.randn(2, 3, 4, 5, device="cuda").to(
            memory_format=torch.channels_last
        ),
        "conj": z.conj(),
        "as_int": x.view(torch.int32),
        "empty": x[:, :0],
        "half": torch.randn(7, 9, device="cuda", dtype=torch.half).t(),
    }


def test_the_oracle_catches_a_wait():
    x = torch.arange(6.0, device="cuda")
    with pytest.raises(RuntimeError, match="synchroniz"), never_waits():
        x.sum().item()


def test_inspect_reads_each_layout_without_waiting_for_the_device():
    views = _views()
    with never_waits():
        layouts = {name: sw.inspect(v) for name, v in views.items()}
    for name, v in views.items():
        layout = layouts[name]
        assert layout.shape == tuple(v.shape), name
        assert layout.strides == tuple(v.stride()), name
        assert layout.offset == v.storage_offset(), name
        assert layout.storage_size * layout.itemsize == v.untyped_storage().nbytes(), name
        assert layout.device == "cuda:0", name


def _offsets(v: torch.Tensor) -> set[int]:
    """Brute force: the byte offsets every element of ``v`` covers in its storage."""
    index = torch.arange(v.untyped_storage().nbytes() // v.element_size())
    at = index.as_strided(v.shape, v.stride(), v.storage_offset()).flatten().tolist()
    return {o * v.element_size() + b for o in at for b in range(v.element_size())}


def test_overlap_of_cuda_views_is_exact_and_never_waits():
    x = torch.arange(240.0, device="cuda")
    views = [
        x[::2],
        x[1::2],
        x[4:40],
        x.view(12, 20)[:, ::3],
        x.view(12, 20).t()[5:],
        x.as_strided((6, 6), (13, 2), 1),
        x.as_strided((5, 7), (20, 3), 7),
        x.view(torch.int16)[1::4],
        x[200:],
    ]
    pairs = list(itertools.combinations(views, 2))
    with never_waits():
        found = [sw.overlap(a, b) for a, b in pairs]
    expected = [bool(_offsets(a) & _offsets(b)) for a, b in pairs]
    assert found == expected
    assert any(expected) and not all(expected)


def _device_bytes(event) -> int:
    for name in ("device_memory_usage", "cuda_memory_usage"):
        if hasattr(event, name):
            return getattr(event, name)
    raise AttributeError("this torch's profiler events say no device memory")


def _profiled_copy_bytes(run) -> int:
    """Device bytes the outermost data-moving ATen ops allocate while ``run`` runs."""
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], profile_memory=True
    ) as prof:
        run()
        torch.cuda.synchronize()
    return sum(max(_device_bytes(event), 0) for event in outermost_moves(prof.events()))


def test_track_copies_on_cuda_counts_the_bytes_the_profiler_sees():
    x = torch.randn(64, 48, device="cuda")

    def step():
        a = x.t().contiguous()  # a copy
        b = x[:, ::2].clone()  # a copy
        c = x.view(-1)  # a view
        d = torch.cat([x, x])  # a copy
        return a, b, c, d.flip(0)  # a copy

    step()
    expected = _profiled_copy_bytes(step)
    with sw.track_copies() as log:
        step()
    assert expected == 5 * x.nbytes + x.nbytes // 2  # the profiler saw the four copies
    assert sum(e.bytes_copied for e in log.copies) == expected
    assert {e.outputs[0].device for e in log.copies} == {"cuda:0"}


def test_sanitize_refuses_an_overlapping_cuda_write_before_it_runs():
    x = torch.arange(10.0, device="cuda")
    with pytest.raises(sw.LayoutHazard, match=r"aten\.mul_"), sw.sanitize():
        x.as_strided((4, 3), (2, 1)).mul_(2)
    assert torch.equal(x, torch.arange(10.0, device="cuda"))
    y = torch.zeros(4, 6, device="cuda")
    with sw.sanitize() as report:
        y[:, ::2].mul_(3)
        y.t().relu_()
    assert report.ok


def _net() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3),
        torch.nn.BatchNorm2d(8),
        torch.nn.ReLU(),
        torch.nn.Flatten(),
        torch.nn.Linear(8 * 6 * 6, 4),
    ).cuda()


def test_audit_of_a_cuda_step_matches_the_profiler_and_restores_the_model():
    model = _net()
    x = torch.randn(2, 3, 8, 8, device="cuda").permute(0, 1, 3, 2)  # not contiguous
    state = {k: v.clone() for k, v in model.state_dict().items()}
    report = sw.audit(model, x)
    for key, value in model.state_dict().items():
        assert torch.equal(value, state[key]), key
    assert all(p.grad is None for p in model.parameters())
    forward = _profiled_copy_bytes(lambda: model(x))
    assert sum(c.bytes for c in report.copies if c.phase == "forward") == forward


def test_a_picture_of_a_large_cuda_tensor_brings_a_window_to_the_host():
    from stridewidget.scene.build import build_scene

    x = torch.randn(2000, 2000, device="cuda")
    build_scene({"x": x})  # warm-up
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        scene = build_scene({"x": x})
    to_host = {"aten::to", "aten::_to_copy", "aten::copy_", "aten::cpu"}
    outermost = [
        e
        for e in prof.events()
        if e.name in to_host and (e.cpu_parent is None or e.cpu_parent.name not in to_host)
    ]
    moved = sum(max(e.cpu_memory_usage, 0) for e in outermost)
    assert list(scene["tensors"][0]["layout"]["shape"]) == [2000, 2000]
    assert 0 < moved < x.nbytes // 100  # a window, not the 16 MB tensor
