"""Conversation JSON Lines, the project's own format (see `core.ingest.conversations`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.ingest.dates import parse_date_time
from core.ingest.files import fail, kind_of, required_str, text_field, urls_field
from core.ingest.messages import Conversation, Message, Session

JSONL_KEYS = ("user", "session", "time", "speaker", "text")


@dataclass
class _SessionDraft:
    time: str
    time_line: int
    messages: list[Message] = field(default_factory=list)


@dataclass
class _UserDraft:
    name: str
    speakers: list[str] = field(default_factory=list)
    sessions: dict[int, _SessionDraft] = field(default_factory=dict)
    ids: dict[str, int] = field(default_factory=dict)  # message id -> its line


def jsonl_conversations(rows: list[tuple[int, dict]], path: Path) -> list[Conversation]:
    users: dict[str, _UserDraft] = {}
    for line, row in rows:
        _add_jsonl_row(users, line, row, path)
    return [_conversation_from_draft(user, draft) for user, draft in users.items()]


def _add_jsonl_row(users: dict[str, _UserDraft], line: int, row: dict, path: Path) -> None:
    where = f"line {line}"
    for key in JSONL_KEYS:
        if key not in row:
            raise fail(path, f"{where}: missing key '{key}'")
    user = required_str(row, "user", where, path)
    name = row.get("conversation", user)
    name = str(name) if isinstance(name, (str, int)) and not isinstance(name, bool) else user
    draft = users.setdefault(user, _UserDraft(name))
    if draft.name != name:
        raise fail(path, f"{where}: user '{user}' is in conversation '{draft.name}' on an earlier "
                    f"line but '{name}' here", "Give each conversation its own user.")
    number = _session_number(row["session"], where, path)
    session = _session_draft(draft, number, row, line, path)
    speaker = required_str(row, "speaker", where, path)
    if speaker not in draft.speakers:
        draft.speakers.append(speaker)
    message = _jsonl_message(row, number, len(session.messages) + 1, where, path)
    first = draft.ids.setdefault(message.dia_id, line)
    if first != line:  # evidence naming this id would point at two messages
        raise fail(path, f"{where}: message id '{message.dia_id}' of user '{user}' is already the id of line {first}",
                   "Give each message of a user its own id, or leave 'id' out (D<session>:<position> is used).")
    session.messages.append(message)


def _session_number(value: Any, where: str, path: Path) -> int:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise fail(path, f"{where}: 'session' must be a whole number >= 1, got {value!r}")
    return value


def _session_draft(draft: _UserDraft, number: int, row: dict, line: int, path: Path) -> _SessionDraft:
    time = text_field(row, "time", f"line {line}", path).strip()
    session = draft.sessions.setdefault(number, _SessionDraft(time, line))
    if session.time != time:
        raise fail(path, f"line {line}: session {number} has time '{time}' here but "
                    f"'{session.time}' on line {session.time_line}",
                    "Give every line of a session the same time.")
    return session


def _jsonl_message(row: dict, number: int, k: int, where: str, path: Path) -> Message:
    dia_id = row.get("id")
    if dia_id is None:
        dia_id = f"D{number}:{k}"
    elif not isinstance(dia_id, str) or not dia_id.strip():
        raise fail(path, f"{where}: 'id' must be non-empty text such as \"D3:7\", got {kind_of(dia_id)}")
    caption = row.get("caption", "")
    if caption is None:
        caption = ""
    if not isinstance(caption, str):
        raise fail(path, f"{where}: 'caption' must be text, got {kind_of(caption)}")
    text = text_field(row, "text", where, path)
    return Message(row["speaker"], text, dia_id, urls_field(row.get("img_url"), where, path), caption.strip())


def _conversation_from_draft(user: str, draft: _UserDraft) -> Conversation:
    sessions = tuple(
        Session(n, s.time, parse_date_time(s.time), tuple(s.messages))
        for n, s in sorted(draft.sessions.items())
    )
    return Conversation(user, tuple(draft.speakers), sessions, name=draft.name)
