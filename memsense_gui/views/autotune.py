"""The auto-tuning panel: pick training and held-out users, search the knobs (core.evaluation.tune),
watch the trial history, see each knob's sensitivity, save the best settings as a preset.

`AutoTuneView` is given a `tune` callable
`(train_users, test_users, metric, trials, progress, cancel) -> TuneResult` and runs it off
the GUI thread (progress, Cancel); `save_preset(name, cfg)` stores the winner.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Sequence

from PySide6.QtCore import QSortFilterProxyModel, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView, QComboBox, QHBoxLayout, QHeaderView, QInputDialog, QLabel, QListWidget, QListWidgetItem,
    QProgressBar, QPushButton, QSpinBox, QSplitter, QTableView, QVBoxLayout, QWidget,
)

from core.config import Config
from core.errors import MemsenseError
from core.evaluation.metrics import metric_names
from core.evaluation.tune import KNOBS, TuneResult
from memsense_gui.models.table import RAW_ROLE
from memsense_gui.models.trials import TrialModel
from memsense_gui.plots.sensitivity import SensitivityPlot
from memsense_gui.workers.runner import Job, Task, TaskRunner
from memsense_gui.workers.slot import TaskSlot

TuneFn = Callable[[Sequence[str], Sequence[str], str, int, Callable[[int, int, str], None], threading.Event],
                  TuneResult]


class AutoTuneView(QWidget):
    """Search the knobs on training users, check held-out users (see module docstring)."""

    tuning_finished = Signal(object)  # TuneResult
    tuning_failed = Signal(object)
    preset_saved = Signal(str)

    def __init__(self, parent: QWidget | None = None, *, tune: TuneFn | None = None,
                 users: Callable[[], Sequence[str]] = lambda: (),
                 save_preset: Callable[[str, Config], None] | None = None):
        super().__init__(parent)
        self.tune_fn, self.users_fn, self.save_fn = tune, users, save_preset
        self.result: TuneResult | None = None
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
        self.knob_combo.addItems([k.name for k in KNOBS])
        self.plot = SensitivityPlot()

        users = QHBoxLayout()
        for label, w in (("train", self.train_list), ("test (held out)", self.test_list)):
            box = QVBoxLayout()
            box.addWidget(QLabel(label))
            box.addWidget(w)
            users.addLayout(box)
        controls = QHBoxLayout()
        for w in (self.metric_combo, self.trials_spin, self.run_button, self.cancel_button, self.save_button):
            controls.addWidget(w)
        controls.addWidget(self.progress, 1)
        right = QWidget()
        rv = QVBoxLayout(right)
        rv.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(QLabel("sensitivity to"))
        row.addWidget(self.knob_combo, 1)
        rv.addLayout(row)
        rv.addWidget(self.plot, 1)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.table)
        split.addWidget(right)
        layout = QVBoxLayout(self)
        layout.addLayout(users)
        layout.addLayout(controls)
        layout.addWidget(self.status)
        layout.addWidget(split, 1)

        self.run_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        self.save_button.clicked.connect(self.ask_save)
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

    def ticked(self, box: QListWidget) -> list[str]:
        return [box.item(i).text() for i in range(box.count()) if box.item(i).checkState() == Qt.CheckState.Checked]

    @Slot()
    def start(self) -> Task | None:
        if self.tune_fn is None:
            self.status.setText("Nothing to tune: open a store first.")
            return None
        train, test = self.ticked(self.train_list), self.ticked(self.test_list)
        self.progress.setVisible(True)
        self.progress.setRange(0, 0)
        self.cancel_button.setEnabled(True)
        self.status.setText(f"Tuning {self.metric_combo.currentText()} on {', '.join(train) or 'no users'}…")
        return self.slot.start("tune", _run_tune, self.tune_fn, train, test, self.metric_combo.currentText(),
                               self.trials_spin.value())

    @Slot()
    def cancel(self) -> None:
        self.slot.cancel()

    def _progressed(self, done: int, total: int, what: str) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self.progress.setFormat(f"{what}  %v/%m")

    def _finished(self, result: TuneResult) -> None:
        self._stop()
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
        self.result = result
        self.model.set_trials(result.trials, result.best.number)
        b, s = result.best, result.start
        test = "" if b.test is None else f", held-out {s.test:.3f} → {b.test:.3f}"
        self.status.setText(f"{result.metric}: train {s.train:.3f} → {b.train:.3f}{test} "
                            f"(best = trial {b.number} of {len(result.trials)}"
                            f"{', cancelled' if result.cancelled else ''}). A gap between train and held-out "
                            "shows over-fitting.")
        self.save_button.setEnabled(self.save_fn is not None)
        self._show_sensitivity()

    def _show_sensitivity(self, *_: Any) -> None:
        if self.result is None:
            return
        knob = self.knob_combo.currentText()
        points = self.result.sensitivity.get(knob, ())
        best = next(k.get(self.result.best.config) for k in KNOBS if k.name == knob)
        self.plot.set_points(knob, points, best, self.result.metric)

    @Slot()
    def ask_save(self) -> None:
        name, ok = QInputDialog.getText(self, "Save tuned preset", "Preset name:", text="tuned")
        if ok and name.strip():
            self.save_best(name.strip())

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


def _run_tune(tune: TuneFn, train: list[str], test: list[str], metric: str, trials: int, task: Job) -> TuneResult:
    return tune(train, test, metric, trials, task.report, task.cancel_event)
