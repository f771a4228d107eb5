"""The path a pip user takes: ``python -m build`` (sdist, then the wheel built from it), the wheel
installed into a fresh venv outside the repository, ``python -m stridewidget EXPR --html`` run
there, and the page opened offline in Chromium: it draws, hover links, nothing is fetched.

The fresh venv gets the wheel only (``--no-deps``); its dependencies (torch, anywidget, ...) come
from the test environment's site-packages through a plain path entry, which does not activate the
repository's editable install, and the test checks the package is imported from the wheel."""

from __future__ import annotations

import email
import re
import site
import subprocess
import sys
import zipfile

import pytest
from playwright.sync_api import expect

import stridewidget

from .conftest import ROOT, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow]

HIGHLIGHTED = re.compile(r"(^|\s)sw-hl(\s|$)")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    dist = tmp_path_factory.mktemp("dist")
    built = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (sdist,) = dist.glob("*.tar.gz")
    (wheel_path,) = dist.glob("*.whl")
    return sdist, wheel_path


def test_wheel_carries_the_front_end_licence_and_metadata(wheel):
    _, wheel_path = wheel
    with zipfile.ZipFile(wheel_path) as archive:
        names = set(archive.namelist())
        (metadata_name,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        metadata = email.message_from_bytes(archive.read(metadata_name))
    for shipped in (
        "host.js",
        "widget.js",
        "widget.css",
        "playground.js",
        "playground.css",
        "graph.js",
        "graph.css",
    ):
        assert f"stridewidget/notebook/static/{shipped}" in names
    assert "stridewidget/py.typed" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert not any("_vendor" in n for n in names)
    assert metadata["Version"] == stridewidget.__version__
    assert metadata["License-Expression"] == "BSD-3-Clause"
    requires = " ".join(metadata.get_all("Requires-Dist"))
    for needed in ("ipython", "executing", "anywidget", "matplotlib", "python-flint"):
        assert needed in requires
    assert "Typing :: Typed" in metadata.get_all("Classifier")
    assert metadata.get_all("Project-URL") is None  # no public repository to point at yet


def test_page_from_the_installed_wheel_works_offline(wheel, page, tmp_path):
    _, wheel_path = wheel
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    subprocess.run(
        [python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel_path)],
        check=True,
        timeout=300,
    )
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (venv / purelib / "test-dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    work = tmp_path / "work"  # outside the repository: nothing of it on sys.path
    work.mkdir()
    out = work / "page.html"
    imported_from = subprocess.run(
        [python, "-c", "import stridewidget; print(stridewidget.__file__)"],
        cwd=work,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert imported_from.startswith(str(venv)), imported_from  # the wheel, not the repository
    result = subprocess.run(
        [python, "-m", "stridewidget", "torch.arange(12.0).reshape(3, 4).t()", "--html", out],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert out.stat().st_size < 150_000  # tens of kB, not the 3.8 MB of require.js + manager

    page.goto(out.as_uri())
    root = page.locator(".sw-root")
    expect(root).to_have_count(1, timeout=30_000)
    expect(root.locator(".sws-lcell")).to_have_count(12)
    # x = arange(12).reshape(3, 4).t(): x[2, 1] reads storage[1 * 4 + 2] = storage[6]
    root.locator('.sws-lcell[data-r="2"][data-c="1"]').hover()
    expect(root.locator('.sws-scell[data-cell="6"]')).to_have_class(HIGHLIGHTED)
    expect(root.locator(".sw-status")).to_contain_text("storage[6] = 6.")
    screenshot(page, "wheel_page_hover", full_page=True)
    assert page.external_requests == []
    assert not [line for line in page.console_log if line.startswith(("error", "pageerror"))]
