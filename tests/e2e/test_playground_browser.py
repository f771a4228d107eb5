"""The as_strided playground in a real browser (Debian's Chromium driven by Playwright).

(a) a static export — widget state embedded, no kernel: editing a stride redraws the view and shows
    the refusal message, all computed in the page;
(b) a live JupyterLab: a stride edit in the page reaches the kernel, where ``pg.view`` is the checked
    view for the new setting, and a setting made in Python moves the controls.

Screenshots go to ``artifacts/screenshots/``.
"""

from __future__ import annotations

import json
import os
import pathlib
import secrets
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

pytestmark = pytest.mark.browser

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


@pytest.fixture(scope="module")
def chromium():
    if not pathlib.Path(CHROMIUM).exists():
        pytest.fail(
            f"{CHROMIUM} is missing: `apt-get install -y chromium` (browser tests never skip)"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield browser
        browser.close()


@pytest.fixture
def tab(chromium):
    context = chromium.new_context(viewport={"width": 1200, "height": 1000})
    # Offline: anything not local is refused at once instead of hanging.
    context.route(
        "**/*",
        lambda route: (
            route.continue_()
            if route.request.url.startswith(("file:", "data:", "blob:", "http://127.0.0.1"))
            else route.abort()
        ),
    )
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    yield page
    context.close()


def _shot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def _standalone_page(widget, title: str) -> str:
    """A page with the widget's state embedded and every script inlined (offline, no kernel).

    Uses the pieces of ``python -m stridewidget --html`` (stridewidget/__main__.py).
    """
    from ipywidgets.embed import dependency_state, embed_data

    from stridewidget.__main__ import _anywidget_amd, _inline_script, _script_json, _vendor_script

    state = dependency_state([widget], drop_defaults=False)  # keep anywidget's _esm/_css
    data = embed_data(views=[widget], drop_defaults=False, state=state)
    views = "".join(
        f'<script type="application/vnd.jupyter.widget-view+json">{_script_json(view)}</script>'
        for view in data["view_specs"]
    )
    return (
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{title}</title>'
        + _inline_script(_vendor_script("require.js"))
        + _inline_script(_vendor_script("html-manager-embed-amd.js"))
        + _inline_script(_anywidget_amd())
        + '<script type="application/vnd.jupyter.widget-state+json">'
        + _script_json(data["manager_state"])
        + f"</script></head><body>{views}</body></html>"
    )


def _logical_values(root) -> list[str]:
    return root.locator(".pg-view .sw-cell-text").all_text_contents()


def _stride_input(root, dim: int):
    return root.locator(f'.pg-dim[data-dim="{dim}"] .pg-stride')


def test_static_export_edits_without_a_kernel(tab, tmp_path):
    import torch

    import stridewidget as sw

    pg = sw.playground()
    html = tmp_path / "playground.html"
    html.write_text(_standalone_page(pg, "playground, no kernel"), encoding="utf-8")
    tab.goto(html.as_uri())
    root = tab.locator(".pg-root")
    root.wait_for(timeout=30_000)
    assert _logical_values(root) == [str(i) for i in range(24)]
    assert "This is x itself" in root.locator(".pg-message").inner_text()
    _shot(tab, "playground_static_start")

    # stride 1 -> 0 along dim 1: every row becomes a broadcast of its first element
    _stride_input(root, 1).fill("0")
    assert root.locator(".pg-op").inner_text() == "x[:, 0:1].expand(4, 6)"
    assert _logical_values(root) == [str(6 * (i // 6)) for i in range(24)]
    assert "storage[0] is read by (0, 0), (0, 1)" in root.locator(".pg-overlap").inner_text()
    assert root.locator(".sw-storage .sw-count").all_text_contents() == ["×6"] * 4
    _shot(tab, "playground_static_broadcast")

    # out of bounds: the page refuses it with the very message Python gives
    _stride_input(root, 1).fill("2")
    python_says = sw.playground(torch.arange(24).view(4, 6), stride=(6, 2)).error
    message = root.locator(".pg-message")
    assert "pg-refused" in message.get_attribute("class")
    assert message.inner_text() == f"Refused (never sent to torch.as_strided): {python_says}"
    assert root.locator(".pg-view").count() == 0
    _shot(tab, "playground_static_refused")

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
    expected = sw.tricks.checkerboard(torch.arange(24).view(4, 6)).flatten().tolist()
    assert _logical_values(root) == [str(v) for v in expected]
    _shot(tab, "playground_static_checkerboard")

    # hover linking: a logical cell lights up the storage element it reads, with the formula
    root.locator('.pg-view .sw-lcell[data-slice="1"][data-r="1"][data-c="2"]').hover()
    lit = root.locator(".sw-scell.sw-hl")
    assert lit.count() == 1 and lit.get_attribute("data-cell") == str(
        expected[6 * 1 + 3 * 1 + 2]
    )  # view[0, 1, 1, 2]
    assert "storage[" in root.locator(".pg-status").inner_text()

    # the theme follows the page: a dark page gets a dark widget
    tab.emulate_media(color_scheme="dark")
    background = root.evaluate("e => getComputedStyle(e).backgroundColor")
    channels = [int(c) for c in background[background.index("(") + 1 : -1].split(",")[:3]]
    assert sum(channels) < 150, background
    _shot(tab, "playground_static_dark")
    assert tab.errors == []


# --- JupyterLab ------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    import nbformat

    root = tmp_path_factory.mktemp("labroot")
    home = tmp_path_factory.mktemp("labhome")
    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                "import torch\nimport stridewidget as sw\n"
                "x = torch.arange(24).view(4, 6)\npg = sw.playground(x)\npg"
            )
        ]
    )
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nbformat.write(notebook, root / "playground.ipynb")
    settings = home / "settings"
    for extension, body in {
        "@jupyterlab/apputils-extension/notification": {"fetchNews": "false"},
        "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
    }.items():
        path = settings / f"{extension}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(body))
    port, token = _free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "IPYTHONDIR": str(home / "ipython"),
        "JUPYTER_PLATFORM_DIRS": "1",
    }
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        f"--port={port}",
        "--ServerApp.ip=127.0.0.1",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.expose_app_in_browser=True",
        f"--LabApp.workspaces_dir={home / 'workspaces'}",
        f"--LabApp.user_settings_dir={settings}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    log_path = home / "server.log"
    with open(log_path, "w") as log:
        server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 90
            while True:
                try:
                    urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=1)
                    break
                except OSError:
                    if server.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(
                            f"jupyter lab did not start:\n{log_path.read_text()[-2000:]}"
                        ) from None
                    time.sleep(0.25)
            yield base, token
        finally:
            server.terminate()  # our own child only
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()


KERNEL_EVAL = """async (code) => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const future = kernel.requestExecute({ code, store_history: false });
  let out = null;
  future.onIOPub = (msg) => {
    const kind = msg.header.msg_type;
    if (kind === "execute_result") out = msg.content.data["text/plain"];
    else if (kind === "stream") out = (out ?? "") + msg.content.text;
    else if (kind === "error") out = "ERROR " + msg.content.ename + ": " + msg.content.evalue;
  };
  await future.done;
  return out;
}"""


def _kernel(page, code: str) -> str | None:
    return page.evaluate(KERNEL_EVAL, code)


def _poll_kernel(page, code: str, expected: str, timeout: float = 20.0) -> str | None:
    deadline = time.monotonic() + timeout
    value = None
    while time.monotonic() < deadline:
        value = _kernel(page, code)
        if value == expected:
            break
        time.sleep(0.2)
    return value


def test_jupyterlab_edit_reaches_pg_view(lab, tab):
    base, token = lab
    tab.goto(f"{base}/lab/tree/playground.ipynb?token={token}&reset")
    tab.wait_for_function(
        "() => window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel"
        "?.status === 'idle'",
        timeout=120_000,
    )
    tab.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    root = tab.locator(".jp-OutputArea-output .pg-root").first
    root.wait_for(timeout=90_000)
    assert _logical_values(root) == [str(i) for i in range(24)]

    # page -> kernel: the edit syncs and pg.view is the checked view for it
    _stride_input(root, 1).fill("0")
    assert root.locator(".pg-op").inner_text() == "x[:, 0:1].expand(4, 6)"
    assert _poll_kernel(tab, "pg.stride", "[6, 0]") == "[6, 0]"
    assert _kernel(tab, "torch.equal(pg.view, x[:, 0:1].expand(4, 6)), pg.view.stride()") == (
        "(True, (6, 0))"
    )
    assert _kernel(tab, "pg.code") == (
        "'torch.as_strided(x, size=(4, 6), stride=(6, 0), storage_offset=0)'"
    )
    _shot(tab, "playground_lab_broadcast")

    # a refused setting: the same message on both sides, pg.view is None
    _stride_input(root, 0).fill("9")
    page_message = root.locator(".pg-message").inner_text()
    assert _poll_kernel(tab, "pg.view is None", "True") == "True"
    python_error = _kernel(tab, "print(pg.error)").strip()
    assert page_message == f"Refused (never sent to torch.as_strided): {python_error}"
    _shot(tab, "playground_lab_refused")

    # kernel -> page: a setting made in Python moves the controls and the picture
    _kernel(tab, "pg.size, pg.stride = [6, 4], [1, 6]")
    root.locator(".pg-op", has_text="x.t()").wait_for(timeout=20_000)
    assert root.locator(".pg-stride").evaluate_all("els => els.map(e => e.value)") == ["1", "6"]
    expected = [str(v) for v in range(24)]
    transposed = [expected[6 * c + r] for r in range(6) for c in range(4)]
    assert _logical_values(root) == transposed
    assert _kernel(tab, "torch.equal(pg.view, x.t())") == "True"
    _shot(tab, "playground_lab_transpose")
    assert tab.errors == []
