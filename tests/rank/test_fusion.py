"""The ranking schemes of SPEC §9 as worked examples of their formulas, and the presets."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from core import config as config_io
from core.config import Config
from core.rank.fusion import FUSIONS, live_mask
from core.config.presets import BUILTIN, only
from core.rank.rerank import rerank
from core.rank.fusion.linear import fuse as linear
from core.rank.fusion.quality import is_assistant, message_text, quality_terms, stored
from core.rank.synthetic import synthetic_pool
from core.recall.pool import RecallPool
from core.records import ROUTES, Chunk

LEX, VEC = ROUTES.index("lexical"), ROUTES.index("vec_full")
HEADER = "[group chat conversation: 1:56 pm on 8 May, 2023]"
LONG = "Ana: I went to the beekeeping club meeting yesterday and it was really useful for me."


def chunk(mid: str, *, kind: str = "session", user: str = LONG, asst: str = "Tomas: That is great!",
          time: str = "2023-05-08T13:56:00", memory_kind: str = "episodic", memory_score: float = 0.5) -> Chunk:
    session = mid.rsplit(":", 1)[0]
    return Chunk(mid, "u", session, int(session[-3:]), kind, 0, time, f"{HEADER}\n{user}", asst,
                 memory_kind=memory_kind, memory_score=memory_score)


def pool_of(chunks, lexical=None, cosine=None, vectors=None) -> RecallPool:
    """A pool whose lexical and vec_full routes hold the given raw scores (None = absent);
    ranks follow the scores (ties by id)."""
    n = len(chunks)
    ranks = np.zeros((n, 8), dtype=np.int32)
    scores = np.full((n, 8), np.nan)
    for j, raw in ((LEX, lexical), (VEC, cosine)):
        if raw is None:
            continue
        present = [i for i in range(n) if raw[i] is not None]
        for rank, i in enumerate(sorted(present, key=lambda i: (-raw[i], i)), start=1):
            ranks[i, j], scores[i, j] = rank, raw[i]
    vecs = np.eye(n, max(n, 2)) if vectors is None else np.asarray(vectors, dtype=float)
    return RecallPool("q", "u", tuple(chunks), ranks, scores, vecs, depth=100)


LINEAR = Config(scheme="linear", alpha=0.0, session_first=False, route_weights=only(vec_full=1, lexical=1))


# -- Memory v2: linear hybrid -------------------------------------------------------------------------
def test_linear_worked_example():
    chunks = [chunk(f"u:S00{i}:P00") for i in range(1, 5)]
    pool = pool_of(chunks, lexical=[4.0, 2.0, None, None], cosine=[0.9, 0.5, 0.7, 0.55])
    live = live_mask(pool.ranks, LINEAR)
    fused, contrib = linear(pool.ranks, pool.scores, live, LINEAR)
    # bm25 over the candidates with no match = 0: [4, 2, 0, 0] -> [1, 0.5, 0, 0]
    # cosine min 0.5, max 0.9:                   -> [1, 0, 0.5, 0.125]
    expected = [0.3 * 1 + 0.7 * 1, 0.3 * 0.5 + 0.7 * 0, 0.3 * 0 + 0.7 * 0.5, 0.7 * 0.125]
    assert fused == pytest.approx(expected)
    assert contrib[:, LEX] == pytest.approx([0.3, 0.15, 0, 0])
    assert contrib.sum(axis=1) == pytest.approx(fused)


def test_linear_cut_drops_below_015_and_keeps_at_most_max_results():
    chunks = [chunk(f"u:S00{i}:P00") for i in range(1, 5)]
    pool = pool_of(chunks, lexical=[4.0, 2.0, None, None], cosine=[0.9, 0.5, 0.7, 0.55])
    ranking = rerank(pool, replace(LINEAR, mmr_lambda=1.0))
    # 0.0875 < 0.15 is dropped; 0.15 itself stays (the cut drops scores *below* 0.15)
    assert ranking.result_ids == ["u:S001:P00", "u:S003:P00", "u:S002:P00"]
    assert ranking.fate("u:S004:P00").status == "dropped"
    assert "below the cut 0.15" in ranking.fate("u:S004:P00").reason
    capped = rerank(pool, replace(LINEAR, mmr_lambda=1.0, linear_max_results=2))
    assert capped.result_ids == ["u:S001:P00", "u:S003:P00"]
    assert "at most 2" in capped.fate("u:S002:P00").reason


def test_linear_with_keyword_off_is_normalised_cosine():
    chunks = [chunk(f"u:S00{i}:P00") for i in range(1, 4)]
    pool = pool_of(chunks, lexical=[5.0, 1.0, None], cosine=[0.2, 0.6, 0.4])
    cfg = replace(LINEAR, route_weights=only(vec_full=1))
    fused, _ = linear(pool.ranks, pool.scores, live_mask(pool.ranks, cfg), cfg)
    assert fused == pytest.approx([0.0, 0.7, 0.35])


# -- Phase 7: quality-weighted ------------------------------------------------------------------------
PHASE7 = BUILTIN["phase7"]


def test_quality_worked_example():
    # A session chunk: its text is its user side (every line of the session), header left out.
    c = chunk("u:S001:P00", user="x" * 250, asst="y", time="2023-05-08T10:00:00", memory_kind="stable")
    pool = pool_of([c], cosine=[0.6])
    cfg = replace(PHASE7, quality_as_of="2023-05-08T20:00:00")
    t = quality_terms(pool.scores, live_mask(pool.ranks, cfg), cfg, pool.chunks)
    relevance = 1 - min(1 - 0.6, 2) / 2  # distance = 1 - cosine = 0.4
    recency = 0.995 ** 10  # ten hours before "as of"
    importance = 0.5
    length = 250 / 500
    expected = (0.5 * relevance + 0.3 * recency + 0.2 * importance) * length * 1.2 * 1.1  # stable, assistant
    assert t.relevance[0] == pytest.approx(0.8)
    assert t.quality[0] == pytest.approx(expected)
    fused, _ = FUSIONS["quality"](pool.ranks, pool.scores, live_mask(pool.ranks, cfg), cfg, pool.chunks)
    assert fused[0] == pytest.approx(expected)


def test_quality_factors_type_role_length_and_default_as_of():
    old = chunk("u:S001:T000", kind="turn", user="a" * 700, asst="", time="2023-05-01T00:00:00")
    new = chunk("u:S002:T000", kind="turn", user="b" * 100, asst="Mel: yes", time="2023-05-03T00:00:00",
                memory_kind="preference", memory_score=1.0)
    pool = pool_of([old, new], cosine=[-0.5, 1.0])
    t = quality_terms(pool.scores, live_mask(pool.ranks, PHASE7), PHASE7, pool.chunks)
    assert t.relevance == pytest.approx([1 - 1.5 / 2, 1.0])
    assert t.recency == pytest.approx([0.995 ** 48, 1.0])  # "as of" = the newest chunk
    assert t.importance == pytest.approx([0.5, 1.0])
    assert t.length_factor == pytest.approx([1.0, (100 + 1 + 8) / 500])
    assert t.type_factor == pytest.approx([1.0, 1.2])  # preference is a semantic kind
    assert t.role_factor == pytest.approx([0.9, 1.1])  # no reply = user text


def test_quality_storage_filter_and_roles():
    short = chunk("u:S001:T000", kind="turn", user="Hi Mel!", asst="Hey!")
    question = chunk("u:S001:T001", kind="turn", user="Ana: " + "so what did you think of the talk " * 3 + "?",
                     asst="")
    kept = chunk("u:S001:T002", kind="turn", user=LONG, asst="")
    assert message_text(short) == "Hi Mel!\nHey!"
    assert not stored(short) and not stored(question) and stored(kept)
    assert not is_assistant(kept) and is_assistant(short)
    pool = pool_of([short, question, kept], cosine=[0.9, 0.8, 0.1])
    ranking = rerank(pool, replace(PHASE7, session_first=False))
    assert ranking.result_ids == ["u:S001:T002"]
    assert "storage filter" in ranking.fate("u:S001:T000").reason
    assert "user question" in ranking.fate("u:S001:T001").reason


def test_quality_ranks_the_rrf_candidates_by_quality():
    # Hybrid RRF admits the best candidate_limit rows; quality then orders them.
    chunks = [chunk(f"u:S00{i}:P00", user=LONG * (1 if i != 3 else 5)) for i in range(1, 4)]
    pool = pool_of(chunks, lexical=[3.0, 2.0, 1.0], cosine=[0.5, 0.4, 0.45])
    cfg = replace(PHASE7, session_first=False, candidate_min=2, candidate_multiplier=1, top_k=2, mmr_lambda=1.0)
    ranking = rerank(pool, cfg)
    assert "outside the 2 candidates" in ranking.fate("u:S003:P00").reason
    assert ranking.result_ids == ["u:S001:P00", "u:S002:P00"]
    longer = rerank(pool, replace(cfg, candidate_min=3))
    assert longer.result_ids[0] == "u:S003:P00"  # five times the text: full length factor


# -- the presets ---------------------------------------------------------------------------------------
def test_every_section9_preset_exists_round_trips_and_runs():
    assert set(BUILTIN) >= {"memsense", "fusion_note", "memory_v2", "phase7", "top_rank_bonus", "bm25_only",
                            "dense_only"}
    pool = synthetic_pool(n_sessions=12, seed=3)
    for name, cfg in BUILTIN.items():
        assert config_io.from_dict(config_io.to_dict(cfg)) == cfg, name
        assert cfg.scheme in FUSIONS
        first, again = rerank(pool, cfg), rerank(pool, cfg)
        assert first.result_ids == again.result_ids, name


def test_fusion_note_zero_weight_removes_the_keyword_list():
    cfg = BUILTIN["fusion_note"]
    assert cfg.rrf_k == 60 and cfg.weight("vec_full") == 1.0 and cfg.weight("lexical") == 0.0
    pool = synthetic_pool(n_sessions=12, seed=1)
    ranking = rerank(pool, cfg)
    only_lexical = [i for i in range(pool.size) if (pool.ranks[i] > 0).tolist() == [j == LEX for j in range(8)]]
    assert all(i not in set(ranking.candidates.tolist()) for i in only_lexical)
    assert np.all(ranking.contributions[:, [j for j in range(8) if j != VEC]] == 0)


def test_bm25_only_is_bm25_order_over_whole_sessions():
    pool = synthetic_pool(n_sessions=14, seed=5)
    ranking = rerank(pool, BUILTIN["bm25_only"])
    lex_rank = {pool.chunks[i].memory_id: int(pool.ranks[i, LEX]) for i in range(pool.size)}
    pool_rows = set(ranking.candidates.tolist())
    sessions = sorted((lex_rank[pool.chunks[i].memory_id], pool.chunks[i].memory_id) for i in pool_rows
                      if pool.chunks[i].kind == "session")
    assert ranking.result_ids == [m for _, m in sessions[:4]]


def test_top_rank_bonus_worked_example():
    chunks = [chunk(f"u:S00{i}:P00") for i in range(1, 4)]
    pool = pool_of(chunks, lexical=[3.0, 2.0, None], cosine=[0.1, 0.3, 0.2])
    cfg = BUILTIN["top_rank_bonus"]
    fused, _ = FUSIONS["top_rank_bonus"](pool.ranks, pool.scores, live_mask(pool.ranks, cfg), cfg)
    # row 1: lexical #1 and vec_full #3; row 2: lexical #2, vec_full #1; row 3: vec_full #2
    assert fused == pytest.approx([1 / 16 + 1 / 18 + 0.05, 1 / 17 + 1 / 16 + 0.05, 1 / 17 + 0.02])
