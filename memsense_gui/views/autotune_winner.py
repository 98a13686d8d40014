"""What the Auto-tune tab does with its winner: offer it to the window (Apply…, with the diff of
its settings: `apply_requested(cfg, what)`) or save it as a preset, asking first when nothing shows
it generalises (no user held out, or a held-out gain not above zero). `AutoTuneView` builds on it."""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import QComboBox, QInputDialog, QLabel, QMessageBox, QWidget

from core.config import Config
from core.errors import MemsenseError
from core.evaluation.cv import CrossValidation
from core.evaluation.tune import Trial, TuneResult


class TunedWinner(QWidget):
    """The winner's Apply and Save of the Auto-tune tab (the run that finds it: `AutoTuneView`)."""

    preset_saved = Signal(str)
    apply_requested = Signal(object, str)  # Config, what it is

    result: TuneResult | None
    cv: CrossValidation | None
    kept: tuple[str, Trial, int] | None  # what a cancelled run keeps
    save_fn: Callable[[str, Config], None] | None
    metric_combo: QComboBox
    status: QLabel

    def held_out_gain(self) -> float | None:
        """The best config's held-out gain over the start: cross-validated with folds, else on the test
        users (None when no user was held out)."""
        if self.cv is not None:
            return None if self.cv.cancelled else self.cv.gain
        if self.result is None or self.result.best.test is None or self.result.start.test is None:
            return None
        return self.result.best.test - self.result.start.test

    def _save_warning(self) -> str:
        gain = self.held_out_gain()
        if gain is not None and gain > 0:
            return ""
        why = "no user was held out" if gain is None else f"the held-out gain is {gain:+.3f}, not above zero"
        return f" Saving asks first: {why}, so the start may be the better choice."

    @Slot()
    def ask_save(self) -> None:
        if not self.confirm_save():
            return
        name, ok = QInputDialog.getText(self, "Save tuned preset", "Preset name:", text="tuned")
        if ok and name.strip():
            self.save_best(name.strip())

    def confirm_save(self) -> bool:
        """True when the held-out gain is above zero, or the user agrees to save anyway."""
        gain = self.held_out_gain()
        if gain is not None and gain > 0:
            return True
        why = ("no user was held out, so nothing shows the tuned settings do better on users they did not see"
               if gain is None else f"on held-out users the tuned settings gain {gain:+.3f} "
               f"({self.result.metric if self.result else ''}), not above zero: tuning did not generalise")
        answer = QMessageBox.question(self, "Save tuned preset?", f"{why.capitalize()}.\n\nSave them anyway?",
                                      QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                                      QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    def best_trial(self) -> Trial | None:
        """The trial offered: the search's best, or the best so far a cancelled run kept."""
        if self.result is not None:
            return self.result.best
        return self.kept[1] if self.kept is not None else None

    @Slot()
    def offer_apply(self) -> None:
        best = self.best_trial()
        if best is None:
            return
        metric = self.result.metric if self.result is not None else self.metric_combo.currentText()
        self.apply_requested.emit(best.config, f"auto-tune trial {best.number} ({metric} train {best.train:.3f})")

    def save_best(self, name: str) -> bool:
        best = self.best_trial()
        if best is None or self.save_fn is None:
            return False
        try:
            self.save_fn(name, best.config)
        except MemsenseError as exc:
            self.status.setText(str(exc))
            return False
        self.preset_saved.emit(name)
        self.status.setText(f"Saved the best settings as preset {name!r}.")
        return True
