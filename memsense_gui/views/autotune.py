"""The auto-tuning panel: pick training and held-out users, search the knobs (core.evaluation.tune),
watch the trial history, see each knob's sensitivity, save the best settings as a preset.

`AutoTuneView` is given a `tune` callable
`(train_users, test_users, metric, trials, progress, cancel) -> TuneResult` and, optionally, a
`cross_validate` callable `(users, metric, trials, folds, progress, cancel) -> CrossValidation`
(k-fold cross-validation by user, SPEC §12); it runs them off the GUI thread (progress,
Cancel); `save_preset(name, cfg)` stores the winner. With 2 or more folds the ticked users of
both lists are dealt into folds, and the panel shows each fold's train and held-out figures,
the cross-validated held-out metric and the bootstrap interval of its gain. Saving a config
whose held-out gain is not above zero asks first. Both callables also take `pool_limits`
(search the pool limits too, as the CLI does). The studies are kept on disk by the source:
Tune with the same choices resumes a cancelled or unfinished run (the trials count is the
total); `forget()` deletes them ("Start over").
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Protocol, Sequence

from PySide6.QtCore import QSortFilterProxyModel, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView, QCheckBox, QComboBox, QHBoxLayout, QHeaderView, QInputDialog, QLabel, QListWidget, QListWidgetItem,
    QMessageBox, QPlainTextEdit, QProgressBar, QPushButton, QSpinBox, QSplitter, QTableView, QVBoxLayout, QWidget,
)

from core.config import Config
from core.errors import MemsenseError
from core.evaluation.cv import CrossValidation
from core.evaluation.metrics import metric_names
from core.evaluation.tune import ALL_KNOBS, TuneResult
from memsense_gui.models.table import RAW_ROLE
from memsense_gui.models.trials import TrialModel
from memsense_gui.plots.sensitivity import SensitivityPlot
from memsense_gui.workers.runner import Job, Task, TaskRunner
from memsense_gui.workers.slot import TaskSlot

class TuneFn(Protocol):
    """(train users, test users, metric, trials, progress, cancel; pool_limits) -> the tuning's result."""

    def __call__(self, train: Sequence[str], test: Sequence[str], metric: str, trials: int,
                 progress: Callable[[int, int, str], None], cancel: threading.Event, /, *,
                 pool_limits: bool = False) -> TuneResult: ...


class CrossValidateFn(Protocol):
    """(users, metric, trials, folds, progress, cancel; pool_limits) -> the cross-validation."""

    def __call__(self, users: Sequence[str], metric: str, trials: int, folds: int,
                 progress: Callable[[int, int, str], None], cancel: threading.Event, /, *,
                 pool_limits: bool = False) -> CrossValidation: ...
SPLIT = 1
"""The folds spin box's lowest value: no cross-validation, the ticked train/test split."""
DEFAULT_FOLDS = 5


class AutoTuneView(QWidget):
    """Search the knobs on training users, check held-out users (see module docstring)."""

    tuning_finished = Signal(object)  # TuneResult, or CrossValidation with 2 or more folds
    tuning_failed = Signal(object)
    preset_saved = Signal(str)

    def __init__(self, parent: QWidget | None = None, *, tune: TuneFn | None = None,
                 users: Callable[[], Sequence[str]] = lambda: (),
                 save_preset: Callable[[str, Config], None] | None = None,
                 cross_validate: CrossValidateFn | None = None, forget: Callable[[], Any] | None = None):
        super().__init__(parent)
        self.tune_fn, self.users_fn, self.save_fn, self.cv_fn = tune, users, save_preset, cross_validate
        self.forget_fn = forget
        self.result: TuneResult | None = None
        self.cv: CrossValidation | None = None
        self.runner = TaskRunner("memsense-autotune", self)
        self.slot = TaskSlot(self.runner, succeeded=self._finished, failed=self._failed,
                             cancelled=self._cancelled, progressed=self._progressed)
        self._build()

    @property
    def task(self) -> Task | None:
        return self.slot.task

    def _build(self) -> None:
        self.train_list, self.test_list = QListWidget(), QListWidget()
        for w in (self.train_list, self.test_list):
            w.setMaximumHeight(110)
        self.metric_combo = QComboBox()
        self.metric_combo.addItems(list(metric_names(4)))
        self.metric_combo.setCurrentText("recall_all@4")
        self.trials_spin = QSpinBox()
        self.trials_spin.setRange(1, 5000)
        self.trials_spin.setValue(200)
        self.trials_spin.setSuffix(" trials")
        self.folds_spin = QSpinBox()
        self.folds_spin.setRange(SPLIT, 20)
        self.folds_spin.setSpecialValueText("train/test split")
        self.folds_spin.setSuffix(" folds")
        self.folds_spin.setToolTip("k-fold cross-validation by user: each fold's users are held out while the "
                                   "others tune; the ticked users of both lists are dealt into the folds")
        self.folds_spin.setVisible(self.cv_fn is not None)
        self.pool_check = QCheckBox("pool limits")
        self.pool_check.setChecked(True)
        self.pool_check.setToolTip("Search the pool limits too (candidate and route limit multipliers and minimums), "
                                   "as `memsense tune` does; recall then runs deeper once")
        self.forget_button = QPushButton("Start over")
        self.forget_button.setToolTip("Tune keeps its trials on disk and resumes an unfinished run with the same "
                                      "choices; this forgets them for this store and question set")
        self.forget_button.setVisible(self.forget_fn is not None)
        self.folds_text = QPlainTextEdit()
        self.folds_text.setReadOnly(True)
        self.folds_text.setMaximumHeight(120)
        self.folds_text.setVisible(False)
        self.importance_label = QLabel()
        self.importance_label.setWordWrap(True)
        self.run_button = QPushButton("Tune")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.save_button = QPushButton("Save best as preset…")
        self.save_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setVisible(False)
        self.status = QLabel("Tick training users and held-out users, then Tune.")
        self.status.setWordWrap(True)
        self.model = TrialModel(self)
        proxy = QSortFilterProxyModel(self)
        proxy.setSourceModel(self.model)
        proxy.setSortRole(RAW_ROLE)
        self.table = QTableView()
        self.table.setModel(proxy)
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.knob_combo = QComboBox()
        self.knob_combo.addItems([k.name for k in ALL_KNOBS])
        self.plot = SensitivityPlot()

        users = QHBoxLayout()
        for label, w in (("train", self.train_list), ("test (held out)", self.test_list)):
            box = QVBoxLayout()
            box.addWidget(QLabel(label))
            box.addWidget(w)
            users.addLayout(box)
        controls = QHBoxLayout()
        for control in (self.metric_combo, self.trials_spin, self.folds_spin, self.pool_check, self.run_button,
                        self.cancel_button, self.save_button, self.forget_button):
            controls.addWidget(control)
        controls.addWidget(self.progress, 1)
        right = QWidget()
        rv = QVBoxLayout(right)
        rv.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(QLabel("sensitivity to"))
        row.addWidget(self.knob_combo, 1)
        rv.addLayout(row)
        rv.addWidget(self.plot, 1)
        rv.addWidget(self.importance_label)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.table)
        split.addWidget(right)
        layout = QVBoxLayout(self)
        layout.addLayout(users)
        layout.addLayout(controls)
        layout.addWidget(self.status)
        layout.addWidget(self.folds_text)
        layout.addWidget(split, 1)

        self.run_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        self.save_button.clicked.connect(self.ask_save)
        self.forget_button.clicked.connect(self.forget)
        self.knob_combo.currentTextChanged.connect(self._show_sensitivity)
        self.refresh_users()

    def refresh_users(self) -> None:
        """List the store's users: the first ones ticked for training, the last two held out."""
        users = list(self.users_fn())
        split = max(1, len(users) - 2) if len(users) > 1 else len(users)
        for box, ticked in ((self.train_list, users[:split]), (self.test_list, users[split:])):
            box.clear()
            for u in users:
                item = QListWidgetItem(u)
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Checked if u in ticked else Qt.CheckState.Unchecked)
                box.addItem(item)
        folds = min(DEFAULT_FOLDS, len(users)) if self.cv_fn is not None and len(users) >= 3 else SPLIT
        self.folds_spin.setValue(folds)

    def ticked(self, box: QListWidget) -> list[str]:
        return [box.item(i).text() for i in range(box.count()) if box.item(i).checkState() == Qt.CheckState.Checked]

    @Slot()
    def start(self) -> Task | None:
        if self.tune_fn is None:
            self.status.setText("Nothing to tune: open a store first.")
            return None
        train, test = self.ticked(self.train_list), self.ticked(self.test_list)
        folds = self.folds_spin.value() if self.cv_fn is not None else SPLIT
        self.progress.setVisible(True)
        self.progress.setRange(0, 0)
        self.cancel_button.setEnabled(True)
        self.save_button.setEnabled(False)
        if folds > SPLIT:
            users = list(dict.fromkeys([*train, *test]))
            self.status.setText(f"Cross-validating {self.metric_combo.currentText()}: {folds} folds over "
                                f"{', '.join(users) or 'no users'}…")
            return self.slot.start("tune", _run_cv, self.cv_fn, users, self.metric_combo.currentText(),
                                   self.trials_spin.value(), folds, self.pool_check.isChecked())
        self.status.setText(f"Tuning {self.metric_combo.currentText()} on {', '.join(train) or 'no users'}…")
        return self.slot.start("tune", _run_tune, self.tune_fn, train, test, self.metric_combo.currentText(),
                               self.trials_spin.value(), self.pool_check.isChecked())

    @Slot()
    def forget(self) -> None:
        """Delete the saved studies: the next Tune starts from trial 0."""
        if self.forget_fn is None or (self.task is not None and not self.task.done):
            return
        try:
            where = self.forget_fn()
        except (MemsenseError, OSError) as exc:
            self.status.setText(f"Cannot forget the saved trials: {exc}")
            return
        self.status.setText(f"Forgot the saved trials ({where}); the next Tune starts afresh.")

    @Slot()
    def cancel(self) -> None:
        self.slot.cancel()

    def _progressed(self, done: int, total: int, what: str) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self.progress.setFormat(f"{what}  %v/%m")

    def _finished(self, result: TuneResult | CrossValidation) -> None:
        self._stop()
        if isinstance(result, CrossValidation):
            self.set_cv(result)
        else:
            self.set_result(result)
        self.tuning_finished.emit(result)

    def _failed(self, exc: BaseException) -> None:
        self._stop()
        self.status.setText(f"Tuning failed: {exc}")
        self.tuning_failed.emit(exc)

    def _cancelled(self, _exc: BaseException) -> None:
        self._stop()
        self.status.setText("Tuning cancelled.")

    def _stop(self) -> None:
        self.progress.setVisible(False)
        self.cancel_button.setEnabled(False)

    def set_result(self, result: TuneResult) -> None:
        self.result, self.cv = result, None
        self.folds_text.setVisible(False)
        self._show_trials(result)
        b, s = result.best, result.start
        test = "" if b.test is None else f", held-out {s.test:.3f} → {b.test:.3f}"
        self.status.setText(f"{result.metric}: train {s.train:.3f} → {b.train:.3f}{test} "
                            f"(best = trial {b.number} of {len(result.trials)}"
                            f"{', cancelled' if result.cancelled else ''}). A gap between train and held-out "
                            f"shows over-fitting.{self._save_warning()}")

    def set_cv(self, cv: CrossValidation) -> None:
        """Show a cross-validation: per-fold figures, the cross-validated metric and the gain's interval;
        the trial history and sensitivity are those of the search run on every user."""
        self.cv = cv
        self.result = cv.final
        self._show_trials(cv.final)
        sd, lo, hi = cv.held_spread
        lines = [f"fold {f.number}: held out {', '.join(f.held_users)} ({f.held_questions} questions) — "
                 f"train {f.start_train:.3f} → {f.train:.3f}, held-out {f.start_held:.3f} → {f.held:.3f} "
                 f"(gain {f.gain:+.3f})" for f in cv.folds]
        lines.append(f"held-out over the folds: mean {cv.cv_metric:.3f} over {cv.questions} questions, "
                     f"sd {sd:.3f}, min {lo:.3f}, max {hi:.3f}")
        self.folds_text.setPlainText("\n".join(lines))
        self.folds_text.setVisible(True)
        self.status.setText(f"{len(cv.folds)}-fold cross-validation by user, {cv.search} search: "
                            f"{cv.verdict()}.{self._save_warning()}")

    def _show_trials(self, result: TuneResult) -> None:
        self.model.set_trials(result.trials, result.best.number)
        self.save_button.setEnabled(self.save_fn is not None)
        ranked = sorted(result.importances.items(), key=lambda kv: -kv[1])
        self.importance_label.setText(
            "parameter importance (Optuna fANOVA over the trials): " + ", ".join(f"{k} {v:.2f}" for k, v in ranked)
            if ranked else "")
        self._show_sensitivity()

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

    def _show_sensitivity(self, *_: Any) -> None:
        if self.result is None:
            return
        knob = self.knob_combo.currentText()
        points = self.result.sensitivity.get(knob, ())
        best = next(k.get(self.result.best.config) for k in ALL_KNOBS if k.name == knob)
        self.plot.set_points(knob, points, best, self.result.metric, self.result.importances.get(knob))

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

    def save_best(self, name: str) -> bool:
        if self.result is None or self.save_fn is None:
            return False
        try:
            self.save_fn(name, self.result.best.config)
        except MemsenseError as exc:
            self.status.setText(str(exc))
            return False
        self.preset_saved.emit(name)
        self.status.setText(f"Saved the best settings as preset {name!r}.")
        return True

    @Slot()
    def shutdown(self) -> None:
        self.slot.cancel()
        self.runner.shutdown(wait=False)


def _run_tune(tune: TuneFn, train: list[str], test: list[str], metric: str, trials: int, pool_limits: bool,
              task: Job) -> TuneResult:
    return tune(train, test, metric, trials, task.report, task.cancel_event, pool_limits=pool_limits)


def _run_cv(cross_validate: CrossValidateFn, users: list[str], metric: str, trials: int, folds: int,
            pool_limits: bool, task: Job) -> CrossValidation:
    return cross_validate(users, metric, trials, folds, task.report, task.cancel_event, pool_limits=pool_limits)
