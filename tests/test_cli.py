"""``python -m stridewidget EXPR [--html out.html] [--text]``."""

from __future__ import annotations

import json
import pathlib
import re
import shlex
import subprocess
import sys

import numpy as np
import pytest
import torch

import stridewidget as sw
from stridewidget import cli

EXPR = "torch.arange(12.0).reshape(3, 4).t()"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "stridewidget", *args], capture_output=True, text=True, timeout=120
    )


def test_prints_layout_explain_and_picture():
    x = torch.arange(12.0).reshape(3, 4).t()
    result = run(EXPR)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"x: {sw.inspect(x)}"
    for line in sw.inspect(x).explain().splitlines():
        assert f"  {line}" in lines
    assert result.stdout.rstrip("\n").endswith(sw.render_text(x=x))


def test_text_only_and_several_tensors(capsys):
    a = torch.arange(6).reshape(2, 3)
    assert (
        cli.main(["--text", "(lambda a: {'a': a, 'b': a.t()})(torch.arange(6).reshape(2, 3))"]) == 0
    )
    assert capsys.readouterr().out == sw.render_text(a=a, b=a.t()) + "\n"


def test_numpy_is_in_scope(capsys):
    assert cli.main(["--text", "np.arange(8)[::-2]"]) == 0
    assert str(sw.inspect(np.arange(8)[::-2])) in capsys.readouterr().out


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("torch.zeros(", "not a Python expression"),
        ("1 + 1", "int"),
        ("[]", "empty sequence"),
        ("{}", "empty dict"),
        ("undefined_name", "evaluating EXPR raised NameError"),
        ("torch.eye(3).to_sparse()", "sparse"),
    ],
)
def test_bad_input_is_a_clear_message(expr, message):
    with pytest.raises(SystemExit, match=re.escape(message)):
        cli.main([expr])


def test_bad_input_is_one_line_not_a_traceback():
    result = run("1 + 1")
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1


def test_html_page_is_standalone_offline_and_escaped(tmp_path):
    out = tmp_path / "page.html"
    evil = "<img src=x onerror=alert(1)>"
    result = run(f"{{{evil!r}: torch.arange(6.0).reshape(2, 3)[:, ::2]}}", "--html", str(out))
    assert result.returncode == 0, result.stderr
    page = out.read_text()
    # nothing is loaded from elsewhere: every script is inline
    assert not re.search(r"<script[^>]*\bsrc=", page)
    assert not re.search(r"<link[^>]*\bhref=", page)
    # the name never appears as markup, only escaped
    assert evil not in page
    views = re.findall(
        r'<script type="application/vnd\.stridewidget\.view\+json">(.*?)</script>', page, re.S
    )
    assert len(views) == 1
    view = json.loads(views[0])
    picture = json.loads(view["state"]["picture"])  # synced as one JSON text
    assert picture["tensors"][0]["name"] == evil
    assert picture["tensors"][0]["walk"]["strides"] == [3, 2]
    assert "export" in view["esm"]  # the widget's code travels with the page
    assert len(page.encode()) < 100_000  # tens of kB: no require.js, no widget manager


def test_wrap_sets_the_storage_row_width(capsys):
    x = torch.arange(12.0).reshape(3, 4)
    assert cli.main(["--text", "--wrap", "6", "torch.arange(12.0).reshape(3, 4)"]) == 0
    out = capsys.readouterr().out
    assert out == sw.render_text(x=x, wrap=6) + "\n"
    assert "rows of 6" in out
    with pytest.raises(SystemExit, match="positive"):
        cli.main(["--wrap", "0", "torch.zeros(2)"])


def test_docstring_examples_run():
    """pytest's --doctest-modules skips files named __main__.py: run this module's examples here."""
    import doctest

    result = doctest.testmod(cli, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 4 and result.failed == 0


@pytest.mark.parametrize("where", ["missing/dir/out.html", "."], ids=["missing-dir", "a-dir"])
def test_html_to_a_path_that_cannot_be_written_is_one_line(tmp_path, where, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit, match=r"^stridewidget: cannot write --html \S+: \w"):
        cli.main(["torch.zeros(2)", "--text", "--html", where])


def test_html_to_an_unwritable_file_is_one_line(tmp_path, monkeypatch):
    target = tmp_path / "out.html"

    def refuse(*_args, **_kwargs):  # root may write anywhere: simulate the permission error
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(type(target), "write_text", refuse)
    with pytest.raises(SystemExit, match=r"cannot write --html .*Permission denied"):
        cli.main(["torch.zeros(2)", "--text", "--html", str(target)])


def _page_ok(page: str) -> None:
    assert page.lstrip().lower().startswith("<!doctype html") and page.rstrip().endswith("</html>")


@pytest.mark.parametrize("option", [["--html"], ["--html", "-"]], ids=["bare", "dash"])
def test_html_without_a_file_prints_only_the_page(tmp_path, monkeypatch, capsys, option):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["torch.arange(6.0).reshape(2, 3).t()", *option]) == 0
    out = capsys.readouterr().out
    _page_ok(out)  # stdout is the page alone: `> page.html` is a page
    assert "stridewidget: torch.arange(6.0).reshape(2, 3).t()" in out
    assert list(tmp_path.iterdir()) == []  # no file named "-"


def test_html_file_still_written(tmp_path, capsys):
    target = tmp_path / "t.html"
    assert cli.main(["torch.zeros(2)", "--text", "--html", str(target)]) == 0
    _page_ok(target.read_text(encoding="utf-8"))
    assert f"wrote {target}" in capsys.readouterr().out


def test_help_examples_run_as_printed(tmp_path, monkeypatch, capsys):
    """Each example line of --help, split as a shell would, runs (argparse's own parse)."""
    monkeypatch.setenv("COLUMNS", "60")  # a narrow terminal must not wrap an example
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    examples = [
        line.strip()
        for line in capsys.readouterr().out.splitlines()
        if line.strip().startswith('python -m stridewidget "')
    ]
    assert len(examples) == 2
    for example in examples:
        command, _, redirect = example.partition(" > ")
        words = shlex.split(command)
        assert words[:3] == ["python", "-m", "stridewidget"]
        assert cli.main(words[3:]) == 0
        out = capsys.readouterr().out
        _page_ok(out if redirect else (tmp_path / words[-1]).read_text(encoding="utf-8"))


def test_readme_html_examples_parse(tmp_path, monkeypatch, capsys):
    """Every `python -m stridewidget ... --html ...` command in README.md runs as written."""
    readme = (pathlib.Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    commands = re.findall(r"`python -m stridewidget (\"[^`]*?--html[^`]*)`", readme)
    assert commands
    monkeypatch.chdir(tmp_path)
    for command in commands:
        command, _, redirect = command.partition(" > ")
        words = shlex.split(command)
        assert cli.main(words) == 0
        out = capsys.readouterr().out
        _page_ok(out if redirect else (tmp_path / words[-1]).read_text(encoding="utf-8"))
