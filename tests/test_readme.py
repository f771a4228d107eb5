"""The README's Python examples run, in order, as one session: they are documentation that can fail."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_blocks_run():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    assert len(blocks) >= 2, "the README should show the inspector and the widget in Python"
    namespace: dict = {}
    for number, block in enumerate(blocks):
        code = compile(block, f"README.md python block {number}", "exec")
        exec(code, namespace)
