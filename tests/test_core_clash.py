"""Another top-level `core` first on the path (a user's project, PYTHONPATH, the current folder)
does not break the installed commands: their entry points (memsense_gui/entry.py) import this
install's `core`."""
from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from core import __version__

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


@pytest.fixture
def clash(tmp_path) -> Path:
    """A folder holding a user's own package `core`, with none of this project's modules."""
    (tmp_path / "proj" / "core").mkdir(parents=True)
    (tmp_path / "proj" / "core" / "__init__.py").write_text("WHOSE = 'the user\\'s own core'\n")
    return tmp_path / "proj"


def _run(code: str, clash: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(clash), str(ROOT)]), "QT_QPA_PLATFORM": "offscreen"}
    script = f"import sys; sys.argv = {['prog', *argv]!r}; {code}"
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=clash,
                          timeout=120, check=False)


def test_the_commands_start_through_the_entry_that_binds_core():
    assert PROJECT["project"]["scripts"] == {"memsense": "memsense_gui.entry:cli"}
    assert PROJECT["project"]["gui-scripts"] == {"memsense-gui": "memsense_gui.entry:gui"}


def test_memsense_runs_with_another_core_first_on_the_path(clash):
    plain = _run("from core.cli.main import main; sys.exit(main())", clash, "--version")
    assert plain.returncode == 1 and "core/__init__.py" in plain.stderr, plain.stderr  # the clash is real
    out = _run("from memsense_gui.entry import cli; sys.exit(cli())", clash, "--version")
    assert (out.returncode, out.stdout) == (0, f"memsense {__version__}\n"), out.stderr
    out = _run("from memsense_gui.entry import cli; sys.exit(cli())", clash, "demo")
    assert out.returncode == 0 and Path(out.stdout.strip()) == ROOT / "core" / "demo" / "demo-conversations.jsonl"


def test_memsense_gui_runs_with_another_core_first_on_the_path(clash):
    out = _run("from memsense_gui.entry import gui; sys.exit(gui())", clash, "--version")
    assert (out.returncode, out.stdout) == (0, f"memsense-gui {__version__}\n"), out.stderr


def test_a_core_imported_before_is_replaced_by_this_installs(clash):
    code = ("import core; assert core.WHOSE; from memsense_gui.entry import own_core; own_core(); "
            "import core.cli.main, core as c; print(c.__file__)")
    out = _run(code, clash)
    assert out.returncode == 0 and Path(out.stdout.strip()) == ROOT / "core" / "__init__.py", out.stderr
