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
        """The offered config's held-out gain over the start: its cross-validated mean over the start's
        with folds (SPEC §16's choice), else on the test users (None when no user was held out)."""
        if self.cv is not None:
            start = next(c for c in self.cv.choice.contenders if c.kind == "start")
            return self.cv.chosen.mean - start.mean
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
        """The search's best trial (of a split's search, or the best so far a cancelled one kept)."""
        if self.result is not None:
            return self.result.best
        return self.kept[1] if self.kept is not None else None

    def offered(self) -> tuple[Config, str] | None:
        """The settings offered and what they are: a cross-validation's choice (SPEC §16), else the search's
        best trial."""
        if self.cv is not None:
            c = self.cv.chosen
            return c.config, (f"auto-tune choice {c.name} (cross-validated {self.cv.metric} {c.mean:.3f}, "
                              f"{self.cv.rests_on()})")
        best = self.best_trial()
        if best is None:
            return None
        metric = self.result.metric if self.result is not None else self.metric_combo.currentText()
        return best.config, f"auto-tune trial {best.number} ({metric} train {best.train:.3f})"

    @Slot()
    def offer_apply(self) -> None:
        offered = self.offered()
        if offered is not None:
            self.apply_requested.emit(*offered)

    def save_best(self, name: str) -> bool:
        offered = self.offered()
        if offered is None or self.save_fn is None:
            return False
        try:
            self.save_fn(name, offered[0])
        except MemsenseError as exc:
            self.status.setText(str(exc))
            return False
        self.preset_saved.emit(name)
        self.status.setText(f"Saved the best settings as preset {name!r}.")
        return True
