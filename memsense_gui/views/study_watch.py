"""Watch a shared tuning study from the Auto-tune tab (issue 38): attach to a study that `memsense
tune --storage URL --study NAME` workers are filling (PostgreSQL, SQLite or a journal file, on this
machine or not) and show its trials as they arrive: the trial table, the History plot, the ETA
from their measured rate, and the best so far by the one-worker rule
(`core.evaluation.shared_study.watch_study`); Apply best… applies it. Watching only reads: no
trial is run here, and nothing is written to the study.

The study is read every `POLL_MS` on this watcher's own task runner (one read at a time); the
address follows the Connect dialog's rules (a password in it moves to a masked field, and is never
saved or shown: messages name the redacted address).
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from core.errors import MemsenseError
from core.evaluation.shared_study import Watched, open_watched, watch_study
from core.evaluation.study_storage import StudyStorage, parse_storage, storage_error
from core.redact import redact, with_password
from memsense_gui.views.dialogs import take_password
from memsense_gui.state.trial_feed import SPLIT_RUN
from memsense_gui.workers.runner import Task, TaskRunner

POLL_MS = 1000
"""How often a watched study is read again."""


class WatchDialog(QDialog):
    """The study to watch: its storage's address (the password in a masked field) and its name."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Watch a tuning study")
        self.address = QLineEdit()
        self.address.setObjectName("watch-address")
        self.address.setPlaceholderText("postgresql://USER@HOST:5432/DB, sqlite:///FILE or a journal file")
        self.password = QLineEdit()
        self.password.setEchoMode(QLineEdit.EchoMode.Password)
        self.password.setPlaceholderText("not saved (or PGPASSWORD / ~/.pgpass)")
        self.address.editingFinished.connect(lambda: take_password(self.address, self.password))
        self.study = QLineEdit()
        self.study.setObjectName("watch-study")
        self.study.setPlaceholderText("the --study its workers were given")
        form = QFormLayout()
        form.addRow("Storage", self.address)
        form.addRow("Password", self.password)
        form.addRow("Study", self.study)
        note = QLabel("The trials show as the workers report them; nothing is run or written here.")
        note.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(note)
        layout.addWidget(buttons)
        self.resize(560, self.sizeHint().height())

    def _accept(self) -> None:
        take_password(self.address, self.password)
        if self.address.text().strip() and self.study.text().strip():
            self.accept()

    def chosen(self) -> tuple[str, str]:
        """(the address with its password, for the connection only; the study's name)."""
        return with_password(self.address.text().strip(), self.password.text()), self.study.text().strip()


def _open(storage: StudyStorage, name: str, task: Any = None):
    return open_watched(storage, name)


def _read(study, storage: StudyStorage, task: Any = None) -> Watched:
    try:
        return watch_study(study)
    except MemsenseError:
        raise
    except Exception as exc:  # the database went away: one line, the trials shown stay
        raise storage_error(exc, storage, "read") from None


class StudyWatcher(QObject):
    """Attach an Auto-tune view (`view`) to a running study and keep it up to date."""

    def __init__(self, view: Any):
        super().__init__(view)
        self.view = view
        self.runner = TaskRunner("memsense-study-watch", self)
        self.timer = QTimer(self)
        self.timer.setInterval(POLL_MS)
        self.timer.timeout.connect(self.poll)
        self.storage: StudyStorage | None = None
        self.name = ""
        self.study: Any = None
        self.seen: set[int] = set()
        self._reading: Task | None = None

    @property
    def watching(self) -> bool:
        return self.study is not None

    def ask(self) -> None:
        """The Watch button: stop watching, or ask which study to watch."""
        if self.watching:
            self.detach()
            return
        dialog = WatchDialog(self.view)
        if dialog.exec():
            self.attach(*dialog.chosen())

    def attach(self, address: str, name: str) -> Task | None:
        try:
            storage = parse_storage(address)
        except MemsenseError as exc:
            self.view.status.setText(redact(str(exc)))
            return None
        self.storage, self.name = storage, name
        self.view.status.setText(f"Opening the study {name!r} in {storage}…")
        return self.runner.submit("open a study", _open, storage, name, succeeded=self._opened,
                                  failed=self._failed)

    def _opened(self, study: Any) -> None:
        self.study, self.seen = study, set()
        view = self.view
        view._reset_run()
        view.cancel_button.setEnabled(False)
        view.run_button.setEnabled(False)
        view.watch_button.setText("Stop watching")
        self.timer.start()
        self.poll()

    def poll(self) -> None:
        if self.study is None or (self._reading is not None and not self._reading.done):
            return
        self._reading = self.runner.submit("read a study", _read, self.study, self.storage, succeeded=self._show,
                                           failed=self._failed)

    def _show(self, watched: Watched) -> None:
        if self.study is None:
            return
        view = self.view
        for trial in watched.trials:
            if trial.number not in self.seen:
                self.seen.add(trial.number)
                view.feed.add(SPLIT_RUN, trial)
        view._take_trials()
        view.metric_combo.setCurrentText(watched.metric)
        done, total = len(watched.trials), max(watched.budget, len(watched.trials))
        view.progress.setRange(0, max(total, 1))
        view.progress.setValue(done)
        view.progress.setFormat(f"study {self.name}: %v/%m complete trials")
        if done:
            view.rate.observe(done, total)
            view.eta_label.setText(view.rate.text() if done < total else "complete")
        best = watched.best
        if best is None:
            view.status.setText(f"Watching the study {self.name!r} in {self.storage}: no trial complete yet.")
            return
        view.kept = (SPLIT_RUN, best, done)
        view.model.set_best((SPLIT_RUN, best.number))
        view.apply_button.setEnabled(True)
        view.status.setText(f"Watching the study {self.name!r} in {self.storage}: {done} complete trials"
                            f"{f' of {total}' if watched.budget else ''}; best so far trial {best.number}, "
                            f"{watched.metric} train {best.train:.3f}. Apply best… applies it. No trial runs here.")

    def _failed(self, exc: BaseException) -> None:
        self.detach()
        self.view.status.setText(f"Cannot watch the study: {redact(str(exc))}")

    def detach(self) -> None:
        self.timer.stop()
        self.study = None
        self.view._stop()
        self.view.run_button.setEnabled(True)
        self.view.watch_button.setText("Watch a study…")

    def shutdown(self) -> None:
        self.timer.stop()
        self.runner.shutdown(wait=False)
