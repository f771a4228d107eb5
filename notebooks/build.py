"""Execute the tutorial sources (jupytext percent-format ``NN_*.py``) into saved ``NN_*.ipynb``.

    .venv/bin/python notebooks/build.py            # every notebooks/[0-9][0-9]_*.py
    .venv/bin/python notebooks/build.py 02 04      # only those whose name starts so

Each source is read with jupytext, run top to bottom with nbclient in ``notebooks/`` (the
kernel's working directory, so ``claims.toml`` and ``results/`` resolve), and saved with its
outputs. Widget outputs are saved as their static picture (SVG/HTML) only. A failing cell, a
cell running past ``CELL_TIMEOUT_S`` or a dying kernel stops that notebook (its saved ``.ipynb``
is left untouched, the reason is printed), the others are still built, and the script exits
with status 1.
``tests/test_notebooks_meta.py`` checks that every saved notebook matches its source.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

HERE = Path(__file__).resolve().parent
CELL_TIMEOUT_S = 240
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}


def sources(prefixes: list[str] | None = None) -> list[Path]:
    """The notebook sources, in reading order; only those starting with one of ``prefixes``."""
    found = sorted(HERE.glob("[0-9][0-9]_*.py"))
    return [path for path in found if not prefixes or path.name.startswith(tuple(prefixes))]


def read_source(path: Path) -> nbformat.NotebookNode:
    """The unexecuted notebook a percent-format source describes."""
    notebook = jupytext.read(path, fmt="py:percent")
    notebook.metadata = {"kernelspec": KERNELSPEC, "language_info": {"name": "python"}}
    return notebook


def keep_static_pictures(notebook: nbformat.NotebookNode) -> None:
    """Save each widget output as its static SVG (``text/html``) and text, not as a live view.

    A saved widget view points at a model that only exists while its kernel runs (JupyterLab
    shows "model not found", nbviewer nothing); the static picture in the same bundle shows
    everywhere, and running the cell brings the live widget back.
    """
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            output.get("data", {}).pop(WIDGET_VIEW, None)
    notebook.metadata.pop("widgets", None)


def execute(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Run every cell in a fresh kernel whose working directory is ``notebooks/``."""
    client = NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT_S,
        kernel_name="python3",
        resources={"metadata": {"path": str(HERE)}},
    )
    return client.execute()


def build(path: Path) -> Path:
    """Execute one source and save it beside itself as ``.ipynb``."""
    notebook = execute(read_source(path))
    keep_static_pictures(notebook)
    target = path.with_suffix(".ipynb")
    nbformat.write(notebook, target)
    return target


def main(argv: list[str]) -> None:
    chosen = sources(argv)
    if not chosen:
        raise SystemExit(f"no notebook source in {HERE} starts with {' or '.join(argv)}")
    failed = []
    for path in chosen:
        start = time.perf_counter()
        # one broken notebook must not keep the others from being rebuilt
        try:
            target = build(path)
        except (CellExecutionError, CellTimeoutError, DeadKernelError) as error:
            failed.append(path.name)
            print(f"FAILED {path.name}:\n{error}", file=sys.stderr)
            continue
        print(f"built {target.relative_to(HERE.parent)} in {time.perf_counter() - start:.0f} s")
    if failed:
        raise SystemExit(f"not rebuilt (see the errors above): {', '.join(failed)}")


if __name__ == "__main__":
    main(sys.argv[1:])
