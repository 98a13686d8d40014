"""Typed records handed across the core's boundary."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any
from json.encoder import encode_basestring

MEMSENSE_ROUTES: tuple[str, ...] = (
    "vec_full",
    "vec_user",
    "vec_asst",
    "vec_next_user",
    "lexical",
    "facet_personal_info",
    "facet_preferences",
    "facet_events",
)
"""The eight recall routes of SPEC §2, Memsense's own, in display order."""

SESSION_ROUTES: tuple[str, ...] = ("session_lexical", "session_dense")
"""Routes over whole sessions (SPEC §15, beyond Memsense): a session's rank there applies to its
session chunks (`core.recall.sessions`). Their weight is 0 in Memsense's own settings."""

ROUTES: tuple[str, ...] = MEMSENSE_ROUTES + SESSION_ROUTES
"""Every recall route, in display order (and the order fusion adds their shares: the session
routes last, so Memsense's eight add up as Memsense adds them)."""

DENSE_ROUTES: tuple[str, ...] = tuple(r for r in MEMSENSE_ROUTES if r != "lexical")
"""The routes with one stored vector per chunk (the store's seven vector columns)."""
FACETS: tuple[str, ...] = ("personal_info", "preferences", "events")
MEMORY_KINDS: tuple[str, ...] = ("stable", "preference", "episodic", "ephemeral")
CHUNK_KINDS: tuple[str, ...] = ("session", "turn")
DEFAULT_MEMORY_SCORE = 0.5
"""What Memsense stores for every chunk (SPEC §1); promote / demote move it by ±0.15."""


def clamp01(value: Any) -> float:
    """Memory score clamped to [0, 1]; a missing, non-numeric or NaN value is 0.5 (§3)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        return DEFAULT_MEMORY_SCORE
    return min(1.0, max(0.0, float(value)))


def canonical_content(user: str, assistant: str) -> str:
    """The canonical QA JSON Memsense stores as `content` (SPEC §1): the text of
    `json.dumps({"user": user, "assistant": assistant}, ensure_ascii=False)`, built from json's
    own string encoder without an encoder object per call (BM25 indexes the content of every
    chunk when a user is opened)."""
    return '{"user": ' + encode_basestring(user) + ', "assistant": ' + encode_basestring(assistant) + "}"


@dataclass(frozen=True)
class Chunk:
    """One stored memory: a session chunk or a turn chunk (SPEC §1)."""

    memory_id: str
    user_id: str
    session_id: str
    session_number: int
    kind: str  # "session" | "turn"
    order: int  # position among the chunks of the same session and kind
    time: str  # ISO 8601 of the session's date-time ("" when unknown)
    user_text: str
    assistant_text: str
    next_user_text: str = ""
    tags: tuple[str, ...] = ()
    task_tag: str = ""
    memory_kind: str = "episodic"
    personal_info: str = ""
    preferences: str = ""
    events: str = ""
    memory_score: float = DEFAULT_MEMORY_SCORE
    dia_ids: tuple[str, ...] = ()

    @property
    def content(self) -> str:
        return canonical_content(self.user_text, self.assistant_text)

    @property
    def lexical_text(self) -> str:
        """What BM25 indexes: `task_tag + " " + content` (SPEC §2)."""
        return f"{self.task_tag} {self.content}"

    def route_text(self, route: str) -> str:
        """The text behind a dense route (SPEC §2); "" means absent from that route."""
        return {
            "vec_full": self.content,
            "vec_user": self.user_text,
            "vec_asst": self.assistant_text,
            "vec_next_user": self.next_user_text,
            "facet_personal_info": self.personal_info,
            "facet_preferences": self.preferences,
            "facet_events": self.events,
            "lexical": self.lexical_text,
        }[route]

    def to_payload(self) -> dict:
        return {
            "memory_id": self.memory_id,
            "user_id": self.user_id,
            "session_id": self.session_id,
            "session_number": self.session_number,
            "kind": self.kind,
            "order": self.order,
            "time": self.time,
            "user_text": self.user_text,
            "assistant_text": self.assistant_text,
            "next_user_text": self.next_user_text,
            "tags": list(self.tags),
            "task_tag": self.task_tag,
            "memory_kind": self.memory_kind,
            "personal_info": self.personal_info,
            "preferences": self.preferences,
            "events": self.events,
            "memory_score": self.memory_score,
            "dia_ids": list(self.dia_ids),
        }

    @classmethod
    def from_payload(cls, p: dict) -> "Chunk":
        return cls(
            memory_id=p["memory_id"],
            user_id=p["user_id"],
            session_id=p["session_id"],
            session_number=int(p["session_number"]),
            kind=p["kind"],
            order=int(p["order"]),
            time=p.get("time", ""),
            user_text=p.get("user_text", ""),
            assistant_text=p.get("assistant_text", ""),
            next_user_text=p.get("next_user_text", ""),
            tags=tuple(p.get("tags", ())),
            task_tag=p.get("task_tag", ""),
            memory_kind=p.get("memory_kind", "episodic"),
            personal_info=p.get("personal_info", ""),
            preferences=p.get("preferences", ""),
            events=p.get("events", ""),
            memory_score=p.get("memory_score", DEFAULT_MEMORY_SCORE),
            dia_ids=tuple(p.get("dia_ids", ())),
        )


@dataclass(frozen=True)
class Question:
    """A judged question (SPEC §8): gold sessions and gold turns (dia ids)."""

    question_id: str
    user_id: str
    text: str
    answer: str
    category: int
    gold_sessions: tuple[int, ...]
    gold_turns: tuple[str, ...] = ()
    relevance: dict = field(default_factory=dict)  # memory_id -> grade 0..3 (optional)
