"""Relevance grades marked in the app, kept on disk per store (a thin layer over `core.evaluation.judged`).

Pressing 0-3 on a selected result grades its chunk for the current (user, query): the query
becomes a question of the store's judged set (`paths.judged_file`), with id `"<user>:m<n>"`,
the same id whenever the same user asks the same text again. Every grade is saved at once and
atomically, so a crash loses nothing. TREC qrels go in and out of the same set.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal

from core.errors import MemsenseError
from core.evaluation.judged import JudgedSet, apply_qrels, load_judged, qrels_lines, read_qrels, write_qrels
from core.records import Question

GRADE_LABELS = {0: "not relevant", 1: "partly relevant", 2: "relevant", 3: "perfect"}
NOTHING_JUDGED = "nothing is judged on this store yet: run a query, select a result and press 0-3"


class AppJudgments(QObject):
    """The judged set of the open store: grades by (user, query, memory id), saved on every change."""

    grades_changed = Signal()  # after a store's set is opened, a grade is marked or qrels are imported

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.judged = JudgedSet()
        self.path: Path | None = None

    @property
    def questions(self) -> list[Question]:
        return self.judged.questions

    def open(self, path: Path) -> None:
        """Read a store's judged set (none yet: an empty one). A file that cannot be read is left
        untouched, grades go to `<name>.recovered.json` beside it, and the error is raised."""
        self.path, self.judged = Path(path), JudgedSet((), path)
        try:
            if self.path.exists():
                self.judged = JudgedSet(load_judged(self.path), self.path)
        except MemsenseError:
            self.path = self.path.with_name(f"{self.path.stem}.recovered.json")
            try:
                self.judged = JudgedSet(load_judged(self.path) if self.path.exists() else (), self.path)
            except MemsenseError:
                self.judged = JudgedSet((), self.path)
            raise
        finally:
            self.grades_changed.emit()

    def grades(self, user_id: str, query: str) -> dict[str, int]:
        """Memory id -> grade marked for this user's query (empty when it was never graded)."""
        q = self.judged.find(user_id, query)
        return dict(q.relevance) if q is not None else {}

    def set_grade(self, user_id: str, query: str, memory_id: str, grade: int) -> Question:
        """Grade one chunk for the query (the query becomes a judged question), then save."""
        self._need_store()
        q = self.judged.find(user_id, query) or self.judged.add_question(user_id, query)
        q = self.judged.set_grade(q.question_id, memory_id, grade)
        self._save()
        self.grades_changed.emit()
        return q

    def export_qrels(self, path: str | Path, level: str = "memory") -> int:
        """TREC qrels of every question judged here: memory level (the graded chunks, as marked)
        or session level (what the metrics score); returns the number of judgments."""
        if not qrels_lines(self.questions, level):
            raise MemsenseError(NOTHING_JUDGED)
        return write_qrels(self.questions, path, level)

    def import_qrels(self, path: str | Path) -> tuple[int, int]:
        """Judgments from TREC qrels for questions of this set (checked line by line before
        anything changes); returns (judgments, questions judged)."""
        self._need_store()
        qrels = read_qrels(path, self.questions)
        if not qrels:
            raise MemsenseError(f"{path}: no judgments in the file; each line must be `qid 0 docid grade`")
        self.judged = JudgedSet(apply_qrels(self.questions, qrels), self.path)
        self._save()
        self.grades_changed.emit()
        return sum(len(v) for v in qrels.values()), len(qrels)

    def _need_store(self) -> None:
        if self.path is None:
            raise MemsenseError("open a store first: judgments are kept per store")

    def _save(self) -> None:
        try:
            self.judged.save(self.path, parents=True)  # <data>/judged/ is made on the first save
        except OSError as exc:
            raise MemsenseError(f"cannot save the judged questions to {self.path}: {exc.strerror or exc}; "
                                "free some disk space or check the folder's permissions") from None
