"""Issue 39, class 7: a live Memsense failing in the middle of an evaluation (the app evaluates a
connected database through `core.evaluation`; the CLI only searches and copies it). The database
goes away after a few questions (every session of it is ended and it takes no new one, as when
its server stops), a read waits on a lock past the statement_timeout, and a route's column is
missing (an older Memsense): each is one line, and no figures come out, so none is shown as whole.

The database is a copy of the test's Memsense (fixture `memsense_pg`); the shared one is left alone.
"""
from __future__ import annotations

import threading

import pytest

from core.errors import MemsenseError
from tests.cli.test_live_faults import SECRET, _copy_of

pytestmark = pytest.mark.slow

ROOT_QUESTIONS = __import__("pathlib").Path(__file__).resolve().parents[2] / "core" / "demo" / "demo-questions.json"


def _evaluate(dsn: str, embedder: str, after_recall=None):
    """Recall and score the demo questions of demo-ana on a live Memsense, as the app does."""
    from core.config.presets import builtin
    from core.evaluation.evaluate import evaluate_presets
    from core.evaluation.judged import load_question_set
    from core.evaluation.question_set import QuestionSetKey, recall_question_set
    from core.recall.memsense.engine import PostgresEngine

    questions = [q for q in load_question_set(ROOT_QUESTIONS) if q.user_id == "demo-ana"]
    engine = PostgresEngine(dsn, embedder=embedder)
    done = []

    def recall(user: str, text: str, depth: int):
        pool = engine.recall(user, text, depth)
        done.append(text)
        if after_recall is not None:
            after_recall(len(done))
        return pool

    try:
        presets = {"memsense": builtin("memsense")}
        pools = recall_question_set(recall, QuestionSetKey("live", "demo", ("demo-ana",)), questions, 200).pools
        return evaluate_presets(pools, questions, presets), len(done)
    finally:
        engine.close()


def _admin(memsense_pg, database: str, *statements: str) -> None:
    import psycopg

    with psycopg.connect(memsense_pg.server.dsn(), autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement.format(db=database))


def _one_line(exc: MemsenseError) -> str:
    text = str(exc)
    assert "\n" not in text and "Traceback" not in text and SECRET not in text, text
    return text


def test_the_database_going_away_mid_evaluation_is_one_line_and_no_figures(memsense_pg, embed_endpoint):
    dsn = _copy_of(memsense_pg, "going_away")
    dsn = dsn.replace("postgres@", f"postgres:{SECRET}@")

    def stop_after_three(n: int) -> None:
        if n == 3:  # as a server stopping: every session ended, no new one taken
            _admin(memsense_pg, "going_away", "ALTER DATABASE {db} ALLOW_CONNECTIONS false",
                   "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{db}'")

    try:
        with pytest.raises(MemsenseError) as caught:
            _evaluate(dsn, embed_endpoint.url + "/embed", stop_after_three)
    finally:
        _admin(memsense_pg, "going_away", "ALTER DATABASE {db} ALLOW_CONNECTIONS true")
    line = _one_line(caught.value)
    assert "Memsense database" in line and "going_away" in line, line
    assert "was lost" in line or "no PostgreSQL answers" in line or "refused" in line or "not" in line, line


def test_a_read_held_past_the_statement_timeout_mid_evaluation_is_one_line(memsense_pg, embed_endpoint, monkeypatch):
    import psycopg

    from core.recall.memsense import session as pg_session

    dsn = _copy_of(memsense_pg, "held_lock")
    monkeypatch.setattr(pg_session, "STATEMENT_TIMEOUT_MS", 500)
    holder = psycopg.connect(dsn)  # another process altering the table: reads wait on its lock
    release = threading.Event()

    def lock_after_two(n: int) -> None:
        if n == 2:
            holder.execute("LOCK TABLE memory_chunks IN ACCESS EXCLUSIVE MODE")

    try:
        with pytest.raises(MemsenseError) as caught:
            _evaluate(dsn, embed_endpoint.url + "/embed", lock_after_two)
    finally:
        release.set()
        holder.rollback()
        holder.close()
    line = _one_line(caught.value)
    assert "did not finish a read within 0.5 s (statement_timeout)" in line, line


def test_an_older_schema_fails_the_evaluation_before_any_figure(memsense_pg, embed_endpoint):
    dsn = _copy_of(memsense_pg, "older_schema_eval", "ALTER TABLE memory_chunk_embeddings DROP COLUMN embedding_next_user")
    with pytest.raises(MemsenseError) as caught:
        _evaluate(dsn, embed_endpoint.url + "/embed")
    line = _one_line(caught.value)
    assert "has no column embedding_next_user that this reproduction reads" in line, line
    assert "another Memsense version" in line
