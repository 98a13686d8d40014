"""The kept runs of the question set on screen, question by question (`core.evaluation.question_runs`).

The source is the open store's run history (`ctx.runs`: every evaluation, tune, diagnose and fix
run, the app's and the command line's), read on the history's own thread whenever a store opens
or a run is kept; of those, the runs that ranked the very question file the picker offers (the
same SHA-256). The question picker shows each question's pass or fail and value in the newest of
them ("last run"); a case's details show its value run by run.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from PySide6.QtCore import QObject, Signal

from core.evaluation.history import Run, file_sha256
from core.evaluation.metrics import metric_key
from core.evaluation.question_runs import RunValue, across_runs, latest, of_file
from memsense_gui.state.context import AppContext

Source = Callable[[], "Path | None"]
"""The question file offered now (None: none)."""

SOURCE_LABEL = "the last kept run of this question file (History)"
"""Where the picker's pass/fail and value come from, as the app says it."""


class QuestionRuns(QObject):
    """The runs of the question file `source()` names, from the store's history."""

    changed = Signal()

    def __init__(self, ctx: AppContext, source: Source, parent: QObject | None = None):
        super().__init__(parent)
        self.ctx = ctx
        self.source = source
        self._all: list[Run] = []
        self.runs: list[Run] = []  # of the question file, oldest first
        self._digest: tuple[tuple, str] | None = None  # ((path, size, mtime), SHA-256): read once per version

    def connect_signals(self) -> None:
        ctx = self.ctx
        ctx.runs.listed.connect(self._listed)
        ctx.store_opened.connect(lambda _location: ctx.runs.list_runs())
        ctx.runs.recorded.connect(lambda _id: ctx.runs.list_runs())
        ctx.question_sets.changed.connect(lambda _label: self._select())

    @property
    def metric(self) -> str:
        """The metric a question passes on: every gold session among the results (`recall_all@top_k`)."""
        return metric_key("recall_all", self.ctx.current.config.top_k)

    def _listed(self, runs: list[Run]) -> None:
        self._all = list(runs)
        self._select()

    def _select(self) -> None:
        digest = self.digest()
        self.runs = of_file(self._all, digest) if digest else []
        self.changed.emit()

    def digest(self) -> str | None:
        """SHA-256 of the question file offered now, read again only when the file changed."""
        path = self.source()
        if path is None:
            return None
        try:
            st = os.stat(path)
            key = (str(path), st.st_size, st.st_mtime_ns)
            if self._digest is None or self._digest[0] != key:
                self._digest = (key, file_sha256(path))
        except OSError:
            return None
        return self._digest[1]

    def latest(self) -> dict[str, RunValue]:
        """Question id -> its value in the newest run of the file that scored it."""
        return latest(self.runs, self.metric, names=self.ctx.runs.names)

    def across(self, question_id: str) -> list[RunValue]:
        """The question's value in each run of the file (and each config of it), oldest first."""
        return across_runs(self.runs, question_id, self.metric, self.ctx.runs.names)
