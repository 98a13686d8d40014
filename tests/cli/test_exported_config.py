"""An exported config reproduces the app's ranking in the CLI, for every LoCoMo dev question.

The app recalls a query once (`Engine.recall`, full route depth) and re-ranks the cached pool
with the settings on screen; File > Export settings writes them with `core.config.save`.
`memsense search --config FILE` must then return the same results in the same order with the
same scores for every question, and so must `memsense judge run --config FILE` (the evaluation
path, which recalls only as deep as the config needs). Route ties (every turn of a session
carries the session's facet vectors) are decided by id, never by float noise
(`core.recall.ties`), so all three agree exactly.

Needs ../shared (skips without it). Embeddings come from the user's embedding cache
(`$MEMSENSE_CACHE` or ~/.cache/memsense), so only a first run embeds the dataset.
"""
from __future__ import annotations

import json
from dataclasses import replace

import pytest

from core import config as config_io
from core.config import Config
from core.evaluation.evaluate import judged_only
from core.evaluation.judged import load_question_set, run_lines
from core.rank.rerank import rerank
from core.recall.embedding.embedder import default_cache_dir
from core.recall.engine import Engine, build_store
from tests.cli.test_bad_input_catalogue import run_cli
from tests.fixtures import shared_file

pytestmark = [pytest.mark.shared, pytest.mark.slow]

# Settings a user tuned in the app: every kind of knob moved off its default.
APP_SETTINGS = replace(Config(rrf_k=30.0, alpha=0.2, mmr_lambda=0.7, duplicate_threshold=0.9, top_k=6,
                              turn_support_cap=0.2), route_weights={"vec_full": 1.0, "vec_user": 0.5, "vec_asst": 0.5,
                                                                    "vec_next_user": 0.25, "lexical": 1.5,
                                                                    "facet_personal_info": 0.75,
                                                                    "facet_preferences": 0.75, "facet_events": 1.0})


@pytest.fixture(scope="module")
def locomo_store(tmp_path_factory):
    dataset = shared_file("datasets", "locomo", "locomo-dev.json")
    store = tmp_path_factory.mktemp("locomo") / "store"
    build_store(dataset, store, cache_dir=default_cache_dir())
    return dataset, store


def test_exported_settings_give_the_apps_ranking_in_the_cli_for_every_question(locomo_store, tmp_path):
    dataset, store = locomo_store
    questions = judged_only(load_question_set(dataset))
    exported = tmp_path / "app-settings.toml"
    config_io.save(APP_SETTINGS, exported)
    engine = Engine(store, cache_dir=default_cache_dir())
    try:  # the app: recall at full depth once, re-rank the cached pool with the settings on screen
        app = {q.question_id: rerank(engine.recall(q.user_id, q.text), APP_SETTINGS).results for q in questions}
    finally:
        engine.close()
    cli_args = ["--store", str(store), "--cache", str(default_cache_dir()), "--config", str(exported)]

    run_file = tmp_path / "cli.run"
    code, out, err, tb = run_cli(["judge", "run", str(dataset), *cli_args, "--level", "memory", "--out", str(run_file),
                                  "--quiet"])
    assert (code, tb) == (0, None), err
    expected = run_lines({q.question_id: [(r["memory_id"], r["final_score"]) for r in app[q.question_id]]
                          for q in questions}, exported.stem)
    assert run_file.read_text().splitlines() == expected

    differ = []
    for q in questions:  # `memsense search` per question, as a user would
        code, out, err, tb = run_cli(["search", *cli_args, "--user", q.user_id, q.text, "--json"])
        assert (code, tb) == (0, None), err
        cli = [(r["memory_id"], r["final_score"]) for r in json.loads(out)["results"]]
        if cli != [(r["memory_id"], r["final_score"]) for r in app[q.question_id]]:
            differ.append(q.question_id)
    assert len(questions) > 500
    assert not differ, f"memsense search ranks {len(differ)} questions differently from the app: {differ[:10]}"
