"""Judged question sets on disk, TREC qrels in and out, and any preset's results as a TREC run.

Judgments are kept per question in two ways (`core.records.Question`): `gold_sessions` (LoCoMo
evidence, SPEC §8: grade 1) and `relevance`, a map from a document id to a grade 0-3 made by
hand (the app marks the selected result from the keyboard) or imported from qrels. A
document id is a session id `"<user>:S003"` (session level) or a memory id
`"<user>:S003:P00"` / `"<user>:S003:T007"` (memory level), as `core.ingest` names them.

`session_qrels` turns a question's judgments into session grades, which the metrics use: a
session judged in `relevance` (directly, or through the best grade of its judged memories,
a direct session grade winning) takes that grade; every other gold session grades 1.

File formats:
- judged set (JSON): `{"format": "memsense-judged-questions", "version": 1, "questions":
  [{"id", "user", "question", "answer", "category", "gold_sessions": [3, 7],
  "gold_turns": ["D3:7"], "relevance": {"<doc id>": grade}}]}`
- qrels (TREC): one judgment a line, `qid 0 docid grade` (4 columns; the second is ignored);
- run (TREC): `qid Q0 docid rank score tag`.
"""
from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from core.atomic import write_text_atomic
from core.errors import MemsenseError
from core.files import read_text, special_file
from core.records import Question

FORMAT = "memsense-judged-questions"
VERSION = 1
GRADES = (0, 1, 2, 3)
LEVELS = ("session", "memory")
MANUAL_CATEGORY = 0
"""Category of questions made in the app (LoCoMo's are 1-4)."""

_SESSION_DOC = re.compile(r"^(?P<user>.+):S(?P<n>\d+)$")
_MEMORY_DOC = re.compile(r"^(?P<user>.+):S(?P<n>\d+):(?P<part>[A-Za-z]\w*)$")


def session_docid(user_id: str, session_number: int) -> str:
    """The session id `core.ingest` gives session `n` of a user: `"<user>:S003"`."""
    return f"{user_id}:S{session_number:03d}"


def parse_docid(docid: str) -> tuple[str, int, str] | None:
    """`(user, session number, level)` of a session or memory id; None if it is neither."""
    m = _MEMORY_DOC.match(docid) or _SESSION_DOC.match(docid)
    if not m:
        return None
    return m.group("user"), int(m.group("n")), "memory" if "part" in m.groupdict() else "session"


def session_qrels(question: Question) -> dict[int, int]:
    """Session number -> grade for one question (see the module docstring)."""
    grades = {s: 1 for s in question.gold_sessions}
    direct: dict[int, int] = {}
    via_memory: dict[int, int] = {}
    for docid, grade in question.relevance.items():
        parsed = parse_docid(docid)
        if parsed is None:
            continue
        _, n, level = parsed
        target = direct if level == "session" else via_memory
        target[n] = max(target.get(n, 0), int(grade))
    grades.update(via_memory)
    grades.update(direct)
    return grades


def check_grade(value: object, where: str, fix: str) -> int:
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value not in GRADES:
        raise MemsenseError(f"{where}: grade {value!r} is outside 0-3; {fix}")
    return value


# ------------------------------------------------------------------ judged sets (JSON)

def question_to_json(q: Question) -> dict:
    return {"id": q.question_id, "user": q.user_id, "question": q.text, "answer": q.answer,
            "category": q.category, "gold_sessions": list(q.gold_sessions),
            "gold_turns": list(q.gold_turns), "relevance": dict(sorted(q.relevance.items()))}


def dumps_judged(questions: Iterable[Question]) -> str:
    data = {"format": FORMAT, "version": VERSION, "questions": [question_to_json(q) for q in questions]}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def is_judged_file(path: str | Path) -> bool:
    """True when the file is a judged set (a JSON object whose "format" names it)."""
    if special_file(path) is not None:  # opening a named pipe would wait for a writer: the reader refuses it
        return False
    try:
        with open(path, encoding="utf-8", errors="replace") as f:  # other bytes are reported by the reader
            head = f.read(4096)
    except OSError:
        return False
    return head.lstrip().startswith("{") and f'"{FORMAT}"' in head


def load_judged(path: str | Path) -> list[Question]:
    """Read a judged set, checking every field; errors name the question and the fix."""
    path = Path(path)
    try:
        data = json.loads(read_text(path, "judged questions"))
    except json.JSONDecodeError as exc:
        raise MemsenseError(f"{path}: line {exc.lineno}: not valid JSON ({exc.msg}); fix the file or export it again") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("questions"), list):
        raise MemsenseError(f'{path}: not a judged question set (expected {{"format": "{FORMAT}", "questions": [...]}})')
    if data.get("version") != VERSION:
        raise MemsenseError(f"{path}: judged set version {data.get('version')!r} is not supported (this program reads {VERSION})")
    questions, seen = [], set()
    for n, item in enumerate(data["questions"], start=1):
        q = _question_from_json(item, f"{path}: question {n}")
        if q.question_id in seen:
            raise MemsenseError(f"{path}: question {n}: id {q.question_id!r} appears twice; give each question its own id")
        seen.add(q.question_id)
        questions.append(q)
    return questions


def _question_from_json(item: object, where: str) -> Question:
    if not isinstance(item, dict):
        raise MemsenseError(f"{where}: expected an object")
    for key in ("id", "user", "question"):
        if not isinstance(item.get(key), str) or not item[key].strip():
            raise MemsenseError(f"{where}: '{key}' must be non-empty text")
    category = item.get("category", MANUAL_CATEGORY)
    sessions = item.get("gold_sessions", [])
    if isinstance(category, bool) or not isinstance(category, int):
        raise MemsenseError(f"{where}: 'category' must be a whole number")
    if not isinstance(sessions, list) or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 1 for s in sessions):
        raise MemsenseError(f"{where}: 'gold_sessions' must be a list of session numbers ≥ 1")
    relevance = item.get("relevance", {})
    if not isinstance(relevance, dict):
        raise MemsenseError(f"{where}: 'relevance' must be an object of document id: grade")
    grades = {}
    for docid, grade in relevance.items():
        _check_doc(docid, item["user"], f"{where}: relevance {docid!r}")
        grades[docid] = check_grade(grade, f"{where}: relevance {docid!r}", "use 0 (not relevant) to 3 (perfect)")
    turns = item.get("gold_turns", [])
    if not isinstance(turns, list) or not all(isinstance(t, str) for t in turns):
        raise MemsenseError(f"{where}: 'gold_turns' must be a list of ids such as \"D3:7\"")
    return Question(item["id"], item["user"], item["question"], str(item.get("answer", "")), category,
                    tuple(sorted(set(sessions))), tuple(turns), grades)


def _check_doc(docid: object, user: str, where: str, known: Mapping[str, set[str]] | None = None) -> str:
    parsed = parse_docid(docid) if isinstance(docid, str) else None
    if parsed is None or not isinstance(docid, str):
        raise MemsenseError(f"{where}: {docid!r} is not a session id (\"{user}:S003\") or memory id "
                            f"(\"{user}:S003:P00\"); use the ids the store shows")
    if parsed[0] != user:
        raise MemsenseError(f"{where}: {docid!r} belongs to user {parsed[0]!r}, but the question is {user!r}'s; "
                            "judge documents of the question's own user")
    if known is not None and docid not in known.get(user, set()):
        raise MemsenseError(f"{where}: unknown document {docid!r}: no such session or memory in {user!r}'s store; "
                            "check the id against the store (or rebuild the store from the same data)")
    return docid


class JudgedSet:
    """A judged question set being edited: grades marked by hand, questions added, saved
    atomically (a crash never leaves half a file)."""

    def __init__(self, questions: Iterable[Question] = (), path: str | Path | None = None):
        self.path = Path(path) if path else None
        self._questions: dict[str, Question] = {}
        for q in questions:
            if q.question_id in self._questions:
                raise MemsenseError(f"question id {q.question_id!r} appears twice")
            self._questions[q.question_id] = q

    @classmethod
    def open(cls, path: str | Path) -> "JudgedSet":
        """A judged set file, or any question file `load_questions` reads (saved as judged)."""
        return cls(load_question_set(path), path if is_judged_file(path) else None)

    @property
    def questions(self) -> list[Question]:
        return list(self._questions.values())

    def get(self, question_id: str) -> Question:
        try:
            return self._questions[question_id]
        except KeyError:
            raise MemsenseError(f"no question {question_id!r} in this judged set") from None

    def grade(self, question_id: str, docid: str) -> int | None:
        return self.get(question_id).relevance.get(docid)

    def find(self, user_id: str, text: str) -> Question | None:
        """The question asked by `user_id` with this text (surrounding spaces ignored), if any."""
        text = text.strip()
        return next((q for q in self._questions.values() if q.user_id == user_id and q.text.strip() == text), None)

    def set_grade(self, question_id: str, docid: str, grade: int | None) -> Question:
        """Mark a document 0-3 for a question (None clears the mark); returns the new question."""
        q = self.get(question_id)
        _check_doc(docid, q.user_id, f"question {question_id}")
        relevance = dict(q.relevance)
        if grade is None:
            relevance.pop(docid, None)
        else:
            relevance[docid] = check_grade(grade, f"question {question_id}: {docid}", "press 0, 1, 2 or 3")
        self._questions[question_id] = replace(q, relevance=relevance)
        return self._questions[question_id]

    def add_question(self, user_id: str, text: str, answer: str = "", category: int = MANUAL_CATEGORY) -> Question:
        """A new question made in the app, id `"<user>:m<n>"` (n counts the user's manual ones)."""
        if not text.strip():
            raise MemsenseError("a judged question needs its text")
        n = 1 + sum(1 for q in self._questions.values() if q.question_id.startswith(f"{user_id}:m"))
        while f"{user_id}:m{n}" in self._questions:
            n += 1
        q = Question(f"{user_id}:m{n}", user_id, text.strip(), answer, category, ())
        self._questions[q.question_id] = q
        return q

    def save(self, path: str | Path | None = None, *, parents: bool = False) -> Path:
        """Write the set to `path` (default: where it was read); `parents` creates missing folders
        (for the app's own files only: an output the user named needs its folder to exist)."""
        target = Path(path) if path else self.path
        if target is None:
            raise MemsenseError("choose where to save the judged questions")
        write_text_atomic(target, dumps_judged(self._questions.values()), what="judged set", parents=parents)
        self.path = target
        return target


def load_question_set(path: str | Path) -> list[Question]:
    """Questions from a judged set, or from LoCoMo / project question files (`core.ingest`)."""
    from collections import Counter

    from core.ingest import load_questions
    from core.recall.query_text import check_query

    questions = load_judged(path) if is_judged_file(path) else load_questions(path)
    for q in questions:  # as a search checks it, before any is recalled: not after an hour, with no name
        try:
            check_query(q.text)
        except MemsenseError as exc:
            raise MemsenseError(f"{path}: question {q.question_id}: {exc}") from None
    twice = [(qid, n) for qid, n in Counter(q.question_id for q in questions).items() if n > 1]
    if twice:  # pools and scores are kept by question id: two questions under one id would share one
        qid, n = twice[0]
        raise MemsenseError(f"{path}: the question id {qid!r} is given to {n} questions ({len(twice):,} ids repeat); a "
                            "LoCoMo sample_id or LongMemEval question_id must appear once: drop the repeated entries")
    return questions


# ------------------------------------------------------------------ TREC qrels and runs

def qrels_lines(questions: Iterable[Question], level: str = "session") -> list[str]:
    """`qid 0 docid grade` lines: session level from `session_qrels`, memory level from the
    memory ids judged in `relevance`; sorted by question then document."""
    if level not in LEVELS:
        raise MemsenseError(f"unknown qrels level {level!r}; use session or memory")
    lines = []
    for q in questions:
        if level == "session":
            docs = {session_docid(q.user_id, n): g for n, g in session_qrels(q).items()}
        else:
            docs = {d: g for d, g in q.relevance.items() if (parse_docid(d) or ("", 0, ""))[2] == "memory"}
        lines += [f"{q.question_id} 0 {d} {g}" for d, g in sorted(docs.items())]
    return lines


def write_qrels(questions: Iterable[Question], path: str | Path, level: str = "session") -> int:
    """Write TREC qrels; returns the number of judgments written."""
    lines = qrels_lines(questions, level)
    write_text_atomic(Path(path), "".join(line + "\n" for line in lines))
    return len(lines)


QRELS_FIX = "each line must be `qid 0 docid grade` (4 columns separated by spaces, grade 0-3)"


def read_qrels(path: str | Path, questions: Sequence[Question],
               known: Mapping[str, set[str]] | None = None) -> dict[str, dict[str, int]]:
    """Read TREC qrels, checked against the questions (and, given `known` = user -> session
    and memory ids of the store, against the store): question id -> {docid: grade}.
    Blank lines and lines starting with # are skipped."""
    path = Path(path)
    text = read_text(path, "qrels")
    users = {q.question_id: q.user_id for q in questions}
    out: dict[str, dict[str, int]] = {}
    first_line: dict[tuple[str, str], int] = {}
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{path}: line {n}"
        cols = line.split()
        if len(cols) != 4:
            raise MemsenseError(f"{where}: expected 4 columns, found {len(cols)}; {QRELS_FIX}")
        qid, _, docid, grade = cols
        if qid not in users:
            raise MemsenseError(f"{where}: unknown question id {qid!r}; qrels must use the ids of the "
                                "question set (export qrels from it to see them)")
        _check_doc(docid, users[qid], where, known)
        g = check_grade(grade, where, QRELS_FIX)
        if (qid, docid) in first_line:
            raise MemsenseError(f"{where}: {qid} {docid} is judged twice (first on line {first_line[qid, docid]}); "
                                "keep one line per question and document")
        first_line[qid, docid] = n
        out.setdefault(qid, {})[docid] = g
    return out


def apply_qrels(questions: Iterable[Question], qrels: Mapping[str, Mapping[str, int]]) -> list[Question]:
    """Questions with the qrels as their judgments: a judged question's `relevance` becomes its
    qrels and its gold sessions the sessions graded ≥ 1 there (session-level lines) or those of
    its graded memories; questions without qrels lines keep theirs."""
    out = []
    for q in questions:
        judged = qrels.get(q.question_id)
        if judged is None:
            out.append(q)
            continue
        relevance = dict(judged)
        gold = sorted(n for n, g in session_qrels(replace(q, gold_sessions=(), relevance=relevance)).items() if g >= 1)
        out.append(replace(q, gold_sessions=tuple(gold), relevance=relevance))
    return out


def run_lines(entries_by_question: Mapping[str, Sequence[tuple[str, float]]], tag: str) -> list[str]:
    """`qid Q0 docid rank score tag` for each question's results in order (repeats of a docid
    keep their first rank only; TREC runs hold each document once).

    trec_eval orders a run by score, not rank, and MMR's picks need not fall in final score,
    so a score that does not fall below the one before is written 0.000001 under it: the run
    then keeps the result order while scores stay the final scores wherever they already fall.
    """
    tag = re.sub(r"\s+", "_", tag.strip()) or "memsense"
    lines = []
    for qid, results in entries_by_question.items():
        seen: set[str] = set()
        previous = None
        for docid, score in results:
            if docid in seen:
                continue
            seen.add(docid)
            score = round(score, 6)
            if previous is not None and score >= previous:
                score = round(previous - 1e-6, 6)
            previous = score
            lines.append(f"{qid} Q0 {docid} {len(seen)} {score:.6f} {tag}")
    return lines


def write_run(entries_by_question: Mapping[str, Sequence[tuple[str, float]]], path: str | Path, tag: str) -> int:
    lines = run_lines(entries_by_question, tag)
    write_text_atomic(Path(path), "".join(line + "\n" for line in lines))
    return len(lines)
