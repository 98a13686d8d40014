"""Ingest: conversation files become conversations, conversations become chunks (SPEC §1).

Three conversation formats are read; the format is detected from the file itself (a JSON list
whose items hold a "conversation" object is LoCoMo; one whose items hold "haystack_sessions"
is LongMemEval, SPEC §11, each question its own user; a file of one JSON object per line is
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
from pathlib import Path

from core.ingest.files import fail, is_locomo, json_lines, loads_json, read_text
from core.ingest.jsonl import jsonl_conversations
from core.ingest.locomo import locomo_conversations
from core.ingest.longmemeval import is_longmemeval, longmemeval_conversations
from core.ingest.messages import Conversation


def load_conversations(path: str | Path) -> list[Conversation]:
    """Read a LoCoMo JSON or conversation JSON Lines file (format detected from the file).

    Raises MemsenseError naming the file, the place and the fix for any bad input.
    """
    p, text = read_text(path)
    if text.lstrip().startswith("["):
        data = loads_json(text, p)
        if is_longmemeval(data):
            return _addressable(longmemeval_conversations(data, p), p)
        if not is_locomo(data):
            raise fail(p, "is a JSON list but not LoCoMo samples (no item has a 'conversation' object)")
        return _addressable(locomo_conversations(data, p), p)
    _reject_whole_object(text, p)
    return _addressable(jsonl_conversations(json_lines(text, p), p), p)


def _addressable(conversations: list[Conversation], path: Path) -> list[Conversation]:
    """Every user id can be named on a command line later (to search or drop it): no NUL."""
    for c in conversations:
        if "\x00" in c.user_id:
            raise fail(path, f"the user id {c.user_id!r} holds a NUL character, which no command line can pass, "
                             "so the user could be stored but never searched or dropped", "Rename the user in the file.")
    return conversations


def _reject_whole_object(text: str, path: Path) -> None:
    """A question file, or one JSON object spread over lines, is not conversation JSON Lines:
    say so instead of reporting a bad line 1."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # not one JSON object (or beyond what json reads): the lines say more
        return
    if isinstance(data, dict) and "questions" in data:
        raise fail(path, "is a question file, not a conversation file",
                    "Open it as the questions of a dataset instead.")
    if isinstance(data, dict) and "\n" in text.strip():
        raise fail(path, "is one JSON object, not JSON Lines (one message per line)")
