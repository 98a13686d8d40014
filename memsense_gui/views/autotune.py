"""The auto-tuning panel: pick training and held-out users, search the knobs (core.evaluation.tune),
watch the trial history, see each knob's sensitivity, save the best settings as a preset.

`AutoTuneView` is given a `tune` callable and, optionally, a `cross_validate` one (k-fold
cross-validation by user, SPEC §12; both in `workers.tuning`) and runs them off the GUI thread
(progress, Cancel); `save_preset(name, cfg)` stores the winner. With 2 or more folds every user of
the question set is dealt into folds (the user lists are disabled, a line says so); with a
train/test split the ticked training users are tuned on and the ticked held-out users reported,
and with two or more training users the choice is cross-validated over them. Either way what is
offered is chosen among the start, every preset and the search by the one-standard-error rule
(SPEC §16), and the panel shows each contender's cross-validated figure beside the chosen one, each
fold's train and held-out figures and the bootstrap interval of the search's gain. With one
training user the search's best is offered and the panel says it rests on that user alone. Saving
a config whose held-out gain is not above zero asks first. The studies are kept on disk by the source:
Tune with the same choices resumes a cancelled or unfinished run (the trials count is the
total); `forget()` deletes them ("Start over").

Steering: the Search space tab locks knobs (at their value in the settings on screen) and sets
ranges (`core.evaluation.space`); every trial shows in the table (sortable by the objective and
by each knob) and in the History plot (objective and best so far, one colour per fold) within
`REFRESH_MS` of being scored (`state.trial_feed`), with an ETA from the measured trial rate.
Cancel keeps the best trial so far and says how many trials it rests on. Apply… offers the best
settings with their diff (`apply_requested(cfg, what)`: the window shows the diff and applies in
one undoable step); that and Save as preset are `views.autotune_winner.TunedWinner`, which this
view builds on.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from PySide6.QtCore import QSortFilterProxyModel, Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView, QCheckBox, QComboBox, QHBoxLayout, QHeaderView, QLabel, QListWidget, QListWidgetItem,
    QPlainTextEdit, QProgressBar, QPushButton, QSpinBox, QSplitter, QTableView, QTabWidget, QVBoxLayout,
    QWidget,
)

from core.config import Config
from core.errors import MemsenseError
from core.evaluation.cv import CrossValidation
from core.evaluation.metrics import metric_names
from core.evaluation.tune import ALL_KNOBS, KNOBS, Trial, TuneResult
from memsense_gui.models.table import RAW_ROLE
from memsense_gui.models.trials import TrialModel
from memsense_gui.plots.sensitivity import SensitivityPlot
from memsense_gui.plots.trials import TrialHistoryPlot
from memsense_gui.state.trial_feed import SPLIT_RUN, TrialFeed, TrialRate
from memsense_gui.views.study_watch import StudyWatcher
from memsense_gui.views.autotune_text import IN_SAMPLE, choice_lines, kept_text
from memsense_gui.views.autotune_winner import TunedWinner
from memsense_gui.views.search_space import SearchSpaceEditor
from memsense_gui.workers.runner import Task, TaskRunner
from memsense_gui.workers.slot import TaskSlot
from memsense_gui.workers.tuning import CrossValidateFn, TuneFn, run_cv, run_tune


REFRESH_MS = 500
"""How often a running search is shown (progress bar, ETA, the trials scored since the last look in
the table and the History plot, all together), rather than on every trial (30 to 50 a second on
LoCoMo dev): a look costs about 30 ms of the GUI thread in a 1600×1000 window (25 at 1280×700),
and that thread shares the interpreter and the cores with the search."""
SPLIT = 1
"""The folds spin box's lowest value: no cross-validation, the ticked train/test split."""
DEFAULT_FOLDS = 5


class AutoTuneView(TunedWinner):
    """Search the knobs on training users, check held-out users (see module docstring)."""

    tuning_finished = Signal(object)  # TuneResult, or CrossValidation with 2 or more folds
    tuning_failed = Signal(object)
    tuning_cancelled = Signal(object)  # (run, best trial, trials it rests on), or None when no trial was scored

    def __init__(self, parent: QWidget | None = None, *, tune: TuneFn | None = None,
                 users: Callable[[], Sequence[str]] = lambda: (),
                 save_preset: Callable[[str, Config], None] | None = None,
                 cross_validate: CrossValidateFn | None = None, forget: Callable[[], Any] | None = None,
                 current: Callable[[], Config] = Config):
        super().__init__(parent)
        self.tune_fn, self.users_fn, self.save_fn, self.cv_fn = tune, users, save_preset, cross_validate
        self.forget_fn = forget
        self.current = current
        self.result: TuneResult | None = None
        self.cv: CrossValidation | None = None
        self.kept: tuple[str, Trial, int] | None = None  # what a cancelled run keeps
        self.feed, self.rate = TrialFeed(), TrialRate()
        self._report: tuple[int, int, str] | None = None  # the newest progress report not yet shown
        self._refresh = QTimer(self)
        self._refresh.setSingleShot(True)
        self._refresh.setInterval(REFRESH_MS)
        self._refresh.timeout.connect(self._show_report)
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
        self.users_note = QLabel("Folds use every user of the question set: each fold holds some out while the "
                                 "others tune. The ticks below are for a train/test split (set folds to it).")
        self.users_note.setWordWrap(True)
        self.users_note.setObjectName("autotune-users-note")
        self.users_note.setVisible(False)
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
        self.folds_text.setMaximumHeight(150)
        self.folds_text.setVisible(False)
        self.importance_label = QLabel()
        self.importance_label.setWordWrap(True)
        self.run_button = QPushButton("Tune")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.save_button = QPushButton("Save best as preset…")
        self.save_button.setEnabled(False)
        self.apply_button = QPushButton("Apply best…")
        self.apply_button.setObjectName("autotune-apply")
        self.apply_button.setToolTip("Apply the best trial's settings: their diff and rank movement first, then one "
                                     "step Ctrl+Z undoes")
        self.apply_button.setEnabled(False)
        self.watch_button = QPushButton("Watch a study…")
        self.watch_button.setToolTip("Show the trials of a study `memsense tune --storage` workers are running, as "
                                     "they arrive (views.study_watch); nothing is run here")
        self.progress = QProgressBar()
        self.progress.setVisible(False)
        self.progress.setMinimumWidth(240)
        self.eta_label = QLabel()
        self.eta_label.setObjectName("autotune-eta")
        self.space_editor = SearchSpaceEditor(self.current)
        self.history_plot = TrialHistoryPlot()
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
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 8)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setResizeContentsPrecision(0)  # columns fit the rows in sight, never every trial's cells: with the
        # whole table repainted per look as well, a look took 88 ms at 30 trials and 470 ms at 200
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
                        self.cancel_button, self.apply_button, self.save_button, self.forget_button,
                        self.watch_button):
            controls.addWidget(control)
        controls.addStretch(1)
        progress = QHBoxLayout()  # a row of its own: never squeezed by the buttons
        progress.addWidget(self.progress, 1)
        progress.addWidget(self.eta_label)
        right = QWidget()
        rv = QVBoxLayout(right)
        rv.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(QLabel("sensitivity to"))
        row.addWidget(self.knob_combo, 1)
        rv.addLayout(row)
        rv.addWidget(self.plot, 1)
        rv.addWidget(self.importance_label)
        left_tabs, right_tabs = QTabWidget(), QTabWidget()
        left_tabs.addTab(self.table, "Trials")
        left_tabs.addTab(self.space_editor, "Search space")
        right_tabs.addTab(self.history_plot, "History")
        right_tabs.addTab(right, "Sensitivity")
        self.left_tabs, self.right_tabs = left_tabs, right_tabs
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left_tabs)
        split.addWidget(right_tabs)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.addWidget(self.users_note)
        layout.addLayout(users)
        layout.addLayout(controls)
        layout.addLayout(progress)
        layout.addWidget(self.status)
        layout.addWidget(self.folds_text)
        layout.addWidget(split, 1)

        self.run_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        self.save_button.clicked.connect(self.ask_save)
        self.apply_button.clicked.connect(self.offer_apply)
        self.forget_button.clicked.connect(self.forget)
        self.watcher = StudyWatcher(self)
        self.watch_button.clicked.connect(self.watcher.ask)
        self.pool_check.toggled.connect(self._pool_toggled)
        self.folds_spin.valueChanged.connect(self._folds_changed)
        self._pool_toggled(self.pool_check.isChecked())
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
        self._folds_changed(self.folds_spin.value())

    def _folds_changed(self, folds: int) -> None:
        """Folds use every user: the user lists are for a split only, and say so when unused."""
        split = folds <= SPLIT or self.cv_fn is None
        for box in (self.train_list, self.test_list):
            box.setEnabled(split)
        self.users_note.setVisible(not split)

    def ticked(self, box: QListWidget) -> list[str]:
        return [box.item(i).text() for i in range(box.count()) if box.item(i).checkState() == Qt.CheckState.Checked]

    @Slot()
    def start(self) -> Task | None:
        if self.tune_fn is None:
            self.status.setText("Nothing to tune: open a store first.")
            return None
        try:
            space = self.space_editor.space()
        except MemsenseError as exc:
            self.left_tabs.setCurrentWidget(self.space_editor)
            self.status.setText(f"Cannot tune: {exc}.")
            return None
        train, test = self.ticked(self.train_list), self.ticked(self.test_list)
        folds = self.folds_spin.value() if self.cv_fn is not None else SPLIT
        metric, trials, pools = self.metric_combo.currentText(), self.trials_spin.value(), self.pool_check.isChecked()
        self._reset_run()
        if folds > SPLIT:
            users = list(self.users_fn())
            self.status.setText(f"Cross-validating {metric}: {folds} folds over every user "
                                f"({', '.join(users) or 'none'})…")
            return self.slot.start("tune", run_cv, self.cv_fn, users, metric, trials, folds, pools, space,
                                   self.feed.add, [])
        if len(train) >= 2 and self.cv_fn is not None:
            k = min(DEFAULT_FOLDS, len(train))
            held = f"; held out {', '.join(test)}" if test else ""
            self.status.setText(f"Tuning {metric} on {', '.join(train)}, choosing by {k}-fold cross-validation "
                                f"over them{held}…")
            return self.slot.start("tune", run_cv, self.cv_fn, train, metric, trials, k, pools, space,
                                   self.feed.add, test)
        self.status.setText(f"Tuning {metric} on {', '.join(train) or 'no users'}…")
        return self.slot.start("tune", run_tune, self.tune_fn, train, test, metric, trials, pools, space,
                               lambda trial: self.feed.add(SPLIT_RUN, trial))

    def _reset_run(self) -> None:
        self.feed.reset()
        self.rate.reset()
        self.result, self.cv, self.kept = None, None, None
        self.model.set_rows([])
        self.history_plot.clear_runs(self.metric_combo.currentText())
        self.progress.setVisible(True)
        self.progress.setRange(0, 0)
        self.eta_label.setText("")
        self.cancel_button.setEnabled(True)
        self.save_button.setEnabled(False)
        self.apply_button.setEnabled(False)

    def _pool_toggled(self, on: bool) -> None:
        self.space_editor.set_knobs(ALL_KNOBS if on else KNOBS)

    def _take_trials(self) -> None:
        """Show the trials scored since the last look: table rows, plot points, best so far."""
        new = self.feed.drain()
        if not new:
            return
        self.model.add(new)
        self.history_plot.set_runs(self.feed.runs)
        kept = self.feed.kept_best()
        self.model.set_best(None if kept is None else (kept[0], kept[1].number))

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
        """A progress report: shown with the trials since the last look at most every `REFRESH_MS`."""
        self._report = (done, total, what)
        if not self._refresh.isActive():
            self._refresh.start()

    def _show_report(self) -> None:
        if self._report is None:
            return
        done, total, what = self._report
        self._report = None
        self.progress.setRange(0, max(total, 1))  # a total of 0: a step of unknown length, named on an empty
        self.progress.setValue(done)  # bar (a busy bar shows no text)
        self.progress.setFormat(f"{what}  %v/%m" if total else what)
        if "trial " in what:
            self.rate.observe(done, total)
            self.eta_label.setText(self.rate.text())
        else:  # the trials' rate says nothing of the steps after them
            self.eta_label.setText("")
        self._take_trials()

    def _finished(self, result: TuneResult | CrossValidation) -> None:
        self._stop()
        self._take_trials()
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
        self._take_trials()
        self.kept = self.feed.kept_best()
        if self.kept is not None and self.kept[0] != SPLIT_RUN:  # a fold's best was chosen on its training users
            self.kept = None
            self.status.setText("Tuning cancelled before a fold finished: no held-out figure to choose by "
                                "(SPEC §16), so nothing is kept.")
        elif self.kept is None:
            self.status.setText("Tuning cancelled before any trial was scored: nothing to keep.")
        else:
            self.status.setText(f"Tuning cancelled. {kept_text(self.kept)}")
            self.apply_button.setEnabled(True)
            self.save_button.setEnabled(self.save_fn is not None)
        self.tuning_cancelled.emit(self.kept)

    def _stop(self) -> None:
        self._refresh.stop()
        self._report = None
        self.progress.setVisible(False)
        self.cancel_button.setEnabled(False)
        self.eta_label.setText("")

    def set_result(self, result: TuneResult) -> None:
        self.result, self.cv = result, None
        self.folds_text.setVisible(False)
        self._show_trials(result)
        b, s = result.best, result.start
        test = "" if b.test is None else f", held-out {s.test:.3f} → {b.test:.3f}"
        if result.cancelled:
            self.kept = (SPLIT_RUN, b, len(result.trials))
        cancelled = f" Cancelled: {kept_text(self.kept)}" if result.cancelled else ""
        self.status.setText(f"{result.metric}: train {s.train:.3f} → {b.train:.3f}{test} "
                            f"(best = trial {b.number} of {len(result.trials)}). A gap between train and held-out "
                            f"shows over-fitting. {IN_SAMPLE}{cancelled}{self._save_warning()}")

    def set_cv(self, cv: CrossValidation) -> None:
        """Show a cross-validation: the choice among the contenders (each one's cross-validated figure,
        the chosen one and why), per-fold figures and the search's gain with its interval; the trial
        history and sensitivity are those of the search run on every (training) user."""
        self.cv = cv
        self.result = cv.final
        self._show_trials(cv.final)
        self.folds_text.setPlainText("\n".join(choice_lines(cv)))
        self.folds_text.setVisible(True)
        over = f"training users {', '.join(u for f in cv.folds for u in f.held_users)}" if cv.test_users else "user"
        self.status.setText(f"{len(cv.folds)}-fold cross-validation by {over}, {cv.search} search: "
                            f"{cv.verdict()}. Apply best… applies {cv.chosen.name}.{self._save_warning()}")

    def _show_trials(self, result: TuneResult) -> None:
        """The trials as scored (every run), the final search's best marked; a result that comes
        without streamed trials (a callable that does not stream) is shown from the result."""
        run = SPLIT_RUN if self.cv is None else "all users"
        if not self.feed.runs.get(run):
            self.feed.runs[run] = list(result.trials)
            self.model.set_rows([(r, t) for r, ts in self.feed.runs.items() for t in ts])
            self.history_plot.set_runs(self.feed.runs)
        self.model.set_best((run, result.best.number))
        self.save_button.setEnabled(self.save_fn is not None)
        self.apply_button.setEnabled(True)
        ranked = sorted(result.importances.items(), key=lambda kv: -kv[1])
        self.importance_label.setText(
            "parameter importance (Optuna fANOVA over the trials): " + ", ".join(f"{k} {v:.2f}" for k, v in ranked)
            if ranked else "")
        self._show_sensitivity()

    def _show_sensitivity(self, *_: Any) -> None:
        if self.result is None:
            return
        knob = self.knob_combo.currentText()
        points = self.result.sensitivity.get(knob, ())
        best = next(k.get(self.result.best.config) for k in ALL_KNOBS if k.name == knob)
        self.plot.set_points(knob, points, best, self.result.metric, self.result.importances.get(knob))

    @Slot()
    def shutdown(self) -> None:
        self.watcher.shutdown()
        self.slot.cancel()
        self.runner.shutdown(wait=False)

