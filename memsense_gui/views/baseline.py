"""The baseline control above the results: what "Moved" is measured against, and a menu to pin
a preset or a snapshot of the current settings as the baseline (or to clear it)."""
from __future__ import annotations

import time
from functools import partial

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QMenu, QToolButton, QWidget

from core.config.provenance import changed_knobs
from memsense_gui import app_icons
from memsense_gui.state.context import AppContext
from memsense_gui.state.session import Baseline

UNPINNED = "Moved: since the last change"
UNPINNED_TIP = "No baseline pinned: movement against the settings before the last change"


class BaselineBar(QWidget):
    """"Moved against …" and the Baseline menu: snapshot, every preset, clear."""

    def __init__(self, ctx: AppContext, parent: QWidget | None = None):
        super().__init__(parent)
        self.ctx = ctx
        self.label = QLabel(UNPINNED)
        self.label.setToolTip(UNPINNED_TIP)
        self.label.setObjectName("baseline-label")
        self.button = QToolButton()
        self.button.setObjectName("baseline-button")
        self.button.setText("Baseline")
        self.button.setIcon(app_icons.icon("baseline"))
        self.button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.button.setToolTip("Pin a preset or a snapshot of the current settings: 'Moved' is then measured "
                               "against it, and the results it returned that dropped out are listed, greyed")
        self.button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.menu = QMenu(self.button)
        self.menu.aboutToShow.connect(self._fill_menu)
        self.button.setMenu(self.menu)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        layout.addWidget(self.button)
        self._preset: str | None = None  # the preset pinned, while it is the baseline
        ctx.session.baseline_changed.connect(self._show)
        ctx.session.updating.connect(lambda _on: self._show(ctx.session.pinned_baseline))
        ctx.presets.presets_changed.connect(self._presets_changed)
        self._fill_menu()

    def _fill_menu(self) -> None:
        """Built when opened: the presets may have changed since."""
        self.menu.clear()
        self.menu.addAction(app_icons.icon("pin"), "Snapshot of the current settings", self.pin_snapshot)
        presets = self.menu.addMenu("Preset")
        for name in self.ctx.presets.names():
            presets.addAction(name, partial(self.pin_preset, name))
        self.menu.addSeparator()
        clear = self.menu.addAction("Clear baseline", self.ctx.session.unpin_baseline)
        clear.setEnabled(self.ctx.session.pinned_baseline is not None)

    def pin_snapshot(self) -> None:
        """The settings on screen now, kept as they are while the sliders move on."""
        self.ctx.current.flush()
        self.ctx.session.pin_baseline(f"snapshot of {time.strftime('%H:%M:%S')}", self.ctx.current.config)

    def pin_preset(self, name: str) -> None:
        """`name`'s settings, followed when the preset is saved again (as Compare follows it)."""
        def pin() -> None:
            cfg = self.ctx.presets.get(name)
            self._preset = name
            self.ctx.session.pin_baseline(preset_label(name), cfg)

        self.ctx.attempt(pin, "Baseline")

    def _presets_changed(self) -> None:
        """The pinned preset saved with other settings: movement against those; renamed or
        deleted: against the settings it had, named so."""
        name, pinned = self._preset, self.ctx.session.pinned_baseline
        if name is None or pinned is None:
            return
        if name in self.ctx.presets.names():
            cfg = self.ctx.presets.get(name)
            if cfg != pinned.config:
                self.ctx.session.pin_baseline(preset_label(name), cfg)
        else:
            self._preset = None
            self.ctx.session.pin_baseline(f"{preset_label(name)} as it was (renamed or deleted since)", pinned.config)

    def _show(self, baseline: Baseline | None) -> None:
        if self._preset is not None and (baseline is None or baseline.label != preset_label(self._preset)):
            self._preset = None  # a snapshot or another preset pinned, or none
        waiting = baseline is not None and self.ctx.session.baseline is None and self.ctx.session.is_updating
        text = UNPINNED if baseline is None else f"Moved: against {baseline.label}"
        self.label.setText(f"{text} (updating…)" if waiting else text)
        self.label.setToolTip(UNPINNED_TIP if baseline is None else settings_text(baseline))


def preset_label(name: str) -> str:
    """A preset pinned as the baseline, as "Moved: against …" names it."""
    return f"preset “{name}”"


def settings_text(baseline: Baseline) -> str:
    """The baseline's settings, as the knobs it changes from Memsense's defaults."""
    changed = changed_knobs(baseline.config)
    if not changed:
        return f"{baseline.label}: Memsense's defaults"
    return f"{baseline.label}: " + ", ".join(f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}"
                                             for k, v, _default in changed) + " (the rest: Memsense's defaults)"
