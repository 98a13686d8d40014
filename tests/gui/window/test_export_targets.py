"""File > Export writes through the CLI's one writer (`core.atomic`): a link or a device is refused
with one dialog line and left as it was; no error dialog shows a secret."""
from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import MemsenseError
from memsense_gui.views.dialogs import error_message

SECRET = "s3cr3t-XYZ"


@pytest.mark.parametrize("kind, name", [("memsense", "options.json"), ("config", "tuned.toml"),
                                        ("table", "pool.csv"), ("plot", "mmr.png")])
def test_an_export_to_a_link_is_refused_and_the_link_left_alone(qtbot, ranked_window, tmp_path, kind, name):
    w = ranked_window
    outside = tmp_path / f"outside-{name}"
    outside.write_text("precious\n")
    link = tmp_path / name
    link.symlink_to(outside)
    messages: list[str] = []
    w.ctx.error_reported.connect(messages.append)
    export = {"memsense": lambda p: w.exports.export_memsense_options(p), "config": lambda p: w.exports.export_config(p),
              "table": lambda p: w.exports.export_table("pool", p), "plot": lambda p: w.exports.export_plot("mmr", p)}
    assert not export[kind](link)
    qtbot.waitUntil(lambda: bool(messages), timeout=5000)
    assert "symbolic link" in messages[-1]
    assert link.is_symlink() and outside.read_text() == "precious\n"


def test_an_export_to_a_device_is_refused(qtbot, ranked_window):
    w = ranked_window
    messages: list[str] = []
    w.ctx.error_reported.connect(messages.append)
    assert not w.exports.export_memsense_options(Path("/dev/null"))
    qtbot.waitUntil(lambda: bool(messages), timeout=5000)
    assert "not a regular file" in messages[-1] and Path("/dev/null").is_char_device()


def test_error_dialogs_show_no_secret():
    _, text, _ = error_message(MemsenseError(f"no PostgreSQL answers at postgresql://u:{SECRET}@h/db"),
                                         "Connecting")
    assert SECRET not in text and "postgresql://u:***@h/db" in text
    unexpected = RuntimeError(f"GET https://h/x?token={SECRET} failed")
    unexpected.traceback_text = f"Traceback ...\n  Authorization: Bearer {SECRET}\n"  # type: ignore[attr-defined]
    _, text, details = error_message(unexpected)
    assert SECRET not in text + details and "token=***" in text
