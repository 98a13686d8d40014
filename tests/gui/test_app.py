"""The entry point and the Qt bindings guard."""
from __future__ import annotations

from pathlib import Path

from memsense_gui import app as app_module


def test_main_refuses_broken_qt_bindings(monkeypatch, capsys):
    import memsense_gui.compat as compat

    monkeypatch.setattr(compat, "emit_leaks", lambda emits=64: True)
    assert app_module.main([]) == 2
    assert "Signal.emit()" in capsys.readouterr().err


def test_the_qt_bindings_do_not_leak_on_emit():
    """PySide6 6.12.0 drops a reference to True per emit and aborts the app (compat.py)."""
    from memsense_gui.compat import check_bindings, emit_leaks

    assert not emit_leaks()
    check_bindings()


def test_version(capsys):
    import pytest

    from core import __version__

    with pytest.raises(SystemExit) as stop:
        app_module.main(["memsense-gui", "--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out == f"memsense-gui {__version__}\n"


def test_install_desktop_writes_a_launcher_with_an_absolute_exec(tmp_path, monkeypatch, capsys):
    import shlex

    from tests.test_packaging import desktop_problems

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data home"))
    assert app_module.main(["memsense-gui", "--install-desktop"]) == 0
    entry = tmp_path / "data home" / "applications" / "memsense-gui.desktop"
    icon = tmp_path / "data home" / "icons" / "hicolor" / "scalable" / "apps" / "memsense-gui.svg"
    assert capsys.readouterr().out.splitlines() == [f"memsense-gui: wrote {entry}", f"memsense-gui: wrote {icon}"]
    assert icon.read_text().lstrip().startswith("<")
    (exec_line,) = [line for line in entry.read_text().splitlines() if line.startswith("Exec=")]
    program = shlex.split(exec_line.removeprefix("Exec="))[0]
    assert Path(program).is_absolute() and Path(program).is_file(), exec_line
    assert desktop_problems(entry) == []


def test_the_launchers_exec_quotes_a_path_with_spaces(tmp_path):
    from memsense_gui.launcher import exec_line

    folder = tmp_path / "my venv" / "bin"
    folder.mkdir(parents=True)
    (folder / "memsense-gui").write_text("#!/bin/sh\n")
    assert exec_line(folder) == f'"{folder}/memsense-gui"'
    assert exec_line(tmp_path / "no venv here").split()[1:] == ["-m", "memsense_gui.app"]
