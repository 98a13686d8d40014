"""Judging actions: grade the selected chunk 0-3 for the query on screen, and TREC files.

Grades go to the open store's judged set (`state.judgments.AppJudgments`), saved at once.
Qrels go out (memory or session level) and in; a run re-ranks every judged question with the
current settings and writes the results: their pools are the window's one question-set recall
(`state.question_set`, shared with Cases, Evaluation and Auto-tune), so a question another view
recalled is not recalled again, and one the run recalls is not recalled by them.
"""
from __future__ import annotations

from functools import partial
from pathlib import Path

from core.errors import MemsenseError
from core.evaluation.judged import write_run
from memsense_gui.models.format import short_id
from memsense_gui.state.judgments import GRADE_LABELS, NOTHING_JUDGED
from memsense_gui.state.context import AppContext
from memsense_gui.views.file_dialogs import ask_open, ask_save
from memsense_gui.views.tables import selected_id
from memsense_gui.window.parts import JudgingUi
from memsense_gui.workers import jobs
from memsense_gui.workers.runner import Task, TaskRunner

LEVEL_FILTERS = {
    "TREC, memory level: the graded chunks (*.txt *.qrels *.run)": "memory",
    "TREC, session level: what the metrics score (*.txt *.qrels *.run)": "session",
}


class JudgingActions:
    """0-3 on a selected result or candidate; File > qrels and runs."""

    def __init__(self, ctx: AppContext, window: JudgingUi):
        self.window = window
        self.ctx = ctx
        self.runner = TaskRunner("memsense-export", window.window())  # waits on the engine thread's recalls

    def connect(self) -> None:
        self.ctx.judgments.grades_changed.connect(self._show_grades)
        self.ctx.closing.connect(lambda: self.runner.shutdown(wait=True))

    def _status(self, text: str, ms: int = 0) -> None:
        self.window.statusBar().showMessage(text, ms)

    def _show_grades(self) -> None:
        grades = self.ctx.current_grades()
        self.window.results.model.set_grades(grades)
        self.window.pool_panel.model.set_grades(grades)

    def grade_selected(self, grade: int) -> bool:
        """Grade the selected result's (or pool candidate's) chunk for the current user and query."""
        w, pool = self.window, self.ctx.session.pool
        view = next((v for v in (w.results.view, w.pool_panel.view) if v.hasFocus()), None)
        memory_id = (selected_id(view) if view is not None else None) or w.inspector.focused_id
        if pool is None or not memory_id:
            self._status("Run a query and select a result first, then press 0-3", 4000)
            return False
        ok = self.ctx.attempt(lambda: self.ctx.judgments.set_grade(pool.user_id, pool.query, memory_id, grade),
                              "Grading")
        if ok:
            self._status(f"{short_id(memory_id, pool.user_id)}: grade {grade} "
                         f"({GRADE_LABELS[grade]}) for “{pool.query}”, saved", 4000)
        return ok

    def export_qrels(self, path: str | Path, level: str = "memory") -> bool:
        def write() -> None:
            n = self.ctx.judgments.export_qrels(path, level)
            self._status(f"Wrote {n} judgments ({level} level) to {path}", 5000)

        return self.ctx.attempt(write, "Exporting qrels")

    def import_qrels(self, path: str | Path) -> bool:
        def read() -> None:
            judgments, questions = self.ctx.judgments.import_qrels(path)
            self._status(f"Imported {judgments} judgments for {questions} questions", 5000)

        return self.ctx.attempt(read, "Importing qrels")

    def export_run(self, path: str | Path, level: str = "memory") -> Task | None:
        """Re-rank every question judged on this store with the current settings (their pools
        from the question-set recall, recalled on the engine thread when no view did yet) and
        write the results as a TREC run; `run_exported` when written."""
        ctx = self.ctx
        questions = [q for q in ctx.judgments.questions if q.user_id in ctx.users]
        if ctx.engine is None or not questions:
            ctx.report_error(MemsenseError("open a store first" if ctx.engine is None else NOTHING_JUDGED),
                             "Exporting a run")
            return None
        cfg, tag = ctx.current.config, self.settings_name()
        self._status(f"Running {len(questions)} judged questions with “{tag}”…")
        recalled = partial(ctx.evaluation.recall_questions, questions, ctx.judgments.path)
        return self.runner.submit("trec run", jobs.preset_run, recalled, cfg, level,
                                  succeeded=lambda entries: self._write_run(entries, path, tag),
                                  failed=lambda e: ctx.report_error(e, "Exporting a run"))

    def _write_run(self, entries: dict, path: str | Path, tag: str) -> None:
        if self.ctx.attempt(lambda: write_run(entries, path, tag), "Exporting a run"):
            self._status(f"Wrote the run “{tag}” for {len(entries)} questions to {path}", 5000)
            self.ctx.run_exported.emit(str(path))

    def settings_name(self) -> str:
        """The selected preset's name, marked when the knobs no longer match it."""
        name = self.window.tuning.preset_combo.currentText() or "settings"
        try:
            same = self.ctx.presets.get(name) == self.ctx.current.config
        except Exception:  # noqa: BLE001 - an unknown name is just "modified"
            same = False
        return name if same else f"{name}-modified"

    def _ask_level_path(self, title: str, default: str) -> tuple[str, str] | None:
        picked = ask_save(self.window.window(), self.ctx.settings, "trec", title, ";;".join(LEVEL_FILTERS), default)
        return (picked[0], LEVEL_FILTERS.get(picked[1], "memory")) if picked else None

    def ask_export_qrels(self) -> None:
        picked = self._ask_level_path("Export judged questions as TREC qrels", "memsense.qrels")
        if picked:
            self.export_qrels(*picked)

    def ask_import_qrels(self) -> None:
        path = ask_open(self.window.window(), self.ctx.settings, "trec", "Import TREC qrels",
                        "TREC qrels (*.qrels *.txt);;All files (*)")
        if path:
            self.import_qrels(path)

    def ask_export_run(self) -> None:
        picked = self._ask_level_path("Export results as a TREC run", "memsense.run")
        if picked:
            self.export_run(*picked)
