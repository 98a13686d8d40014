"""The session routes (SPEC §15) and their analyzers, against plain references."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from core.cli.bench_scale import DIM, RandomEmbedder, synthetic_user
from core.config import Config
from core.config.memsense_options import memsense_export
from core.config.presets import only
from core.rank.explain import fate_of
from core.rank.rerank import rerank
from core.recall.backends import open_store
from core.recall.engine import Engine
from core.recall.lexical.analyzer import ANALYZERS, AnalyzedIndex
from core.recall.lexical.bm25 import LexicalIndex
from core.recall.sessions import SessionIndex, session_document
from core.records import ROUTES

DOCS = ["The cats were running quickly to the houses", "A house is where the cat runs",
        "Running runners ran; the end of the story", "nothing here at all", "", "cats CATS cat's houses"]


@pytest.mark.parametrize("name", sorted(ANALYZERS))
@pytest.mark.parametrize("query", ["cat running to houses the", "the", "runner's end", "zzz"])
def test_an_analyzed_index_is_bm25_over_the_analyzed_tokens(name, query):
    how = ANALYZERS[name]
    ours = AnalyzedIndex(LexicalIndex(DOCS), how).scores(query)
    reference = BM25Okapi([how.tokens(d) for d in DOCS]).get_scores(how.tokens(query))
    assert np.allclose(ours, reference, rtol=1e-12, atol=1e-12)


def test_english_drops_stop_words_and_stems():
    assert ANALYZERS["english"].tokens("The runners were running to the houses") == ["runner", "run", "hous"]
    assert ANALYZERS["plain"].tokens("The runners") == ["the", "runners"]


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    location = tmp_path_factory.mktemp("sessions") / "store"
    chunks, vectors = synthetic_user("u", 120, np.random.default_rng(5))
    store = open_store(location, create=True)
    store.write_user("u", chunks, vectors, RandomEmbedder(DIM).key, DIM)
    store.close()
    e = Engine(location, embedder=RandomEmbedder(DIM))
    yield e
    e.close()


def test_a_session_routes_rank_is_its_sessions_rank_given_to_its_session_chunks(engine):
    chunks = list(engine.chunks("u"))
    sessions = sorted({c.session_id for c in chunks})
    docs = [session_document([c for c in chunks if c.session_id == s and c.kind == "session"]) for s in sessions]
    how = ANALYZERS["english"]
    query = " ".join(chunks[13].user_text.split()[:3])
    expected = BM25Okapi([how.tokens(d) for d in docs]).get_scores(how.tokens(query))
    order = sorted((i for i in range(len(sessions)) if expected[i] > 0), key=lambda i: (-expected[i], i))
    pool = engine.recall("u", query, 64)
    j = ROUTES.index("session_lexical")
    hit = pool.ranks[:, j] > 0
    assert all(pool.chunks[i].kind == "session" for i in np.flatnonzero(hit))
    got = {pool.chunks[i].session_id: (int(pool.ranks[i, j]), float(pool.scores[i, j])) for i in np.flatnonzero(hit)}
    assert {s: r for s, (r, _) in got.items()} == {sessions[i]: n + 1 for n, i in enumerate(order)}
    assert all(score == pytest.approx(expected[sessions.index(s)]) for s, (_, score) in got.items())


def test_session_dense_is_the_best_turns_cosine(engine):
    pool = engine.recall("u", "w1 w2", 64)
    ix = engine._index("u")
    q = RandomEmbedder(DIM).encode(["w1 w2"])[0]
    j = ROUTES.index("session_dense")
    for i in np.flatnonzero(pool.ranks[:, j] > 0)[:5].tolist():
        chunk = pool.chunks[i]
        turns = [r for r, c in enumerate(ix.chunks) if c.session_id == chunk.session_id and c.kind == "turn"]
        assert pool.scores[i, j] == pytest.approx(float((ix.vec_full[turns] @ q).max()), abs=1e-5)


def test_memsense_settings_ignore_the_session_routes(engine):
    pool = engine.recall("u", "w3 w4 w5", 64)
    off = replace(pool, ranks=np.where(np.isin(np.arange(len(ROUTES)), [8, 9]), 0, pool.ranks))
    assert rerank(pool, Config()).result_ids == rerank(off, Config()).result_ids
    assert memsense_export(Config())["sameAsMemsense"]  # nothing beyond Memsense in its own settings


def test_selection_by_session_returns_distinct_sessions_and_says_why_not(engine):
    pool = engine.recall("u", "w3 w4 w5", 64)
    cfg = replace(Config(route_weights=only(vec_full=1.0, lexical=1.0)), session_first=False, top_k=8,
                  mmr_lambda=1.0, duplicate_threshold=1.0, distinct_sessions=True)
    ranking = rerank(pool, cfg)
    sessions = [pool.chunks[r.index].session_id for r in ranking.selected_rows]
    assert len(sessions) == len(set(sessions)) == 8
    plain = rerank(pool, replace(cfg, distinct_sessions=False))
    firsts: dict[str, int] = {}
    for r in plain.rows:  # final-score order: the first row of each session
        firsts.setdefault(pool.chunks[r.index].session_id, r.index)
    assert [r.index for r in ranking.selected_rows] == list(firsts.values())[:8]
    skipped = next(iter(ranking.selection.same_session))
    fate = fate_of(ranking, pool.ids[ranking.rows[skipped].index])
    assert fate.status == "same_session" and fate.reason.startswith("skipped: same session as")


def test_export_says_the_session_steps_need_new_code_in_memsense():
    cfg = replace(Config().with_weights(session_lexical=2.0), distinct_sessions=True)
    needs = {x["name"]: x["how"] for x in memsense_export(cfg)["needsMemsenseChange"]}
    assert "routeWeights.session_lexical" in needs and "distinctSessions" in needs
    assert all("new code" in needs[n] for n in ("routeWeights.session_lexical", "distinctSessions"))


def test_an_unknown_analyzer_is_one_error_line(tmp_path):
    from core.errors import MemsenseError

    with pytest.raises(MemsenseError, match="unknown analyzer 'porter'; choose plain, stop, stem, english"):
        Engine(tmp_path, embedder=RandomEmbedder(DIM), session_analyzer="porter")


def test_stemming_runs_in_c():
    """snowballstemmer hands English to PyStemmer's C stemmers when they are installed (a dependency):
    the session routes stem every session of a user at its first recall, 28x faster than in Python."""
    import snowballstemmer

    stemmer = snowballstemmer.stemmer("english")
    assert not type(stemmer).__module__.startswith("snowballstemmer"), type(stemmer)
    assert stemmer.stemWord("running") == "run"


def test_a_sessions_chunks_all_take_its_rank_and_score_however_many_it_has():
    """A session split in several session chunks gives each of them the session's place and
    score; a session of one chunk, that one (the arrays go straight through)."""
    one_each = SessionIndex(np.arange(3), [np.array([4]), np.array([2]), np.array([7])], None, np.zeros(0, np.int64),
                            np.zeros(3, np.int64), np.zeros((0, 1), np.float32), "max")
    split = replace(one_each, rows=[np.array([0, 1]), np.array([2]), np.array([3, 4, 5])])
    scores = np.array([0.5, 0.0, 0.9])
    assert [a.tolist() for a in one_each.hits(scores, 3, lexical=True)] == [[7, 4], [0.9, 0.5], [1, 2]]
    assert [a.tolist() for a in split.hits(scores, 2, lexical=True)] == [[3, 4, 5, 0, 1], [0.9] * 3 + [0.5] * 2,
                                                                          [1, 1, 1, 2, 2]]
    rows, values, ranks = split.hits(scores, 3, lexical=False)  # a dense 0 is a hit
    assert (rows.tolist(), ranks.tolist()) == ([3, 4, 5, 0, 1, 2], [1, 1, 1, 2, 2, 3])
    assert rows.dtype == np.int64 and values.dtype == np.float64 and ranks.dtype == np.int32
