"""Shared fixtures for the browser tests: Debian's Chromium driven by Playwright (Python), offline.

* ``/usr/bin/chromium`` (``playwright install`` does not work here).  A missing browser is a
  failure when the ``CI`` environment variable is set, a skip (with the reason) otherwise.
* Every request that is not ``file:``/``data:``/``blob:`` or to our own 127.0.0.1 server is
  aborted and recorded in ``page.external_requests``: pages must work without the internet.
* ``lab_server``: a JupyterLab server on 127.0.0.1 only (random port, random token, private config
  and runtime dirs), shared by a test module and stopped at its end.
* Screenshots go to ``artifacts/screenshots/`` (git-ignored), console logs next to them.
* ``cdn_copies``: local, checksummed copies of the scripts an nbconvert page with widget state
  loads from CDNs (the package itself needs none of them: its pages host the widget themselves).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pathlib
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
ARTIFACTS = pathlib.Path(os.environ.get("E2E_ARTIFACTS", ROOT / "artifacts"))
SCREENSHOTS = ARTIFACTS / "screenshots"
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
LOCAL = ("file:", "data:", "blob:", "about:", "http://127.0.0.1", "ws://127.0.0.1")


def require_or_skip(ok: bool, reason: str) -> None:
    """Skip locally, fail in CI: a browser layer that silently does not run is not a pass."""
    if ok:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set: browser tests must run)")
    pytest.skip(reason)


# Module scope, not session: Playwright's sync API allows one running instance at a time, and
# other test modules may start their own.
@pytest.fixture(scope="module")
def browser() -> Iterator:
    require_or_skip(
        pathlib.Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: apt-get install -y chromium"
    )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        # Playwright adds --headless and a fresh temporary profile itself.
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, request) -> Iterator:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    external: list[str] = []

    def offline(route) -> None:
        url = route.request.url
        if url.startswith(LOCAL):
            route.continue_()
            return
        external.append(url)
        route.abort()  # no internet here: fail fast instead of hanging

    context.route("**/*", offline)
    tab = context.new_page()
    tab.external_requests = external  # type: ignore[attr-defined]
    tab.console_log = []  # type: ignore[attr-defined]
    tab.on("console", lambda message: tab.console_log.append(f"{message.type}: {message.text}"))
    tab.on("pageerror", lambda error: tab.console_log.append(f"pageerror: {error}"))
    yield tab
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    (SCREENSHOTS / f"{request.node.name}.console.txt").write_text("\n".join(tab.console_log))
    context.close()


# npm spec, file inside the package, pinned sha256: what nbconvert's page loads from unpkg/jsdelivr.
CDN_FILES = {
    "require.js": (
        "requirejs@2.3.8",
        "require.js",
        "c1fc6b1d53af7522f78d664922abb32acac64ed0ecccb8f907f1e6fc7262563a",
    ),
    "html-manager-embed-amd.js": (
        "@jupyter-widgets/html-manager@1.0.15",
        "dist/embed-amd.js",
        "ca87dff57c70ffb2658794fde0eab0e27e5f5472a1f5df7ab2b08e1039fc4b72",
    ),
}
CDN_CACHE = ROOT / ".tmp" / "cdn"


def _sha256(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="session")
def cdn_copies(tmp_path_factory) -> dict[str, pathlib.Path]:
    """File name → local copy of a CDN script (``npm pack`` once, then cached in ``.tmp/cdn``).

    Only the nbconvert-with-widget-state test needs these: it checks the standard widget HTML
    manager draws our widget.  Fetched from the npm registry (tarballs only) and checked against
    pinned SHA-256 sums; without npm it fails in CI and skips locally.
    """
    CDN_CACHE.mkdir(parents=True, exist_ok=True)
    copies = {}
    for name, (spec, inner, digest) in CDN_FILES.items():
        path = CDN_CACHE / name
        if not (path.is_file() and _sha256(path) == digest):
            require_or_skip(shutil.which("npm") is not None, "npm is missing: cannot fetch " + spec)
            work = tmp_path_factory.mktemp("npm-pack")
            packed = subprocess.run(
                ["npm", "pack", "--silent", spec],
                cwd=work,
                capture_output=True,
                text=True,
                timeout=120,
            )
            require_or_skip(packed.returncode == 0, f"npm pack {spec} failed: {packed.stderr}")
            tarball = work / packed.stdout.strip().splitlines()[-1]
            subprocess.run(["tar", "xzf", tarball, "-C", work, f"package/{inner}"], check=True)
            shutil.copyfile(work / "package" / inner, path)
            if _sha256(path) != digest:
                path.unlink()
                pytest.fail(f"{spec} {inner} does not match its pinned sha256")
        copies[name] = path
    return copies


def screenshot(page, name: str, **kwargs) -> pathlib.Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), **kwargs)
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_until_up(process: subprocess.Popen, url: str, log_name: str, what: str) -> None:
    deadline = time.monotonic() + 90
    while True:
        try:
            urllib.request.urlopen(url, timeout=1)
            return
        except OSError:
            if process.poll() is not None:
                raise RuntimeError(f"{what} exited; see artifacts/{log_name}") from None
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what} did not start in 90 s") from None
            time.sleep(0.25)


@contextlib.contextmanager
def _server(command: list[str], env: dict, log_name: str, ready_url: str, what: str) -> Iterator:
    """Run ``command`` (our own child process) until the block ends; its output goes to a log."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    log = open(ARTIFACTS / log_name, "w")  # noqa: SIM115 - closed in finally
    process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_until_up(process, ready_url, log_name, what)
        yield
    finally:
        process.terminate()  # our own child only
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def _jupyter_server(tmp_path_factory, module: str, app: str) -> Iterator[dict]:
    """A Jupyter server (``python -m {module}``) on 127.0.0.1: ``{"url", "token", "root"}``."""
    root = tmp_path_factory.mktemp(f"{module}-root")
    home = tmp_path_factory.mktemp(f"{module}-home")
    settings = home / "settings"
    # a quiet, deterministic UI: no news toast, every cell rendered (no virtual scrolling)
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
        module,
        "--no-browser",
        f"--port={port}",
        "--ServerApp.ip=127.0.0.1",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        f"--{app}.expose_app_in_browser=True",  # window.jupyterapp, to run code in the kernel
        f"--{app}.workspaces_dir={home / 'workspaces'}",
        f"--{app}.user_settings_dir={settings}",
    ]
    if module == "jupyterlab":
        command += [
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # containers
    url = f"http://127.0.0.1:{port}"
    with _server(
        command, env, f"{module}-server.log", f"{url}/api/status?token={token}", f"jupyter {module}"
    ):
        yield {"url": url, "token": token, "root": root}


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory) -> Iterator[dict]:
    """A JupyterLab server on 127.0.0.1: ``{"url", "token", "root"}``; put notebooks in ``root``."""
    yield from _jupyter_server(tmp_path_factory, "jupyterlab", "LabApp")


@pytest.fixture(scope="module")
def notebook_server(tmp_path_factory) -> Iterator[dict]:
    """A Jupyter Notebook 7 server, like :func:`lab_server`; notebooks open at ``/notebooks/``."""
    yield from _jupyter_server(tmp_path_factory, "notebook", "JupyterNotebookApp")


@contextlib.contextmanager
def marimo_app(tmp_path, source: str) -> Iterator[str]:
    """``marimo run`` of the app ``source`` on 127.0.0.1 (headless, no token); yields its URL."""
    app = tmp_path / "app.py"
    app.write_text(source)
    port = _free_port()
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config"), "HOME": str(tmp_path)}
    command = [
        sys.executable,
        "-m",
        "marimo",
        "run",
        str(app),
        "--headless",
        "--host=127.0.0.1",
        f"--port={port}",
        "--no-token",
    ]
    url = f"http://127.0.0.1:{port}"
    with _server(command, env, "marimo-server.log", f"{url}/health", "marimo run"):
        yield url


KERNEL_EVAL = """async (code) => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const future = kernel.requestExecute({ code, store_history: false, silent: false });
  let out = null;
  future.onIOPub = (msg) => {
    const t = msg.header.msg_type;
    if (t === "execute_result") out = msg.content.data["text/plain"];
    else if (t === "stream") out = (out ?? "") + msg.content.text;
    else if (t === "error") out = "ERROR " + msg.content.ename + ": " + msg.content.evalue;
  };
  await future.done;
  return out;
}"""


def kernel_eval(page, code: str) -> str | None:
    """Run ``code`` in the open notebook's kernel like a cell (not silent: after-cell hooks run)."""
    return page.evaluate(KERNEL_EVAL, code)


def poll_kernel(page, code: str, expected: str, timeout: float = 15.0) -> str | None:
    """Evaluate ``code`` until its repr is ``expected`` (hover -> kernel is asynchronous)."""
    deadline = time.monotonic() + timeout
    value = None
    while time.monotonic() < deadline:
        value = kernel_eval(page, code)
        if value == expected:
            return value
        time.sleep(0.2)
    return value
