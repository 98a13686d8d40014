"""LongMemEval files (SPEC §11): every question with its own haystack of chat sessions.

A file is a JSON list of questions; each becomes its own user (`user_id` = `question_id`):
its haystack sessions, numbered 1, 2, ... in file order, are that user's conversation (speakers
`user` and `assistant`, message ids `D<session>:<k>` counting turns from 1), and the question is
judged against them: gold sessions = the positions of `answer_session_ids` among
`haystack_session_ids`, gold turns = the ids of the turns marked `has_answer`. The category is
the `question_type`, numbered from `FIRST_CATEGORY` in `QUESTION_TYPES` order so it fits the
question model's category number. Abstention questions (ids ending in `_abs`) have no answer
in the haystack: they load with no gold session or turn (whatever `answer_session_ids` lists,
as LongMemEval's own retrieval evaluation skips them), so evaluations leave them out. An
answer session id missing from the haystack is an error, not a silently lost gold session.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from core.errors import MemsenseError
from core.ingest.messages import Conversation, Message, Session
from core.records import Question

QUESTION_TYPES: tuple[str, ...] = (
    "single-session-user", "single-session-assistant", "single-session-preference",
    "multi-session", "temporal-reasoning", "knowledge-update",
)
FIRST_CATEGORY = 11
CATEGORY_NAMES: dict[int, str] = {FIRST_CATEGORY + i: t for i, t in enumerate(QUESTION_TYPES)}
"""Category number -> LongMemEval question type (11 single-session-user ... 16 knowledge-update)."""
ROLES = ("user", "assistant")
KEYS = ("question_id", "question_type", "question", "answer", "haystack_session_ids", "haystack_dates",
        "haystack_sessions", "answer_session_ids")
HINT = ("A LongMemEval file is a JSON list of questions with question_id, question_type, question, answer, "
        "haystack_session_ids, haystack_dates, haystack_sessions and answer_session_ids (SPEC §11).")
_DATE = re.compile(r"(\d{4})/(\d{1,2})/(\d{1,2})(?:\s*\([A-Za-z]+\))?(?:\s+(\d{1,2}):(\d{2}))?")


def is_longmemeval(data: Any) -> bool:
    """A JSON list whose items carry a haystack of sessions."""
    return isinstance(data, list) and any(isinstance(q, dict) and "haystack_sessions" in q for q in data)


def is_abstention(question_id: str) -> bool:
    """An abstention question (`_abs` id): the haystack holds no answer, though the published files
    still list the sessions it is about under `answer_session_ids`."""
    return question_id.endswith("_abs")


def iso_date(text: str) -> str:
    """ISO 8601 of LongMemEval's "2023/05/20 (Sat) 02:21"; "" when it cannot be read."""
    m = _DATE.search(text or "")
    if not m:
        return ""
    year, month, day = int(m.group(1)), int(m.group(2)), int(m.group(3))
    hour, minute = int(m.group(4) or 0), int(m.group(5) or 0)
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour < 24 and minute < 60):
        return ""
    return f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:00"


def _fail(path: Path, where: str, what: str) -> MemsenseError:
    return MemsenseError(f"{path}: {where}: {what}. {HINT}")


def check_item(item: Any, n: int, path: Path) -> dict:
    """One question object, checked: every key present, lists of equal length, turns well formed."""
    where = f"question {n}"
    if not isinstance(item, dict):
        raise _fail(path, where, f"expected an object, got {type(item).__name__}")
    missing = [k for k in KEYS if k not in item]
    if missing:
        raise _fail(path, f"{where} ({item.get('question_id', '?')})", f"missing {', '.join(missing)}")
    where = f"question {item['question_id']}"
    if item["question_type"] not in QUESTION_TYPES:
        raise _fail(path, where, f"unknown question_type {item['question_type']!r}; types are {', '.join(QUESTION_TYPES)}")
    ids, dates, sessions = item["haystack_session_ids"], item["haystack_dates"], item["haystack_sessions"]
    if not (isinstance(ids, list) and isinstance(dates, list) and isinstance(sessions, list)) \
            or not len(ids) == len(dates) == len(sessions):
        raise _fail(path, where, "haystack_session_ids, haystack_dates and haystack_sessions must be lists of "
                                 "the same length")
    answers = item["answer_session_ids"]
    if not isinstance(answers, list):
        raise _fail(path, where, "answer_session_ids must be a list of haystack session ids")
    unknown = [str(a) for a in answers if a not in ids]
    if unknown:
        raise _fail(path, where, f"answer_session_ids names {', '.join(unknown)}, not among its "
                                 "haystack_session_ids")
    for s, turns in enumerate(sessions, start=1):
        if not isinstance(turns, list):
            raise _fail(path, f"{where}, session {s}", "a session must be a list of turns")
        for t, turn in enumerate(turns, start=1):
            if not isinstance(turn, dict) or turn.get("role") not in ROLES or not isinstance(turn.get("content"), str):
                raise _fail(path, f"{where}, session {s}, turn {t}",
                            "a turn must be {\"role\": \"user\" or \"assistant\", \"content\": text}")
    return item


def question_of(item: dict) -> Question:
    """The judged question of one checked LongMemEval item."""
    qid = str(item["question_id"])
    number = {sid: n for n, sid in enumerate(item["haystack_session_ids"], start=1)}
    gold: tuple[int, ...] = ()
    turns: tuple[str, ...] = ()
    if not is_abstention(qid):  # its answer sessions only mention the topic: nothing to retrieve
        gold = tuple(sorted({number[s] for s in item["answer_session_ids"]}))
        turns = tuple(f"D{n}:{k}" for n, session in enumerate(item["haystack_sessions"], start=1)
                      for k, turn in enumerate(session, start=1) if turn.get("has_answer"))
    answer = item["answer"]
    return Question(qid, qid, str(item["question"]), "" if answer is None else str(answer),
                    FIRST_CATEGORY + QUESTION_TYPES.index(item["question_type"]), gold, turns)


def conversation_of(item: dict) -> Conversation:
    """One checked item's haystack as its own user's conversation; sessions keep their position
    in the haystack as their number (an empty session is left out, its number skipped)."""
    sessions = []
    for n, (date, turns) in enumerate(zip(item["haystack_dates"], item["haystack_sessions"]), start=1):
        if turns:
            messages = tuple(Message(t["role"], t["content"], f"D{n}:{k}") for k, t in enumerate(turns, start=1))
            sessions.append(Session(n, str(date), iso_date(str(date)), messages))
    qid = str(item["question_id"])
    return Conversation(qid, ROLES, tuple(sessions), name=qid)


def load_items(data: list, path: Path) -> list[dict]:
    """Every item checked, question ids unique (each is a user)."""
    items = [check_item(item, n, path) for n, item in enumerate(data, start=1)]
    seen: set[str] = set()
    for item in items:
        qid = str(item["question_id"])
        if qid in seen:
            raise _fail(path, f"question {qid}", "appears twice; each question_id must be unique (it names a user)")
        seen.add(qid)
    return items


def longmemeval_conversations(data: list, path: Path) -> list[Conversation]:
    return [conversation_of(item) for item in load_items(data, path)]


def longmemeval_questions(data: list, path: Path) -> list[Question]:
    return [question_of(item) for item in load_items(data, path)]
