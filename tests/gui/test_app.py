"""The entry point and the Qt bindings guard."""
from __future__ import annotations

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
