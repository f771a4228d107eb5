"""Issue 41: ``sw.sanitize``'s dispatch mode runs without torch's per-op dynamo-disable wrapper
while no ``torch.compile`` frame hook is set, and hands over to it when one is: a compiled
function in the block is checked as it is run eagerly, and dynamo never compiles the handler."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

import stridewidget as sw

sw.sanitize  # noqa: B018 - loaded first, so the submodule below is the one it runs
sanitize_module = sys.modules["stridewidget.check.sanitizer"]

UNWRAPPED = not hasattr(sanitize_module._SanitizeMode.__dict__["__torch_dispatch__"], "__wrapped__")


@pytest.fixture
def loud(monkeypatch):
    """Counts the ops whose handler found a frame hook set (and handed over to torch's wrapper)."""
    count = [0]
    quiet = sanitize_module._dynamo_quiet

    def counting() -> bool:
        answer = quiet()
        count[0] += not answer
        return answer

    torch._dynamo.eval_frame.skip_code(counting.__code__)  # run as the handler runs it
    monkeypatch.setattr(sanitize_module, "_dynamo_quiet", counting)
    return count


def _overlapping_write(x: torch.Tensor) -> torch.Tensor:
    # rows overlap by one element: mul_ writes shared elements twice (torch runs it silently)
    return x.as_strided((4, 3), (2, 1)).mul_(2)


def _kinds(report) -> list[tuple[str, str]]:
    return [(h.kind, h.op) for h in report.hazards]


def test_the_handler_is_unwrapped_and_quiet_outside_compile():
    if not UNWRAPPED:
        pytest.skip("this torch keeps its wrapper (no frame-hook reader)")
    assert sanitize_module._dynamo_quiet()
    wrapped = sanitize_module._dynamo_wrapped
    assert wrapped.__wrapped__ is sanitize_module._SanitizeMode.__dict__["__torch_dispatch__"]


def test_a_compiled_function_in_the_block_is_checked_as_run_eagerly(loud):
    compiled = torch.compile(_overlapping_write, backend="eager")
    compiled(torch.arange(10.0))  # compiled before the block
    with sw.sanitize(on_hazard="collect") as eager:
        _overlapping_write(torch.arange(10.0))
    assert _kinds(eager) and _kinds(eager)[0][1] == "aten.mul_"  # the oracle: torch's own op
    loud[0] = 0
    frames = dict(torch._dynamo.utils.counters["frames"])
    x = torch.arange(10.0)
    with sw.sanitize(on_hazard="collect") as report:
        compiled(x)
    # dynamo compiled no frame in the block: not the handler's, nor the check it starts with
    assert dict(torch._dynamo.utils.counters["frames"]) == frames
    assert _kinds(report) == _kinds(eager)
    # the write ran ("collect"), as torch runs it: the same bytes as outside any block
    expected = torch.arange(10.0)
    _overlapping_write(expected)
    assert torch.equal(x, expected)
    if UNWRAPPED:  # dynamo's hook was on while the ops ran: each went through torch's wrapper
        assert loud[0] > 0
    x = torch.arange(10.0)
    with pytest.raises(sw.LayoutHazard), sw.sanitize():  # raise mode: refused before it ran
        compiled(x)
    assert torch.equal(x, torch.arange(10.0))
    with sw.sanitize(on_hazard="collect") as after:  # quiet again once the hook is off
        _overlapping_write(torch.arange(10.0))
    assert _kinds(after) == _kinds(eager)


def test_a_stance_that_runs_compiled_code_only_is_kept(loud):
    with sw.sanitize(on_hazard="collect") as plain:
        _overlapping_write(torch.arange(10.0))
    with torch.compiler.set_stance("eager_on_recompile"), sw.sanitize(on_hazard="collect") as log:
        _overlapping_write(torch.arange(10.0))
    assert _kinds(log) == _kinds(plain)
    if UNWRAPPED:  # the wrapper would set the run-only hook (False): handed over for each op
        assert loud[0] > 0


def test_nested_blocks_the_inner_one_decides():
    x = torch.arange(10.0)
    with sw.sanitize(on_hazard="collect") as outer:
        with sw.sanitize(on_hazard="collect") as inner:
            _overlapping_write(x)
        y = torch.arange(10.0)
        _overlapping_write(y)
    assert len(inner.hazards) == 1
    assert len(outer.hazards) == 1  # only the write made outside the inner block


_IMPORT_ORDERS = {
    "the module first": "import stridewidget.check.sanitizer\nimport stridewidget as sw\n",
    "the report class first": "from stridewidget.check.sanitizer import SanitizeReport\n"
    "import stridewidget as sw\n",
    "sw.sanitize first": "import stridewidget as sw\nsw.sanitize\n"
    "import stridewidget.check.sanitizer\n",
    "check.sanitize first": "from stridewidget.check import sanitize\nimport stridewidget as sw\n",
    "check after a block": "import stridewidget as sw, torch\nwith sw.sanitize(): pass\n",
}


@pytest.mark.parametrize("order", sorted(_IMPORT_ORDERS))
def test_sanitize_stays_the_function_whatever_was_imported_first(order):
    # the module was named `sanitize` too: importing it set the package attribute to the module
    # ("'module' object is not callable" from sw.sanitize or from stridewidget.check.sanitize)
    code = _IMPORT_ORDERS[order] + (
        "import torch, stridewidget.check as check\n"
        "from stridewidget.check import sanitize\n"
        "from stridewidget.check.sanitizer import SanitizeReport\n"
        "assert sw.sanitize is sanitize is check.sanitize, (sw.sanitize, sanitize)\n"
        "with sanitize(on_hazard='collect') as r:\n"
        "    torch.arange(10.0).as_strided((4, 3), (2, 1)).mul_(2)\n"
        "assert isinstance(r, SanitizeReport) and len(r.hazards) == 1, r\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
