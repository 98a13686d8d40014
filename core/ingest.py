"""Ingest: conversation files become conversations, conversations become chunks (SPEC §1).

Two conversation formats are read; the format is detected from the file itself (a JSON list
whose items hold a "conversation" object is LoCoMo; a file of one JSON object per line is
JSON Lines).

LoCoMo JSON: a list of samples (schema in ../shared/datasets/locomo/README.md). Each sample is
one user (user id = `sample_id`); its sessions come from the `session_N` keys, each dated by
`session_N_date_time` (extra `*_date_time` keys with no session are ignored); `speaker_b` is
the "assistant" side. `observation` and `event_summary` are kept per session, `qa` raw.

Conversation JSON Lines (the project's own format): one message per line, in conversation
order; blank lines are ignored.

    {"user": "demo-ana", "session": 1, "time": "2024-03-14T18:20:00",
     "speaker": "Ana", "text": "Guess what arrived today: my first bees!", "id": "D1:1"}

    key           required  meaning
    user          yes       the user (one user = one conversation = one memory store)
    conversation  no        the conversation's name; the same on every line of a user
                            (default: the user)
    session       yes       session number, a whole number >= 1; sessions sort by it
    time          yes       the session's date-time, the same on every line of the session:
                            ISO 8601 ("2024-03-14T18:20:00", "2024-03-14") or free text
                            ("6:05 pm on 2 April, 2024"); shown verbatim in chunk headers,
                            stored as ISO 8601 when it can be parsed ("" otherwise)
    speaker       yes       who speaks (non-empty text)
    text          yes       what was said (text, may be empty)
    id            no        message id such as "D3:7" (default "D<session>:<k>", k = the
                            message's 1-based position in its session)
    img_url       no        an image URL, or a list of them
    caption       no        a caption of the message's image(s)

The first speaker seen in a user's lines is the user side, the second distinct speaker the
assistant side (LoCoMo's `speaker_b`).

Question files (`load_questions`): LoCoMo JSON (each sample's `qa`), or the project format
`{"questions": [{"user", "question", "answer", "category", "evidence": ["D3:7", ...]}, ...]}`,
or the same question objects one per line (JSON Lines).

Chunks (`build_chunks`, SPEC §1): a message line is `Speaker: text`, then one line per image
URL (`URL: caption` when there is a caption), or `(caption)` for a caption with no URL.
Session chunks: parts = the header `[group chat conversation: <date-time>]` then the message
lines; the user side is the parts joined by blank lines, the assistant side the second
speaker's lines of those parts joined the same way. A part is added to the current chunk while
the joined text stays within 4,000 characters; otherwise it starts a new chunk (only the first
chunk of a session holds the header). Turn chunks: runs of consecutive messages of one speaker
form groups; groups pair in order (1 = user, 2 = assistant, 3 = user, ...), a trailing lone
group gets an empty assistant side; a group's lines are joined by newlines and the user side
is prefixed by the header line. `next_user_text` = the next turn chunk's user text in the same
session. Sessions with no messages give no chunks.

Ids sort in time order: session `"<user>:S003"`, session chunk `"<user>:S003:P00"` (part),
turn chunk `"<user>:S003:T007"` (turn index); `order` is the part or turn index.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable, Sequence

from core.enrich import Enrichment, enrich_session
from core.errors import MemsenseError
from core.types import Chunk, Question

MODES: tuple[str, ...] = ("hybrid", "session", "turn")
FACET_SOURCES: tuple[str, ...] = ("text", "locomo")
MAX_SESSION_CHARS = 4000
JSONL_KEYS = ("user", "session", "time", "speaker", "text")
QUESTION_KEYS = ("user", "question", "answer", "category", "evidence")
KEPT_CATEGORIES = (1, 2, 3, 4)

_FORMAT_HINT = (
    "A conversation file is LoCoMo JSON or JSON Lines with one message per line "
    '(keys user, session, time, speaker, text; see the "Data" section of README.md).'
)
_QUESTION_HINT = (
    'A question file is LoCoMo JSON or {"questions": [{"user", "question", "answer", '
    '"category", "evidence"}, ...]} (see the "Data" section of README.md).'
)


@dataclass(frozen=True)
class Message:
    """One message: speaker, text, its id ("D3:7"), image URLs and caption."""

    speaker: str
    text: str
    dia_id: str
    img_urls: tuple[str, ...] = ()
    caption: str = ""


@dataclass(frozen=True)
class Session:
    """A dated session. `date_time` is the original text, `time` its ISO 8601 form or ""."""

    number: int
    date_time: str
    time: str
    messages: tuple[Message, ...]
    observation: tuple[tuple[str, str], ...] = ()  # LoCoMo (speaker, fact)
    event_summary: tuple[tuple[str, str], ...] = ()  # LoCoMo (speaker, event)


@dataclass(frozen=True)
class Conversation:
    """One user's conversation: its speakers in order of appearance and its sessions."""

    user_id: str
    speakers: tuple[str, ...]
    sessions: tuple[Session, ...]
    name: str = ""
    qa: tuple[dict, ...] = field(default=(), compare=False)

    @property
    def second_speaker(self) -> str:
        """The assistant side: LoCoMo's `speaker_b`, else the second distinct speaker."""
        return self.speakers[1] if len(self.speakers) > 1 else ""


# ---------------------------------------------------------------- reading files


def _fail(path: Path, what: str, fix: str = _FORMAT_HINT) -> MemsenseError:
    return MemsenseError(f"{path}: {what}. {fix}")


def _read_text(path: str | Path) -> tuple[Path, str]:
    """The file's text; a missing, unreadable, non-UTF-8 or blank file raises MemsenseError."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise MemsenseError(f"{p}: no such file. Check the path.") from None
    except IsADirectoryError:
        raise MemsenseError(f"{p}: is a folder, not a file. Choose a .json or .jsonl file.") from None
    except UnicodeDecodeError as e:
        raise MemsenseError(f"{p}: not UTF-8 text (byte {e.start}). Save it as UTF-8.") from None
    except OSError as e:
        raise MemsenseError(f"{p}: cannot be read ({e.strerror}). Check its permissions.") from None
    if not text.strip():
        raise MemsenseError(f"{p}: the file is empty. Choose another file, or export it again.")
    return p, text


def _loads(text: str, path: Path, line: int | None = None) -> Any:
    """json.loads with errors as MemsenseError naming the line and column."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        where = f"line {line}" if line is not None else f"line {e.lineno} column {e.colno}"
        if line is not None and e.colno > 1:
            where += f" column {e.colno}"
        raise MemsenseError(
            f"{path}: not valid JSON at {where} ({e.msg.split(' starting at')[0]}; truncated file?). "
            "Re-export or re-download the file, or fix that line."
        ) from None


def _json_lines(text: str, path: Path) -> list[tuple[int, dict]]:
    """(line number, object) for each non-blank line; each line must be a JSON object."""
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        obj = _loads(line, path, line=number)
        if not isinstance(obj, dict):
            raise _fail(path, f"line {number}: expected a JSON object {{...}}, got {_kind(obj)}")
        rows.append((number, obj))
    return rows


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "text", bool: "true/false", type(None): "null"}
    return names.get(type(value), "a number")


def _is_locomo(data: Any) -> bool:
    return isinstance(data, list) and any(isinstance(s, dict) and "conversation" in s for s in data)


# ---------------------------------------------------------------- date-times

_MONTHS = {
    m: i + 1
    for i, names in enumerate(
        ("jan january", "feb february", "mar march", "apr april", "may", "jun june",
         "jul july", "aug august", "sep sept september", "oct october", "nov november",
         "dec december")
    )
    for m in names.split()
}
_CLOCK = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2}))?\s*(?:([ap])\.?m\b\.?)?", re.I)
_DAY_MONTH = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+([a-z]+)\.?,?\s+(\d{4})\b", re.I)
_MONTH_DAY = re.compile(r"\b([a-z]+)\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b", re.I)


def parse_date_time(text: str) -> str:
    """ISO 8601 ("2023-05-08T13:56:00") of a session date-time, or "" when it cannot be read.

    Accepts ISO 8601 (a date alone means midnight) and free text with a date written
    "8 May, 2023" or "May 8, 2023", optionally with a clock time "1:56 pm" (LoCoMo's
    "1:56 pm on 8 May, 2023"); 12 am is midnight, 12 pm noon.
    """
    text = text.strip()
    if not text:
        return ""
    try:
        return datetime.fromisoformat(text).isoformat(timespec="seconds")
    except ValueError:
        pass
    try:
        return _free_text_date_time(text)
    except ValueError:
        return ""


def _free_text_date_time(text: str) -> str:
    day_month = _DAY_MONTH.search(text)
    if day_month and day_month.group(2).lower() in _MONTHS:
        day, month, year = day_month.group(1), day_month.group(2), day_month.group(3)
    else:
        month_day = _MONTH_DAY.search(text)
        if not (month_day and month_day.group(1).lower() in _MONTHS):
            raise ValueError(text)
        month, day, year = month_day.group(1), month_day.group(2), month_day.group(3)
    hour, minute, second = _clock(text)
    stamp = datetime(int(year), _MONTHS[month.lower()], int(day), hour, minute, second)
    return stamp.isoformat(timespec="seconds")


def _clock(text: str) -> tuple[int, int, int]:
    """(hour, minute, second) of the first clock time in the text; midnight when none."""
    match = _CLOCK.search(text)
    if not match:
        return 0, 0, 0
    hour, minute, second = int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)
    half = (match.group(4) or "").lower()
    if half and not 1 <= hour <= 12:
        raise ValueError(text)
    if half == "a":
        hour = 0 if hour == 12 else hour
    elif half == "p":
        hour = 12 if hour == 12 else hour + 12
    return hour, minute, second


# ---------------------------------------------------------------- conversations


def load_conversations(path: str | Path) -> list[Conversation]:
    """Read a LoCoMo JSON or conversation JSON Lines file (format detected from the file).

    Raises MemsenseError naming the file, the place and the fix for any bad input.
    """
    p, text = _read_text(path)
    if text.lstrip().startswith("["):
        data = _loads(text, p)
        if not _is_locomo(data):
            raise _fail(p, "is a JSON list but not LoCoMo samples (no item has a 'conversation' object)")
        return _locomo_conversations(data, p)
    _reject_whole_object(text, p)
    return _jsonl_conversations(_json_lines(text, p), p)


def _reject_whole_object(text: str, path: Path) -> None:
    """A question file, or one JSON object spread over lines, is not conversation JSON Lines:
    say so instead of reporting a bad line 1."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return
    if isinstance(data, dict) and "questions" in data:
        raise _fail(path, "is a question file, not a conversation file",
                    "Open it as the questions of a dataset instead.")
    if isinstance(data, dict) and "\n" in text.strip():
        raise _fail(path, "is one JSON object, not JSON Lines (one message per line)")


# LoCoMo ------------------------------------------------------------------------

_SESSION_KEY = re.compile(r"session_(\d+)")


def _locomo_conversations(data: list, path: Path) -> list[Conversation]:
    conversations = [_locomo_sample(sample, i, path) for i, sample in enumerate(data)]
    _check_unique_users(conversations, path)
    return conversations


def _check_unique_users(conversations: Sequence[Conversation], path: Path) -> None:
    seen: set[str] = set()
    for conv in conversations:
        if conv.user_id in seen:
            raise _fail(path, f"user '{conv.user_id}' appears twice", "Give each conversation its own id.")
        seen.add(conv.user_id)


def _locomo_sample(sample: Any, index: int, path: Path) -> Conversation:
    where = f"sample {index + 1}"
    if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
        raise _fail(path, f"{where}: has no 'conversation' object")
    user = _required_str(sample, "sample_id", where, path)
    conv = sample["conversation"]
    where = f"sample {user}"
    speakers = (_required_str(conv, "speaker_a", where, path), _required_str(conv, "speaker_b", where, path))
    numbers = sorted(int(m.group(1)) for k in conv if (m := _SESSION_KEY.fullmatch(k)))
    if not numbers:
        raise _fail(path, f"{where}: has no session_N lists")
    sessions = tuple(_locomo_session(sample, n, user, path) for n in numbers)
    qa = sample.get("qa", [])
    qa = tuple(q for q in qa if isinstance(q, dict)) if isinstance(qa, list) else ()
    return Conversation(user, speakers, sessions, name=user, qa=qa)


def _required_str(obj: dict, key: str, where: str, path: Path) -> str:
    if key not in obj:
        raise _fail(path, f"{where}: missing key '{key}'")
    value = obj[key]
    if not isinstance(value, str) or not value.strip():
        raise _fail(path, f"{where}: '{key}' must be non-empty text, got {_kind(value)}")
    return value


def _locomo_session(sample: dict, n: int, user: str, path: Path) -> Session:
    conv = sample["conversation"]
    where = f"sample {user}, session_{n}"
    messages = conv[f"session_{n}"]
    if not isinstance(messages, list):
        raise _fail(path, f"{where}: expected a list of messages, got {_kind(messages)}")
    date_time = conv.get(f"session_{n}_date_time")
    if not isinstance(date_time, str):
        raise _fail(path, f"{where}: missing or non-text 'session_{n}_date_time'")
    parsed = tuple(_locomo_message(m, n, k, where, path) for k, m in enumerate(messages, start=1))
    return Session(n, date_time, parse_date_time(date_time), parsed,
                   _observation(sample, n), _event_summary(sample, n))


def _locomo_message(m: Any, n: int, k: int, where: str, path: Path) -> Message:
    where = f"{where}, message {k}"
    if not isinstance(m, dict):
        raise _fail(path, f"{where}: expected an object, got {_kind(m)}")
    speaker = _required_str(m, "speaker", where, path)
    text = _text(m, "text", where, path)
    dia_id = m.get("dia_id") if isinstance(m.get("dia_id"), str) else f"D{n}:{k}"
    caption = m.get("blip_caption") if isinstance(m.get("blip_caption"), str) else ""
    return Message(speaker, text, dia_id, _urls(m.get("img_url"), where, path), caption.strip())


def _text(obj: dict, key: str, where: str, path: Path) -> str:
    if key not in obj:
        raise _fail(path, f"{where}: missing key '{key}'")
    if not isinstance(obj[key], str):
        raise _fail(path, f"{where}: '{key}' must be text, got {_kind(obj[key])}")
    return obj[key]


def _urls(value: Any, where: str, path: Path) -> tuple[str, ...]:
    """Image URLs from a string or a list of strings (None or "" mean none)."""
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(u, str) for u in value):
        return tuple(u for u in value if u.strip())
    raise _fail(path, f"{where}: 'img_url' must be a URL or a list of URLs, got {_kind(value)}")


def _observation(sample: dict, n: int) -> tuple[tuple[str, str], ...]:
    """LoCoMo `observation` facts of session n as (speaker, fact); () when absent."""
    block = sample.get("observation")
    block = block.get(f"session_{n}_observation") if isinstance(block, dict) else None
    if not isinstance(block, dict):
        return ()
    facts = []
    for speaker, items in block.items():
        for item in items if isinstance(items, list) else ():
            fact = item[0] if isinstance(item, list) and item else item
            if isinstance(fact, str) and fact.strip():
                facts.append((speaker, fact.strip()))
    return tuple(facts)


def _event_summary(sample: dict, n: int) -> tuple[tuple[str, str], ...]:
    """LoCoMo `event_summary` events of session n as (speaker, event); () when absent."""
    block = sample.get("event_summary")
    block = block.get(f"events_session_{n}") if isinstance(block, dict) else None
    if not isinstance(block, dict):
        return ()
    return tuple(
        (speaker, event.strip())
        for speaker, items in block.items()
        if speaker != "date" and isinstance(items, list)
        for event in items
        if isinstance(event, str) and event.strip()
    )


# JSON Lines ---------------------------------------------------------------------


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


def _jsonl_conversations(rows: list[tuple[int, dict]], path: Path) -> list[Conversation]:
    users: dict[str, _UserDraft] = {}
    for line, row in rows:
        _add_jsonl_row(users, line, row, path)
    return [_conversation_from_draft(user, draft) for user, draft in users.items()]


def _add_jsonl_row(users: dict[str, _UserDraft], line: int, row: dict, path: Path) -> None:
    where = f"line {line}"
    for key in JSONL_KEYS:
        if key not in row:
            raise _fail(path, f"{where}: missing key '{key}'")
    user = _required_str(row, "user", where, path)
    name = row.get("conversation", user)
    name = str(name) if isinstance(name, (str, int)) and not isinstance(name, bool) else user
    draft = users.setdefault(user, _UserDraft(name))
    if draft.name != name:
        raise _fail(path, f"{where}: user '{user}' is in conversation '{draft.name}' on an earlier "
                    f"line but '{name}' here", "Give each conversation its own user.")
    number = _session_number(row["session"], where, path)
    session = _session_draft(draft, number, row, line, path)
    speaker = _required_str(row, "speaker", where, path)
    if speaker not in draft.speakers:
        draft.speakers.append(speaker)
    session.messages.append(_jsonl_message(row, number, len(session.messages) + 1, where, path))


def _session_number(value: Any, where: str, path: Path) -> int:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _fail(path, f"{where}: 'session' must be a whole number >= 1, got {value!r}")
    return value


def _session_draft(draft: _UserDraft, number: int, row: dict, line: int, path: Path) -> _SessionDraft:
    time = _text(row, "time", f"line {line}", path).strip()
    session = draft.sessions.setdefault(number, _SessionDraft(time, line))
    if session.time != time:
        raise _fail(path, f"line {line}: session {number} has time '{time}' here but "
                    f"'{session.time}' on line {session.time_line}",
                    "Give every line of a session the same time.")
    return session


def _jsonl_message(row: dict, number: int, k: int, where: str, path: Path) -> Message:
    dia_id = row.get("id")
    if dia_id is None:
        dia_id = f"D{number}:{k}"
    elif not isinstance(dia_id, str) or not dia_id.strip():
        raise _fail(path, f"{where}: 'id' must be non-empty text such as \"D3:7\", got {_kind(dia_id)}")
    caption = row.get("caption", "")
    if caption is None:
        caption = ""
    if not isinstance(caption, str):
        raise _fail(path, f"{where}: 'caption' must be text, got {_kind(caption)}")
    text = _text(row, "text", where, path)
    return Message(row["speaker"], text, dia_id, _urls(row.get("img_url"), where, path), caption.strip())


def _conversation_from_draft(user: str, draft: _UserDraft) -> Conversation:
    sessions = tuple(
        Session(n, s.time, parse_date_time(s.time), tuple(s.messages))
        for n, s in sorted(draft.sessions.items())
    )
    return Conversation(user, tuple(draft.speakers), sessions, name=draft.name)


# ---------------------------------------------------------------- chunks


def header(session: Session) -> str:
    """The session header `[group chat conversation: <date-time>]` (original date-time text)."""
    return f"[group chat conversation: {session.date_time}]"


def message_line(message: Message) -> str:
    """`Speaker: text`, then `URL[: caption]` per image URL, or `(caption)` with no URL."""
    lines = [f"{message.speaker}: {message.text}"]
    for url in message.img_urls:
        lines.append(f"{url}: {message.caption}" if message.caption else url)
    if message.caption and not message.img_urls:
        lines.append(f"({message.caption})")
    return "\n".join(lines)


def build_chunks(
    conversations: Iterable[Conversation],
    mode: str = "hybrid",
    enrich: bool = True,
    facet_source: str = "text",
) -> list[Chunk]:
    """Chunks of every session, in time order: session chunks, then turn chunks, per session.

    mode: "hybrid" (both kinds), "session" or "turn". enrich: fill tags, task_tag,
    memory_kind and facets per session (core.enrich). facet_source: "text" (facets from the
    messages) or "locomo" (from LoCoMo `observation` / `event_summary`, text when absent).
    """
    if mode not in MODES:
        raise MemsenseError(f"unknown mode '{mode}'; use hybrid, session or turn.")
    if facet_source not in FACET_SOURCES:
        raise MemsenseError(f"unknown facet source '{facet_source}'; use text or locomo.")
    chunks: list[Chunk] = []
    for conv in conversations:
        for session in conv.sessions:
            chunks.extend(_chunks_of_session(conv, session, mode, enrich, facet_source))
    return chunks


def _chunks_of_session(
    conv: Conversation, session: Session, mode: str, enrich: bool, facet_source: str
) -> list[Chunk]:
    if not session.messages:
        return []
    chunks = session_chunks(conv, session) if mode in ("hybrid", "session") else []
    chunks += turn_chunks(conv, session) if mode in ("hybrid", "turn") else []
    if not enrich:
        return chunks
    found = _enrich(conv, session, facet_source)
    return [_with_enrichment(c, found) for c in chunks]


def _base_chunk(conv: Conversation, session: Session, kind: str, order: int, **fields: Any) -> Chunk:
    session_id = f"{conv.user_id}:S{session.number:03d}"
    suffix = f"P{order:02d}" if kind == "session" else f"T{order:03d}"
    return Chunk(
        memory_id=f"{session_id}:{suffix}", user_id=conv.user_id, session_id=session_id,
        session_number=session.number, kind=kind, order=order, time=session.time, **fields,
    )


def split_parts(parts: Sequence[str], limit: int = MAX_SESSION_CHARS) -> list[list[int]]:
    """Indices of the parts of each chunk: a part joins the current chunk while
    `"\\n\\n".join(chunk parts)` stays within `limit` characters, else it starts a new chunk.
    A part longer than `limit` on its own is a chunk of its own (never cut)."""
    groups: list[list[int]] = []
    size = 0
    for i, part in enumerate(parts):
        if groups and size + 2 + len(part) <= limit:
            groups[-1].append(i)
            size += 2 + len(part)
        else:
            groups.append([i])
            size = len(part)
    return groups


def session_chunks(conv: Conversation, session: Session) -> list[Chunk]:
    """The session's chunks (SPEC §1); the assistant side holds the second speaker's lines."""
    messages: list[Message | None] = [None, *session.messages]
    parts = [header(session), *(message_line(m) for m in session.messages)]
    chunks = []
    for order, indices in enumerate(split_parts(parts)):
        mine = [messages[i] for i in indices]
        second = [parts[i] for i, m in zip(indices, mine) if m and m.speaker == conv.second_speaker]
        chunks.append(_base_chunk(
            conv, session, "session", order,
            user_text="\n\n".join(parts[i] for i in indices),
            assistant_text="\n\n".join(second),
            dia_ids=tuple(m.dia_id for m in mine if m),
        ))
    return chunks


def speaker_groups(messages: Sequence[Message]) -> list[list[Message]]:
    """Runs of consecutive messages by the same speaker."""
    groups: list[list[Message]] = []
    for m in messages:
        if groups and groups[-1][0].speaker == m.speaker:
            groups[-1].append(m)
        else:
            groups.append([m])
    return groups


def turn_chunks(conv: Conversation, session: Session) -> list[Chunk]:
    """Turn chunks: speaker groups paired in order (user, assistant); see SPEC §1."""
    groups = speaker_groups(session.messages)
    pairs = [groups[i:i + 2] for i in range(0, len(groups), 2)]
    users = [header(session) + "\n" + "\n".join(message_line(m) for m in p[0]) for p in pairs]
    chunks = []
    for order, pair in enumerate(pairs):
        reply = pair[1] if len(pair) > 1 else []
        chunks.append(_base_chunk(
            conv, session, "turn", order,
            user_text=users[order],
            assistant_text="\n".join(message_line(m) for m in reply),
            next_user_text=users[order + 1] if order + 1 < len(users) else "",
            dia_ids=tuple(m.dia_id for m in pair[0] + reply),
        ))
    return chunks


def _enrich(conv: Conversation, session: Session, facet_source: str) -> Enrichment:
    lines = [message_line(m) for m in session.messages]
    if facet_source == "locomo" and (session.observation or session.event_summary):
        return enrich_session(
            lines, speakers=conv.speakers,
            facts=[fact for _, fact in session.observation],
            event_facts=[event for _, event in session.event_summary],
        )
    return enrich_session(lines, speakers=conv.speakers)


def _with_enrichment(chunk: Chunk, e: Enrichment) -> Chunk:
    return replace(
        chunk, tags=e.tags, task_tag=e.task_tag, memory_kind=e.memory_kind,
        personal_info=e.personal_info, preferences=e.preferences, events=e.events,
        memory_score=e.memory_score,
    )


# ---------------------------------------------------------------- questions

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

    Kept: categories 1-4 whose evidence names at least one session. question_id is
    "<user>:q<index>", index = position in the sample's `qa` list (LoCoMo) or among the
    user's questions in the file (project format), counting from 0. Answers become text.
    """
    p, text = _read_text(path)
    stripped = text.lstrip()
    if stripped.startswith("["):
        data = _loads(text, p)
        if not _is_locomo(data):
            raise _fail(p, "is a JSON list but not LoCoMo samples", _QUESTION_HINT)
        return _locomo_questions(data, p)
    if _first_line_is_question(stripped):
        return _project_questions([row for _, row in _json_lines(text, p)], p, "line")
    data = _loads(text, p)
    if not isinstance(data, dict) or not isinstance(data.get("questions"), list):
        raise _fail(p, "has no 'questions' list", _QUESTION_HINT)
    return _project_questions(data["questions"], p, "question")


def _first_line_is_question(text: str) -> bool:
    try:
        first = json.loads(text.splitlines()[0])
    except json.JSONDecodeError:
        return False
    return isinstance(first, dict) and "question" in first


def _locomo_questions(data: list, path: Path) -> list[Question]:
    questions = []
    for i, sample in enumerate(data):
        if not isinstance(sample, dict):
            raise _fail(path, f"sample {i + 1}: expected an object, got {_kind(sample)}", _QUESTION_HINT)
        user = _required_str(sample, "sample_id", f"sample {i + 1}", path)
        qa = sample.get("qa", [])
        if not isinstance(qa, list):
            raise _fail(path, f"sample {user}: 'qa' must be a list", _QUESTION_HINT)
        for index, item in enumerate(qa):
            question = _question(item, user, index, f"sample {user}, qa {index}", path)
            if question is not None:
                questions.append(question)
    return questions


def _project_questions(items: list, path: Path, unit: str) -> list[Question]:
    questions, counts = [], {}
    for n, item in enumerate(items, start=1):
        where = f"{unit} {n}"
        if not isinstance(item, dict):
            raise _fail(path, f"{where}: expected an object, got {_kind(item)}", _QUESTION_HINT)
        for key in QUESTION_KEYS:
            if key not in item:
                raise _fail(path, f"{where}: missing key '{key}'", _QUESTION_HINT)
        user = _required_str(item, "user", where, path)
        index = counts.get(user, 0)
        counts[user] = index + 1
        question = _question(item, user, index, where, path)
        if question is not None:
            questions.append(question)
    return questions


def _question(item: Any, user: str, index: int, where: str, path: Path) -> Question | None:
    """A Question, or None when it is not kept (category 5 or no usable evidence)."""
    if not isinstance(item, dict):
        raise _fail(path, f"{where}: expected an object, got {_kind(item)}", _QUESTION_HINT)
    category = _category(item.get("category"), where, path)
    evidence = item.get("evidence", [])
    if not isinstance(evidence, list):
        raise _fail(path, f"{where}: 'evidence' must be a list of ids such as \"D3:7\"", _QUESTION_HINT)
    sessions, turns = parse_evidence(evidence)
    if category not in KEPT_CATEGORIES or not sessions:
        return None
    text = item.get("question")
    if not isinstance(text, str) or not text.strip():
        raise _fail(path, f"{where}: 'question' must be non-empty text", _QUESTION_HINT)
    answer = item.get("answer", "")
    return Question(f"{user}:q{index}", user, text, "" if answer is None else str(answer),
                    category, sessions, turns)


def _category(value: Any, where: str, path: Path) -> int:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(path, f"{where}: 'category' must be a whole number (1-4), got {value!r}", _QUESTION_HINT)
    return value
