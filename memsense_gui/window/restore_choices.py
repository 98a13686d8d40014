"""The preset and the baseline chosen come back on restart.

The preset the settings are shown against (`tuning/preset`) and the pinned baseline
(`tuning/baseline`: a preset by name, or a snapshot with its settings) are kept in the app's
settings as they change, and put back when the window opens, after the settings themselves
(`ExportActions.restore_config`). A preset that is gone since (deleted, renamed) falls back:
the settings are shown against Memsense's preset, a baseline of it is not pinned, and one status
line says so.
"""
from __future__ import annotations

import json

from core import config as config_io
from core.config.presets import MEMSENSE
from core.errors import MemsenseError
from memsense_gui.state.context import AppContext
from memsense_gui.state.movement import Baseline
from memsense_gui.views.baseline import preset_label
from memsense_gui.views.tuning import TuningPanel
from memsense_gui.window.parts import Shell

PRESET_KEY = "tuning/preset"
BASELINE_KEY = "tuning/baseline"
STATUS_MS = 20_000


class ChoiceMemory:
    """Keeps the chosen preset and baseline in the settings; restores them at start."""

    def __init__(self, ctx: AppContext, shell: Shell, tuning: TuningPanel):
        self.ctx, self.shell, self.tuning = ctx, shell, tuning
        self.note = ""  # what fell back at start, shown until the first store has opened

    def _show_note(self, *_: object) -> None:
        self.shell.statusBar().showMessage(self.note, STATUS_MS)
        if _:
            self.ctx.store_opened.disconnect(self._show_note)

    def restore(self) -> list[str]:
        """Put the saved choices back, then follow the new ones; the notes of what fell back."""
        settings, presets = self.ctx.settings, self.ctx.presets
        notes = []
        name = str(settings.value(PRESET_KEY, "") or "")
        if name and name in presets.names():
            self.tuning.select_preset(name)
        elif name:
            notes.append(f"the preset “{name}” chosen last time is gone (deleted or renamed): settings are shown "
                         f"against “{MEMSENSE}”")
            self.tuning.select_preset(MEMSENSE)
        note = self._restore_baseline(str(settings.value(BASELINE_KEY, "") or ""))
        if note:
            notes.append(note)
        if notes:
            text = "; ".join(notes)
            self.note = text[0].upper() + text[1:] + "."
            self._show_note()
            self.ctx.store_opened.connect(self._show_note)  # the store opening at start says "Opened …" over it
        self.tuning.preset_shown.connect(lambda shown: self.ctx.settings.setValue(PRESET_KEY, shown))
        self.ctx.session.baseline_changed.connect(self._baseline_changed)
        return notes

    def _restore_baseline(self, text: str) -> str:
        if not text:
            return ""
        try:
            saved = json.loads(text)
            preset = saved.get("preset")
            if preset is not None:
                if preset not in self.ctx.presets.names():
                    return f"the baseline preset “{preset}” is gone (deleted or renamed): no baseline is pinned"
                self.ctx.session.pin_baseline(preset_label(preset), self.ctx.presets.get(preset))
            else:
                cfg = config_io.loads(json.dumps(saved["config"]), "json", source="saved baseline")
                self.ctx.session.pin_baseline(str(saved["label"]), cfg)
        except (ValueError, KeyError, TypeError, AttributeError, MemsenseError):
            return "the baseline saved last time could not be read: no baseline is pinned"
        return ""

    def _baseline_changed(self, baseline: Baseline | None) -> None:
        if baseline is None:
            self.ctx.settings.remove(BASELINE_KEY)
            return
        preset = next((n for n in self.ctx.presets.names() if preset_label(n) == baseline.label), None)
        saved = {"label": baseline.label, "preset": preset, "config": config_io.to_dict(baseline.config)}
        self.ctx.settings.setValue(BASELINE_KEY, json.dumps(saved))
