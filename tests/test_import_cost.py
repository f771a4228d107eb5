"""What using a part of the package loads: NumPy-only use never imports torch, and the errors a
user catches (``except sw.LayoutHazard``) load no dispatch machinery."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _loaded(code: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_numpy_only_use_never_imports_torch():
    code = (
        "import sys, numpy as np, stridewidget as sw\n"
        "a = np.arange(12.0).reshape(3, 4)[:, ::2]\n"
        "sw.inspect(a); sw.show(a=a); sw.render_text(a); sw.render_svg(a)\n"
        "print('torch' in sys.modules)"
    )
    assert _loaded(code) == "False"


def test_catching_a_layout_hazard_loads_no_dispatch_machinery():
    code = (
        "import sys, stridewidget as sw\n"
        "before = set(sys.modules)\n"
        "try:\n"
        "    raise sw.LayoutHazard('x', kind='internal-overlap')\n"
        "except sw.LayoutHazard as hazard:\n"
        "    assert isinstance(hazard, sw.LayoutError) and hazard.kind == 'internal-overlap'\n"
        "new = set(sys.modules) - before\n"
        "print('torch' in sys.modules, sorted(m for m in new if m.startswith('stridewidget')))"
    )
    assert _loaded(code) == "False ['stridewidget.check', 'stridewidget.check.hazard']"
