"""Phase 7's quality-weighted score (SPEC §9): candidates come from hybrid RRF over the live
routes (the preset: k = 60, `vec_full` and `lexical` weighted 0.5 / 0.5); each is then scored
`quality = (0.5·relevance + 0.3·recency + 0.2·importance) · length · type · role`."""
from __future__ import annotations

import math
from datetime import datetime, timezone
from functools import lru_cache
from typing import NamedTuple, Sequence

import numpy as np

from core.config import Config
from core.rank.fusion import rrf
from core.rank.fusion.base import VEC_FULL
from core.rank.score import clamp01
from core.records import Chunk

HEADER_PREFIX = "[group chat conversation:"
SEMANTIC_KINDS: frozenset[str] = frozenset({"stable", "preference"})
"""Memory kinds Phase 7 calls semantic: lasting facts about the person (`stable`: who they are,
`preference`: what they like). `episodic` (an event) and `ephemeral` are not semantic."""
MIN_STORED_CHARS = 50
MAX_LENGTH_CHARS = 500
QUALITY_WEIGHTS = (0.5, 0.3, 0.2)  # relevance, recency, importance
SEMANTIC_FACTOR = 1.2
ASSISTANT_FACTOR, USER_FACTOR = 1.1, 0.9


class ChunkProfile(NamedTuple):
    """What the quality formula reads from a chunk."""

    length: int  # characters of its message text
    assistant: bool  # role: carries an assistant reply
    user_question: bool
    semantic: bool
    hours: float  # its time in hours since the epoch (nan when unknown)


def message_text(chunk: Chunk) -> str:
    """The chunk's stored message text, without the `[group chat conversation: ...]` header.

    A session chunk's user side already holds every line of the session (§1), so it is the
    text; a turn chunk's text is its user side and its assistant reply, one after the other.
    """
    parts = [chunk.user_text] if chunk.kind == "session" else [chunk.user_text, chunk.assistant_text]
    lines = [ln for p in parts for ln in p.splitlines() if not ln.startswith(HEADER_PREFIX)]
    return "\n".join(lines).strip()


def is_assistant(chunk: Chunk) -> bool:
    """Role: a chunk is assistant text when its assistant side is non-empty (it holds the
    second speaker's reply, the side Memsense stores as `assistant`); otherwise user text
    (a trailing lone user group)."""
    return bool(chunk.assistant_text.strip())


@lru_cache(maxsize=1 << 16)
def profile(chunk: Chunk) -> ChunkProfile:
    text = message_text(chunk)
    assistant = is_assistant(chunk)
    return ChunkProfile(len(text), assistant, not assistant and text.rstrip().endswith("?"),
                        chunk.memory_kind in SEMANTIC_KINDS, iso_hours(chunk.time))


@lru_cache(maxsize=1 << 12)
def iso_hours(text: str) -> float:
    """Hours since the Unix epoch of an ISO 8601 date-time (naive = UTC); nan when empty."""
    if not text:
        return math.nan
    when = datetime.fromisoformat(text)
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.timestamp() / 3600.0


def stored(chunk: Chunk) -> bool:
    """Phase 7's storage filter: texts under 50 characters and user questions are not stored."""
    p = profile(chunk)
    return p.length >= MIN_STORED_CHARS and not p.user_question


class QualityTerms(NamedTuple):
    """Every factor of the quality formula, one value per pool row."""

    relevance: np.ndarray
    recency: np.ndarray
    importance: np.ndarray
    length_factor: np.ndarray
    type_factor: np.ndarray
    role_factor: np.ndarray
    quality: np.ndarray


def as_of_hours(cfg: Config, chunks: Sequence[Chunk]) -> float:
    """The "as of" time: `quality_as_of`, or when empty the newest chunk time in the pool."""
    if cfg.quality_as_of:
        return iso_hours(cfg.quality_as_of)
    hours = [h for h in (profile(c).hours for c in chunks) if not math.isnan(h)]
    return max(hours) if hours else math.nan


def quality_terms(scores: np.ndarray, live: np.ndarray, cfg: Config, chunks: Sequence[Chunk]) -> QualityTerms:
    """Phase 7's factors for every row (§9):

    - `relevance = 1 − min(distance, 2) / 2`, `distance = 1 − cosine` on `vec_full`
      (0 when `vec_full` is not a live route for the row: its distance is unknown);
    - `recency = quality_recency_base ^ age_hours`, age to the "as of" time, at least 0
      (0 when the chunk's time is unknown);
    - `importance = clamp01(memory_score)`;
    - `length_factor = min(len, 500) / 500`, len = characters of `message_text`;
    - `type_factor` 1.2 for semantic memory kinds (`SEMANTIC_KINDS`) else 1.0;
    - `role_factor` 1.1 for assistant text (`is_assistant`) else 0.9;
    - `quality = (0.5·relevance + 0.3·recency + 0.2·importance) · length · type · role`.
    """
    profiles = [profile(c) for c in chunks]
    cosine = np.where(live[:, VEC_FULL], scores[:, VEC_FULL], np.nan)
    relevance = np.where(np.isnan(cosine), 0.0, 1.0 - np.minimum(1.0 - np.nan_to_num(cosine), 2.0) / 2.0)
    now = as_of_hours(cfg, chunks)
    age = np.maximum(now - np.array([p.hours for p in profiles], dtype=np.float64), 0.0)
    recency = np.where(np.isnan(age), 0.0, cfg.quality_recency_base ** np.nan_to_num(age))
    importance = np.array([clamp01(c.memory_score) for c in chunks], dtype=np.float64)
    length = np.array([min(p.length, MAX_LENGTH_CHARS) / MAX_LENGTH_CHARS for p in profiles], dtype=np.float64)
    kind = np.array([SEMANTIC_FACTOR if p.semantic else 1.0 for p in profiles], dtype=np.float64)
    role = np.array([ASSISTANT_FACTOR if p.assistant else USER_FACTOR for p in profiles], dtype=np.float64)
    wr, wt, wi = QUALITY_WEIGHTS
    quality = (wr * relevance + wt * recency + wi * importance) * length * kind * role
    return QualityTerms(relevance, recency, importance, length, kind, role, quality)


def fuse(ranks: np.ndarray, scores: np.ndarray, live: np.ndarray, cfg: Config,
            chunks: Sequence[Chunk] = ()) -> tuple[np.ndarray, np.ndarray]:
    """Phase 7's quality score of every found row (`quality_terms`); contributions are the
    hybrid RRF shares that admitted the row (`quality_cut`), since quality is not a sum over
    routes."""
    if len(chunks) != len(ranks):
        raise ValueError("the quality scheme needs the pool's chunks, row for row")
    found = live.any(axis=1)
    if not found.any():
        return np.zeros(len(ranks)), np.zeros(live.shape)
    terms = quality_terms(scores, live, cfg, chunks)
    _, contrib = rrf.fuse(ranks, scores, live, cfg)
    return np.where(found, terms.quality, 0.0), contrib


def cut(fused: np.ndarray, ranks: np.ndarray, live: np.ndarray, cfg: Config,
                chunks: Sequence[Chunk]) -> dict[int, str]:
    """Drop what Phase 7 never stores (`stored`), then keep the best `candidate_limit` rows
    by hybrid RRF (`Σ w_r / (k + rank_r)` over the live routes) for quality to rank."""
    found = live.any(axis=1)
    drops: dict[int, str] = {}
    for i in np.flatnonzero(found):
        p = profile(chunks[int(i)])
        if p.user_question:
            drops[int(i)] = "Phase 7 storage filter: a user question is not stored"
        elif p.length < MIN_STORED_CHARS:
            drops[int(i)] = f"Phase 7 storage filter: text of {p.length} characters (< {MIN_STORED_CHARS}) is not stored"
    hybrid, _ = rrf.fuse(ranks, np.zeros_like(ranks, dtype=np.float64), live, cfg)
    eligible = np.array([i for i in np.flatnonzero(found) if int(i) not in drops], dtype=np.int64)
    ordered = eligible[np.argsort(-hybrid[eligible], kind="stable")]
    for place, i in enumerate(ordered[cfg.candidate_limit:], start=cfg.candidate_limit + 1):
        drops[int(i)] = (f"hybrid RRF {hybrid[i]:.4f} ranks #{place}, outside the {cfg.candidate_limit} "
                         "candidates the quality score re-ranks")
    return drops
