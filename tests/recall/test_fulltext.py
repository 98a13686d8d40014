"""The Memsense-like lexical route beside PostgreSQL's own full text (a real PostgreSQL)."""
from __future__ import annotations

import json

import pytest

from core.recall.lexical.fulltext import STOP_WORDS, FullTextIndex, cover_density, lexemes, parse_query


def test_stop_words_are_the_list_postgresql_ships():
    commands = pytest.importorskip("pgserver._commands", reason="pgserver (PostgreSQL for the tests) is not "
                                   "installed: it has no wheel for this Python (pyproject.toml, [test])")
    shipped = (commands.POSTGRES_BIN_PATH.parent / "share" / "postgresql" / "tsearch_data" / "english.stop").read_text()
    assert STOP_WORDS == frozenset(shipped.split())


def test_query_reading_follows_websearch():
    assert parse_query("How many races has Ana run?") == ([["mani", "race", "ana", "run"]], set())
    assert parse_query("bees or hives -honey") == ([["bee"], ["hive"]], {"honey"})
    assert parse_query("the of and") == ([], set())  # only stop words: matches nothing, as in PostgreSQL


def test_positions_count_stop_words_and_parser_tokens():
    assert lexemes("The Fat Rats") == [("fat", 2), ("rat", 3)]
    assert [p for _, p in lexemes("see https://example.org/a/b.jpg well-known x")] == [1, 2, 3, 4, 5, 6, 7, 8]


def test_cover_density_is_ts_rank_cd_with_default_weights():
    # ts_rank_cd of these positions, read from PostgreSQL: 0.0022130499 (float4)
    assert cover_density({"ana": [13, 265, 282, 378], "job": [206]}, ["ana", "job"]) == pytest.approx(0.0022130499, rel=1e-6)
    assert cover_density({"fat": [2], "rat": [3]}, ["fat", "rat"]) == pytest.approx(0.1)
    assert cover_density({"fat": [2]}, ["fat", "rat"]) == 0.0


def test_every_query_word_is_required():
    index = FullTextIndex(["Ana keeps bees in a hive", "bees everywhere", "a hive of activity"])
    assert (index.scores("bees hive") > 0).tolist() == [True, False, False]
    assert (index.scores("bees or hive") > 0).tolist() == [True, True, True]


@pytest.mark.slow
def test_close_to_postgres_on_the_demo_data(memsense_pg):
    from core.recall.engine import DEMO_QUESTIONS
    from core.recall.memsense.database import PostgresStore
    from tools.lexical_closeness import measure

    asked = [(q["user"], q["question"]) for q in json.loads(DEMO_QUESTIONS.read_text())["questions"]]
    store = PostgresStore(memsense_pg.dsn)
    try:
        figures = measure(store, asked)
    finally:
        store.close()
    assert figures["postgres_matches_some_chunk"] > 0
    assert figures["same_matched_chunks"] == 1.0
    assert figures["same_top10_order"] >= 0.9


@pytest.mark.slow
def test_a_store_folder_can_rank_its_lexical_route_like_memsense(demo_store, model_cache):
    import numpy as np

    from core.errors import MemsenseError
    from core.records import ROUTES
    from core.recall.engine import Engine

    engine = Engine(demo_store, cache_dir=model_cache, lexical="memsense")
    try:
        pool = engine.recall("demo-ana", "bees hive")
        j = ROUTES.index("lexical")
        hits = np.flatnonzero(pool.ranks[:, j] > 0)
        assert len(hits) and all("bee" in pool.chunks[i].lexical_text.lower() and "hive" in pool.chunks[i].lexical_text.lower()
                                 for i in hits)
        assert not (engine.recall("demo-ana", "bees zeppelin").ranks[:, j] > 0).any()
    finally:
        engine.close()
    with pytest.raises(MemsenseError, match="unknown lexical mode 'tfidf'"):
        Engine(demo_store, cache_dir=model_cache, lexical="tfidf")
