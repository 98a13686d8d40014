"""The tuning dock: a labeled slider (with exact numeric entry) per knob, and presets.

The panel keeps no config of its own: it shows `CurrentSettings.config` (following its `changed`)
and hands every edit to it (`CurrentSettings.edit`, one undo step per drag or typed value;
`end_edit` on a release or Enter), which throttles the re-rank of the cached pool. Presets: the built-in ones (`core.config.presets.BUILTIN`)
and the user's own (`state.presets.PresetLibrary`, written atomically). Choosing one (the list,
"Reset to preset", Ctrl+R) goes through `offer_preset` when the window set it (the diff first,
then one undoable step), else applies it at once.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox, QLineEdit, QComboBox, QFormLayout, QGroupBox, QHBoxLayout, QInputDialog, QLabel, QMessageBox,
    QPushButton, QScrollArea, QSizePolicy, QVBoxLayout, QWidget,
)

from core.config import SCHEMES, Config
from memsense_gui import theme
from memsense_gui.state.current_settings import PRESET_CAUSE, CurrentSettings
from memsense_gui.state.presets import PresetLibrary
from memsense_gui.views.sliders import ALL_KNOBS, GROUPS, Knob, Slider, make_slider, tooltip


class TuningPanel(QWidget):
    """Every knob of `Config` that the ranking responds to, plus the preset controls."""

    preset_shown = Signal(str)  # the preset the settings are now shown against
    error_raised = Signal(object)

    def __init__(self, presets: PresetLibrary, current: CurrentSettings, parent: QWidget | None = None):
        super().__init__(parent)
        self.presets = presets
        self.current = current
        self.offer_preset: Callable[[str], Any] | None = None
        self.shown_preset = ""
        self.sliders: dict[str, Slider] = {}
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        outer.addWidget(self._preset_box())
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.viewport().setObjectName("knob-viewport")
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._scheme_box())
        for title, knobs in GROUPS:
            layout.addWidget(self._group(title, knobs))
        layout.addStretch(1)
        scroll.setWidget(body)
        outer.addWidget(scroll, 1)
        presets.presets_changed.connect(self._fill_presets)
        self._fill_presets()
        self._show(current.config)
        current.changed.connect(self._show)
        self.apply_theme()

    # ---- construction -------------------------------------------------------------------------
    def _preset_box(self) -> QGroupBox:
        box = QGroupBox("Preset")
        v = QVBoxLayout(box)
        self.preset_combo = QComboBox()
        self.preset_combo.setToolTip("Built-in presets first (Memsense = the service's own defaults), then yours")
        self.reset_button = QPushButton("Reset to preset")
        self.reset_button.setToolTip("Set every knob to the selected preset (Ctrl+R)")
        self.reset_button.clicked.connect(lambda: self.choose_preset(self.preset_combo.currentText()))
        top = QHBoxLayout()
        top.addWidget(self.preset_combo, 1)
        top.addWidget(self.reset_button)
        v.addLayout(top)
        row = QHBoxLayout()
        self.save_button = QPushButton("Save as…")
        self.save_button.setToolTip("Save the current settings as a preset of yours (Ctrl+Shift+S)")
        self.save_button.clicked.connect(self.ask_save_preset)
        self.rename_button = QPushButton("Rename…")
        self.rename_button.setToolTip("Rename the selected preset of yours")
        self.rename_button.clicked.connect(self.ask_rename_preset)
        self.delete_button = QPushButton("Delete")
        self.delete_button.setToolTip("Delete the selected preset of yours")
        self.delete_button.clicked.connect(self.ask_delete_preset)
        for b in (self.save_button, self.rename_button, self.delete_button):
            row.addWidget(b)
        v.addLayout(row)
        self.modified_label = QLabel()
        # one reserved line: showing or clearing it must not re-layout the panel on every tick
        self.modified_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.modified_label.setFixedHeight(self.modified_label.fontMetrics().height() + 2)
        v.addWidget(self.modified_label)
        self.preset_combo.currentTextChanged.connect(self._update_modified)
        self.preset_combo.activated.connect(lambda i: self.choose_preset(self.preset_combo.itemText(i)))
        return box

    def _scheme_box(self) -> QGroupBox:
        box = QGroupBox("Scheme")
        form = QFormLayout(box)
        self.scheme_combo = QComboBox()
        self.scheme_combo.addItems(SCHEMES)
        self.scheme_combo.setToolTip(f"How route lists are fused. Memsense default: {Config().scheme}")
        self.scheme_combo.currentTextChanged.connect(lambda s: self._edit(replace(self.current.config, scheme=s), "scheme"))
        form.addRow("fusion", self.scheme_combo)
        self.session_first_box = QCheckBox("session-first (turns support sessions)")
        self.session_first_box.setToolTip(
            f"Return session chunks, lifted by their best turn (turn support). Memsense default: {Config().session_first}")
        self.session_first_box.toggled.connect(
            lambda on: self._edit(replace(self.current.config, session_first=on), "session_first"))
        form.addRow(self.session_first_box)
        self.fallback_box = QCheckBox("fallback fill when all are duplicates")
        self.fallback_box.setToolTip(
            f"When every remaining row is a duplicate, append the next one anyway. Memsense default: {Config().fallback_fill}")
        self.fallback_box.toggled.connect(lambda on: self._edit(replace(self.current.config, fallback_fill=on), "fallback_fill"))
        form.addRow(self.fallback_box)
        self.distinct_box = QCheckBox("one row per session (selection by session)")
        self.distinct_box.setToolTip(
            "Only the first row of each session in final order enters MMR; the others are skipped as "
            f"'same session' (beyond Memsense). Memsense default: {Config().distinct_sessions}")
        self.distinct_box.toggled.connect(
            lambda on: self._edit(replace(self.current.config, distinct_sessions=on), "distinct_sessions"))
        form.addRow(self.distinct_box)
        return box

    def _group(self, title: str, knobs: tuple[Knob, ...]) -> QGroupBox:
        box = QGroupBox(title)
        form = QFormLayout(box)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        for knob in knobs:
            slider = make_slider(knob)
            slider.valueChanged.connect(lambda v, k=knob: self._edit(k.apply(self.current.config, k.rounded(v)), k.name))
            slider.sliderReleased.connect(self.current.end_edit)
            slider.editingFinished.connect(self.current.end_edit)
            label = QLabel(knob.label)
            label.setToolTip(tooltip(knob))
            form.addRow(label, slider)
            self.sliders[knob.name] = slider
        return box

    # ---- the current settings shown and edited ---------------------------------------------------
    def _show(self, cfg: Config) -> None:
        """Show the current settings `cfg` (a change made elsewhere: undo, an apply), editing nothing."""
        for name, slider in self.sliders.items():
            value = ALL_KNOBS[name].value(cfg)
            if abs(slider.value() - value) > 1e-12:
                slider.blockSignals(True)
                slider.setValue(value)
                slider.blockSignals(False)
        switches = (self.scheme_combo, self.session_first_box, self.fallback_box, self.distinct_box)
        for widget in switches:
            widget.blockSignals(True)
        self.scheme_combo.setCurrentText(cfg.scheme)
        self.session_first_box.setChecked(cfg.session_first)
        self.fallback_box.setChecked(cfg.fallback_fill)
        self.distinct_box.setChecked(cfg.distinct_sessions)
        for widget in switches:
            widget.blockSignals(False)
        self._update_modified()

    def _edit(self, cfg: Config, knob: str) -> None:
        """A user's edit: to the current settings, as one undo step (merged within one drag)."""
        self.current.edit(cfg, knob)
        self._update_modified()

    def apply_theme(self) -> None:
        """superqt's value labels carry a style sheet that freezes their palette: give them the
        theme's text colour explicitly."""
        color = theme.current().text
        for slider in self.sliders.values():
            for label in slider.findChildren(QLineEdit):
                label.setStyleSheet(f"background: transparent; border: 0; color: {color};")

    def set_knob(self, name: str, value: float) -> None:
        """Move one slider as a user would (an edit of the current settings)."""
        self.sliders[name].setValue(value)

    # ---- presets ------------------------------------------------------------------------------------
    def _fill_presets(self) -> None:
        current = self.preset_combo.currentText()
        self.preset_combo.blockSignals(True)
        self.preset_combo.clear()
        for name in self.presets.names():
            self.preset_combo.addItem(name)
            if self.presets.is_builtin(name):
                self.preset_combo.setItemData(self.preset_combo.count() - 1, "built-in preset", Qt.ItemDataRole.ToolTipRole)
        self.preset_combo.setCurrentText(current if current in self.presets.names() else self.presets.names()[0])
        self.preset_combo.blockSignals(False)
        self.shown_preset = self.preset_combo.currentText()
        self._update_modified()

    def _update_modified(self) -> None:
        name = self.preset_combo.currentText()
        builtin = self.presets.is_builtin(name)
        self.rename_button.setEnabled(not builtin)
        self.delete_button.setEnabled(not builtin)
        try:
            same = self.presets.get(name) == self.current.config
        except Exception:  # noqa: BLE001 - an unknown name just shows as modified
            same = False
        self.modified_label.setText("" if same else f"<i>Settings differ from “{name}”</i>")

    def select_preset(self, name: str) -> None:
        self.preset_combo.setCurrentText(name)
        self.shown_preset = self.preset_combo.currentText()
        self.preset_shown.emit(self.shown_preset)

    def choose_preset(self, name: str) -> None:
        """A preset picked by the user: offered with its diff when the window can, else applied."""
        if self.offer_preset is not None:
            self.offer_preset(name)
        else:
            self.apply_preset(name)

    def apply_preset(self, name: str) -> None:
        """Reset every knob to a preset in one click (one undo step)."""
        try:
            cfg = self.presets.get(name)
        except Exception as exc:  # noqa: BLE001
            self.error_raised.emit(exc)
            return
        self.select_preset(name)
        self.current.edit(cfg, PRESET_CAUSE + name)
        self._update_modified()

    def save_preset(self, name: str) -> bool:
        try:
            self.presets.save(name, self.current.config)
        except Exception as exc:  # noqa: BLE001 - MemsenseError or a disk error: shown, not fatal
            self.error_raised.emit(exc)
            return False
        self.select_preset(name.strip())
        return True

    def rename_preset(self, old: str, new: str) -> bool:
        try:
            self.presets.rename(old, new)
        except Exception as exc:  # noqa: BLE001
            self.error_raised.emit(exc)
            return False
        self.select_preset(new.strip())
        return True

    def delete_preset(self, name: str) -> bool:
        try:
            self.presets.delete(name)
        except Exception as exc:  # noqa: BLE001
            self.error_raised.emit(exc)
            return False
        return True

    def ask_save_preset(self) -> None:
        name, ok = QInputDialog.getText(self, "Save preset", "Name for the current settings:")
        if ok and name.strip():
            self.save_preset(name)

    def ask_rename_preset(self) -> None:
        old = self.preset_combo.currentText()
        new, ok = QInputDialog.getText(self, "Rename preset", f"New name for “{old}”:", text=old)
        if ok and new.strip() and new.strip() != old:
            self.rename_preset(old, new)

    def ask_delete_preset(self) -> None:
        name = self.preset_combo.currentText()
        answer = QMessageBox.question(self, "Delete preset", f"Delete your preset “{name}”?")
        if answer == QMessageBox.StandardButton.Yes:
            self.delete_preset(name)
