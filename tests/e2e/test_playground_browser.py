"""The as_strided playground in a real browser (Debian's Chromium driven by Playwright).

(a) a static export — widget state embedded, no kernel: editing a stride gives its verdict (the op
    it is, its overlap, the refusal message) computed in the page; the picture, which Python lays
    out, stays the saved one and says that drawing another needs a kernel;
(b) a live JupyterLab: a stride edit in the page reaches the kernel, where ``pg.view`` is the checked
    view for the new setting and Python's picture of it is painted; a setting made in Python moves
    the controls.

Screenshots go to ``artifacts/screenshots/``.
"""

from __future__ import annotations

import nbformat
import pytest

from stridewidget.notebook.page import widget_page

from .conftest import kernel_eval, poll_kernel, screenshot

pytestmark = pytest.mark.browser


def _shot(page, name: str) -> None:
    screenshot(page, name, full_page=True)


def _page_errors(page) -> list[str]:
    return [line for line in page.console_log if line.startswith("pageerror")]


def _standalone_page(widget, title: str) -> str:
    """The page ``python -m stridewidget --html`` writes, for this widget (offline, no kernel)."""
    return widget_page(widget, title=title)


def _logical_values(root) -> list[str]:
    """The values the painted view (the picture's second tensor) shows, row-major."""
    cells = root.locator('.pg-picture g.sws-lcell[data-tensor="t1"] text.sws-role-v')
    return cells.all_text_contents()


def _stride_input(root, dim: int):
    return root.locator(f'.pg-dim[data-dim="{dim}"] .pg-stride')


def test_static_export_edits_without_a_kernel(page, tmp_path):
    import torch

    import stridewidget as sw

    pg = sw.playground()
    html = tmp_path / "playground.html"
    html.write_text(_standalone_page(pg, "playground, no kernel"), encoding="utf-8")
    page.goto(html.as_uri())
    root = page.locator(".pg-root")
    root.wait_for(timeout=30_000)
    assert _logical_values(root) == [str(i) for i in range(24)]
    assert "This is x itself" in root.locator(".pg-message").inner_text()
    _shot(page, "playground_static_start")

    # hover linking on the painted picture: a logical cell lights the storage element it reads
    root.locator(
        '.pg-picture g.sws-lcell[data-tensor="t1"][data-r="2"][data-c="3"] rect'
    ).first.hover()
    lit = root.locator(".pg-picture g.sws-scell.sw-hl")
    assert lit.count() == 1 and lit.get_attribute("data-cell") == str(2 * 6 + 3)
    assert "storage[15]" in root.locator(".pg-status").inner_text()

    # stride 1 -> 0 along dim 1: the verdict is the page's own, at once; the picture needs Python
    _stride_input(root, 1).fill("0")
    assert root.locator(".pg-op").inner_text() == "x[:, 0:1].expand(4, 6)"
    assert "storage[0] is read by (0, 0), (0, 1)" in root.locator(".pg-overlap").inner_text()
    stale = root.locator(".pg-stale").inner_text()
    assert "needs a running kernel" in stale and "stride=(6, 1)" in stale
    assert _logical_values(root) == [str(i) for i in range(24)]  # the saved picture, said so
    _shot(page, "playground_static_broadcast")

    # out of bounds: the page refuses it with the very message Python gives
    _stride_input(root, 1).fill("2")
    python_says = sw.playground(torch.arange(24).view(4, 6), stride=(6, 2)).error
    message = root.locator(".pg-message")
    assert "pg-refused" in message.get_attribute("class")
    refusal = root.locator(".pg-refusal").inner_text()
    assert refusal == f"Refused (never sent to torch.as_strided): {python_says}"
    assert root.locator(".pg-escape").inner_text().startswith("3 of the 24 logical indices")
    _shot(page, "playground_static_refused")

    # still usable: a preset loads, and the seed's checkerboard shows its overlap
    root.locator('button[data-preset="seed-checkerboard"]').click()
    assert root.locator(".pg-stride").evaluate_all("els => els.map(e => e.value)") == [
        "12",
        "2",
        "2",
    ]
    assert "Overlaps itself" in root.locator(".pg-overlap").inner_text()
    root.locator('button[data-preset="checkerboard"]').click()
    assert root.locator(".pg-op").inner_text() == "sw.tricks.checkerboard(x)"
    # back to the saved setting: the picture is current again
    root.locator('button[data-preset="base"]').click()
    assert root.locator(".pg-stale").inner_text() == ""
    assert root.get_attribute("data-picture-current") == "true"

    # the theme follows the page: a dark page gets a dark widget
    page.emulate_media(color_scheme="dark")
    background = root.evaluate("e => getComputedStyle(e).backgroundColor")
    channels = [int(c) for c in background[background.index("(") + 1 : -1].split(",")[:3]]
    assert sum(channels) < 150, background
    _shot(page, "playground_static_dark")
    assert _page_errors(page) == []
    assert page.external_requests == []


# --- JupyterLab ------------------------------------------------------------------------------------

NOTEBOOK_CELL = "import torch\nimport stridewidget as sw\nx = torch.arange(24).view(4, 6)\npg = sw.playground(x)\npg"


def test_jupyterlab_edit_reaches_pg_view(lab_server, page):
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(NOTEBOOK_CELL)])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nbformat.write(notebook, lab_server["root"] / "playground.ipynb")
    url, token = lab_server["url"], lab_server["token"]
    page.goto(f"{url}/lab/tree/playground.ipynb?token={token}&reset")
    page.wait_for_function(
        "() => window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel"
        "?.status === 'idle'",
        timeout=120_000,
    )
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    root = page.locator(".jp-OutputArea-output .pg-root").first
    root.wait_for(timeout=90_000)
    assert _logical_values(root) == [str(i) for i in range(24)]

    # page -> kernel: the edit syncs, pg.view is the checked view for it, Python's picture is painted
    _stride_input(root, 1).fill("0")
    assert root.locator(".pg-op").inner_text() == "x[:, 0:1].expand(4, 6)"
    assert poll_kernel(page, "pg.stride", "[6, 0]") == "[6, 0]"
    page.wait_for_function(
        "r => r.dataset.pictureCurrent === 'true'", arg=root.element_handle(), timeout=20_000
    )
    assert _logical_values(root) == [str(6 * (i // 6)) for i in range(24)]
    assert kernel_eval(page, "torch.equal(pg.view, x[:, 0:1].expand(4, 6)), pg.view.stride()") == (
        "(True, (6, 0))"
    )
    assert kernel_eval(page, "pg.code") == (
        "'torch.as_strided(x, size=(4, 6), stride=(6, 0), storage_offset=0)'"
    )
    _shot(page, "playground_lab_broadcast")

    # a refused setting: the same message on both sides, pg.view is None
    _stride_input(root, 0).fill("9")
    page_message = root.locator(".pg-refusal").inner_text()
    assert poll_kernel(page, "pg.view is None", "True") == "True"
    page.wait_for_function(
        "r => r.dataset.pictureCurrent === 'true'", arg=root.element_handle(), timeout=20_000
    )
    escaping = sorted({9 * i + 0 * j for i in range(4) for j in range(6)} - set(range(24)))
    phantoms = root.locator(".pg-picture g.sws-phantom").evaluate_all(
        "els => els.map(e => Number(e.dataset.cell))"
    )
    assert phantoms == escaping
    python_error = kernel_eval(page, "print(pg.error)").strip()
    assert page_message == f"Refused (never sent to torch.as_strided): {python_error}"
    _shot(page, "playground_lab_refused")

    # kernel -> page: a setting made in Python moves the controls and the picture
    kernel_eval(page, "pg.size, pg.stride = [6, 4], [1, 6]")
    root.locator(".pg-op", has_text="x.t()").wait_for(timeout=20_000)
    page.wait_for_function(
        "r => r.dataset.pictureCurrent === 'true'", arg=root.element_handle(), timeout=20_000
    )
    assert root.locator(".pg-stride").evaluate_all("els => els.map(e => e.value)") == ["1", "6"]
    expected = [str(v) for v in range(24)]
    transposed = [expected[6 * c + r] for r in range(6) for c in range(4)]
    assert _logical_values(root) == transposed
    assert kernel_eval(page, "torch.equal(pg.view, x.t())") == "True"
    _shot(page, "playground_lab_transpose")
    assert _page_errors(page) == []
