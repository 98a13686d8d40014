"""The app's icons come from its own package resources, render, and are packaged."""
from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

from PySide6.QtGui import QColor

from memsense_gui import app_icons

ROOT = Path(__file__).resolve().parents[2]


def test_every_icon_is_an_svg_of_the_package_and_renders(qapp):
    for name in app_icons.NAMES:
        path = app_icons.path(name)
        assert path.is_file() and path.suffix == ".svg" and path.parent.name == "icons"
        image = app_icons.icon(name).pixmap(32, 32).toImage()
        assert not image.isNull()
        opaque = sum(QColor(image.pixel(x, y)).alpha() > 0 for x in range(32) for y in range(32))
        assert opaque > 32, f"{name} draws next to nothing"


def test_the_icons_are_package_data():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["memsense_gui"]
    package = ROOT / "memsense_gui"
    for svg in (package / "icons").glob("*.svg"):
        assert any(fnmatch.fnmatch(str(svg.relative_to(package)), pattern) for pattern in data), svg


def test_the_window_uses_them(qtbot, make_window):
    w = make_window(open_store=False)
    key = lambda name: app_icons.icon(name).cacheKey()  # noqa: E731
    assert w.windowIcon().cacheKey() == key("memsense")
    assert w.run_button.icon().cacheKey() == key("search")
    assert w.whynot_panel.pin_button.icon().cacheKey() == key("pin")
    assert w.baseline_bar.button.icon().cacheKey() == key("baseline")
