"""Conversations become session and turn chunks, enriched offline (SPEC §1)."""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterable, Sequence

from core.errors import MemsenseError
from core.ingest.enrich import Enrichment, enrich_session
from core.ingest.messages import Conversation, Message, Session
from core.records import Chunk

MODES: tuple[str, ...] = ("hybrid", "session", "turn")
FACET_SOURCES: tuple[str, ...] = ("text", "locomo")
MAX_SESSION_CHARS = 4000


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
    memory_kind and facets per session (core.ingest.enrich). facet_source: "text" (facets from the
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
