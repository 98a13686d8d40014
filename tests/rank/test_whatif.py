""""What would it take": every change it states is the outcome of a real re-rank, the
smallest one found, and (on the demo store) true when applied through `--config`."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest

from core import config as config_io
from core.cli.main import main as cli
from core.config import Config
from core.evaluation.judged import load_question_set
from core.rank.rerank import rerank
from core.rank.synthetic import synthetic_pool
from core.rank.whatif import WHATIF_KNOBS, apply_change, knob_value, what_would_change
from core.recall.engine import DEMO_QUESTIONS

QUERIES_PER_USER = 2


def _not_returned_sessions(pool, cfg):
    ids = rerank(pool, cfg).result_ids
    return [c.memory_id for c in pool.chunks if c.kind == "session" and c.memory_id not in ids]


@pytest.mark.parametrize("seed", [1, 2])
def test_changes_are_real_and_smallest_on_synthetic_pools(seed):
    pool, cfg = synthetic_pool(n_sessions=10, turns_per_session=3, seed=seed), Config()
    base = rerank(pool, cfg).result_ids
    spans = {k.export: k.high - k.low for k in WHATIF_KNOBS}
    targets = _not_returned_sessions(pool, cfg)[:3]
    assert targets
    for memory_id in targets:
        answer = what_would_change(pool, cfg, memory_id)
        assert answer.changes, answer.note
        for c in answer.changes:
            assert c.current == knob_value(cfg, c.knob) and c.value != c.current
            after = rerank(pool, apply_change(cfg, c.knob, c.value)).result_ids
            assert after.index(memory_id) + 1 == c.rank
            assert c.pushes_out == tuple(m for m in base if m not in after)
            if c.knob == "topK":
                continue
            # a step a tenth of the way back towards the current value no longer returns it
            # (the boundary was bisected to well under that)
            back = c.value - (c.value - c.current) * 0.1
            if abs(back - c.current) > 1e-3 * spans[c.knob]:
                nearer = rerank(pool, apply_change(cfg, c.knob, back)).result_ids
                assert memory_id not in nearer or abs(back - c.current) < abs(c.value - c.current)


def test_returned_absent_and_turn_chunks_say_why():
    pool, cfg = synthetic_pool(n_sessions=6, turns_per_session=2, seed=3), Config()
    ranking = rerank(pool, cfg)
    picked = ranking.result_ids[0]
    assert what_would_change(pool, cfg, picked).note == "it is returned already"
    assert "no route recalled it" in what_would_change(pool, cfg, "synth:S999:P0").note
    turn = next(c.memory_id for c in pool.chunks if c.kind == "turn")
    answer = what_would_change(pool, cfg, turn)
    assert not answer.changes and "session-first" in answer.note


def test_outranked_text_agrees_with_the_numbers():
    """A row that lost on redundancy: the text names its real place and the real margin."""
    for seed in range(6):
        pool = synthetic_pool(n_sessions=10, turns_per_session=3, seed=seed)
        for cfg in (Config(), replace(Config(), top_k=5, mmr_lambda=0.5)):
            ranking = rerank(pool, cfg)
            picks = [ranking.rows[p] for p in ranking.selection.order]
            for pos, row in enumerate(ranking.rows):
                fate = ranking.fate(pool.chunks[row.index].memory_id)
                if fate.status != "outranked":
                    continue
                assert f"is #{pos + 1} of {len(ranking.rows)}" in fate.reason
                above = sum(p.final_score < row.final_score for p in picks)
                assert (f"above {above} of the {len(picks)} results" in fate.reason) == (above > 0)
                assert ("below all" in fate.reason) == (above == 0)
                assert "only top_k" not in fate.reason


@pytest.mark.slow
def test_every_stated_change_is_true_through_config(tmp_path, capsys, demo_engine, demo_store, model_cache):
    questions = load_question_set(DEMO_QUESTIONS)
    stated = []
    for user in demo_engine.users():
        for q in [q for q in questions if q.user_id == user][:QUERIES_PER_USER]:
            pool = demo_engine.recall(user, q.text)
            base = rerank(pool, Config())
            for chunk in pool.chunks:
                if chunk.memory_id in base.result_ids:
                    continue
                answer = what_would_change(pool, Config(), chunk.memory_id, base=base)
                if chunk.kind == "turn":
                    assert not answer.changes and "session-first" in answer.note
                    continue
                assert answer.changes or answer.note
                stated += [(user, q.text, chunk.memory_id, base.result_ids, c) for c in answer.changes]
    assert len({c.knob for *_, c in stated}) >= 5
    demo_engine.close()  # the CLI opens the store itself
    try:
        for n, (user, query, memory_id, before, change) in enumerate(stated):
            path = tmp_path / f"change{n}.toml"
            config_io.save(apply_change(Config(), change.knob, change.value), path)
            code = cli(["search", "--store", str(demo_store), "--cache", str(model_cache), "--user", user, query,
                        "--config", str(path), "--json"])
            results = [r["memory_id"] for r in json.loads(capsys.readouterr().out)["results"]]
            assert code == 0
            assert results.index(memory_id) + 1 == change.rank, change
            assert list(change.pushes_out) == [m for m in before if m not in results], change
    finally:
        demo_engine.__init__(demo_store, cache_dir=model_cache)


@pytest.mark.slow
def test_explain_json_lists_what_would_change(capsys, demo_engine, demo_store, model_cache):
    user = "demo-ana"
    query = load_question_set(DEMO_QUESTIONS)[0].text
    pool = demo_engine.recall(user, query)
    target = _not_returned_sessions(pool, Config())[0]
    demo_engine.close()
    try:
        code = cli(["explain", "--store", str(demo_store), "--cache", str(model_cache), "--user", user, query,
                    "--memory", target, "--json"])
        record = json.loads(capsys.readouterr().out)
    finally:
        demo_engine.__init__(demo_store, cache_dir=model_cache)
    assert code == 0 and record["status"] != "selected"
    assert record["what_would_change"] and {"knob", "value", "rank", "pushes_out"} <= set(record["what_would_change"][0])
    assert record["beaten_by"] and record["beaten_by"][-1]["rank"] == 4
