"""Judged questions: LoCoMo `qa`, LongMemEval, the project's question format, or question JSON Lines."""
from __future__ import annotations

import json
import logging

import re
from pathlib import Path
from typing import Any, Iterable

from core.config.schema import shown
from core.ingest.files import QUESTION_HINT, fail, is_locomo, json_lines, kind_of, loads_json, read_text, required_str
from core.ingest.longmemeval import is_longmemeval, longmemeval_questions
from core.records import Question

QUESTION_KEYS = ("user", "question", "answer", "category", "evidence")
KEPT_CATEGORIES = (1, 2, 3, 4)


_EVIDENCE_ID = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)", re.I)


def parse_evidence(evidence: Iterable[Any]) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """(gold sessions, gold turns) from evidence ids: "D3:7" gives session 3, turn "D3:7".

    Lenient: "D 4:2", "D:11:26", "D10:3:5" (read as D10:3) and "D8:6; D9:17" (two ids) are
    understood; anything else is skipped. Sessions are sorted, turns keep first-seen order.
    """
    sessions: set[int] = set()
    turns: dict[str, None] = {}
    for item in evidence:
        for match in _EVIDENCE_ID.finditer(item if isinstance(item, str) else ""):
            sessions.add(int(match.group(1)))
            turns[f"D{int(match.group(1))}:{int(match.group(2))}"] = None
    return tuple(sorted(sessions)), tuple(turns)


def load_questions(path: str | Path) -> list[Question]:
    """Judged questions (SPEC §8) from LoCoMo JSON, project JSON or question JSON Lines.

    LongMemEval files (SPEC §11) are read too (`core.ingest.longmemeval`): every question,
    abstention ones with no gold session. Otherwise kept: categories 1-4 whose evidence names
    at least one session. question_id is
    "<user>:q<index>", index = position in the sample's `qa` list (LoCoMo) or among the
    user's questions in the file (project format), counting from 0. Answers become text.
    """
    p, text = read_text(path)
    stripped = text.lstrip()
    if stripped.startswith("["):
        data = loads_json(text, p)
        if is_longmemeval(data):
            return longmemeval_questions(data, p)
        if not is_locomo(data):
            raise fail(p, "is a JSON list but not LoCoMo samples", QUESTION_HINT)
        return _locomo_questions(data, p)
    if _first_line_is_question(stripped):
        return _project_questions([row for _, row in json_lines(text, p)], p, "line")
    data = loads_json(text, p)
    if not isinstance(data, dict) or not isinstance(data.get("questions"), list):
        raise fail(p, "has no 'questions' list", QUESTION_HINT)
    return _project_questions(data["questions"], p, "question")


def _first_line_is_question(text: str) -> bool:
    try:
        first = json.loads(text.splitlines()[0])
    except (ValueError, RecursionError):  # not one JSON object (or beyond what json reads): the reader says more
        return False
    return isinstance(first, dict) and "question" in first


def _locomo_questions(data: list, path: Path) -> list[Question]:
    questions = []
    unread: list[str] = []
    for i, sample in enumerate(data):
        if not isinstance(sample, dict):
            raise fail(path, f"sample {i + 1}: expected an object, got {kind_of(sample)}", QUESTION_HINT)
        user = required_str(sample, "sample_id", f"sample {i + 1}", path)
        qa = sample.get("qa", [])
        if not isinstance(qa, list):
            raise fail(path, f"sample {user}: 'qa' must be a list", QUESTION_HINT)
        for index, item in enumerate(qa):
            question = _question(item, user, index, f"sample {user}, qa {index}", path, unread)
            if question is not None:
                questions.append(question)
    _warn_unread(path, unread)
    return questions


def _project_questions(items: list, path: Path, unit: str) -> list[Question]:
    questions: list[Question] = []
    unread: list[str] = []
    counts: dict[str, int] = {}
    for n, item in enumerate(items, start=1):
        where = f"{unit} {n}"
        if not isinstance(item, dict):
            raise fail(path, f"{where}: expected an object, got {kind_of(item)}", QUESTION_HINT)
        for key in QUESTION_KEYS:
            if key not in item:
                raise fail(path, f"{where}: missing key '{key}'", QUESTION_HINT)
        user = required_str(item, "user", where, path)
        index = counts.get(user, 0)
        counts[user] = index + 1
        question = _question(item, user, index, where, path, unread)
        if question is not None:
            questions.append(question)
    _warn_unread(path, unread)
    return questions


def _warn_unread(path: Path, unread: list[str]) -> None:
    """One warning for the questions left out because their evidence names no session the way
    evidence ids do (D<session>:<turn>): without it they vanished from every figure unsaid."""
    if unread:
        logging.getLogger("memsense.ingest").warning(
            "%s: %d judged question(s) left out: their evidence names no session as D<session>:<turn> (e.g. %s)",
            path, len(unread), unread[0])


def _question(item: Any, user: str, index: int, where: str, path: Path,
              unread: list[str] | None = None) -> Question | None:
    """A Question, or None when it is not kept (category 5 or no usable evidence); a judged
    category whose evidence is given but names no session is added to `unread`."""
    if not isinstance(item, dict):
        raise fail(path, f"{where}: expected an object, got {kind_of(item)}", QUESTION_HINT)
    category = _category(item.get("category"), where, path)
    evidence = item.get("evidence", [])
    if not isinstance(evidence, list):
        raise fail(path, f"{where}: 'evidence' must be a list of ids such as \"D3:7\"", QUESTION_HINT)
    sessions, turns = parse_evidence(evidence)
    if category not in KEPT_CATEGORIES or not sessions:
        if category in KEPT_CATEGORIES and evidence and unread is not None:
            unread.append(f"{where}: {json.dumps(evidence, ensure_ascii=False)[:60]}")
        return None
    text = item.get("question")
    if not isinstance(text, str) or not text.strip():
        raise fail(path, f"{where}: 'question' must be non-empty text", QUESTION_HINT)
    answer = item.get("answer", "")
    return Question(f"{user}:q{index}", user, text, "" if answer is None else str(answer),
                    category, sessions, turns)


def _category(value: Any, where: str, path: Path) -> int:
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 9:
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(path, f"{where}: 'category' must be a whole number (1-4), got {shown(value)}", QUESTION_HINT)
    return value
