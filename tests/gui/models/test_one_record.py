"""One record, one set of names (issue 17 part 5): every number labelled the same in Results,
Candidate pool, Explain, `memsense search --json` and `memsense explain --json` is the same
quantity, for every candidate of several demo queries, with turn support on."""
from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import replace
from typing import Any

import pytest
from PySide6.QtCore import Qt

from core import config as config_io
from core.cli.main import main as cli
from core.config import Config
from core.evaluation.judged import load_question_set
from core.rank.glossary import GLOSSARY, ROUTE_GLOSSARY, TERMS
from core.rank.record import CandidateRecord
from core.rank.rerank import rerank
from core.recall.engine import DEMO_QUESTIONS
from core.search import search
from memsense_gui.models.format import fmt
from memsense_gui.models.pool import PoolModel
from memsense_gui.models.results import ResultsModel
from memsense_gui.models.table import ID_ROLE, RAW_ROLE
from memsense_gui.views.explain import ExplainPanel, explain_record

DISPLAY = Qt.ItemDataRole.DisplayRole
CONFIGS = {
    "memsense": Config(),  # the memsense preset: session-first, turn support cap 0.12, factor 0.6
    "turns decide": replace(Config(), turn_support_cap=1.0, turn_support_factor=2.0),
}
"""Turn support on in both. Under the memsense knobs every demo session gets the capped 0.12, so
the order is that of no turn support; in the second it varies with the best turn and changes the
order (checked below)."""
QUESTIONS_PER_USER = 1

Seen = dict[str, dict[str, list[tuple[str, Any]]]]  # memory id -> label -> [(surface, value)]


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _note(seen: Seen, surface: str, memory_id: str, label: str, value: Any) -> None:
    seen[memory_id][label].append((surface, _plain(value)))


def _table(seen: Seen, surface: str, model: ResultsModel | PoolModel) -> set[str]:
    """Every cell of a column that shows a term, by its header; its text must be the value's."""
    ids = set()
    for r in range(model.rowCount()):
        mid = model.index(r, 0).data(ID_ROLE)
        ids.add(mid)
        for c in model.TERMS:
            label = model.headerData(c, Qt.Orientation.Horizontal)
            raw = model.index(r, c).data(RAW_ROLE)
            _note(seen, surface, mid, label, raw)
            if isinstance(raw, float):
                assert model.index(r, c).data(DISPLAY) == fmt(raw), (surface, label)
    return ids


def _tree(seen: Seen, surface: str, memory_id: str, model) -> None:
    """The Explain panel's labelled fields: the record's terms and each route hit's terms."""
    for r in range(model.rowCount()):
        key_index = model.index(r, 0)
        key, label = key_index.data(RAW_ROLE), key_index.data(DISPLAY)
        if key == "route_hits":
            for h in range(model.rowCount(key_index)):
                route_index = model.index(h, 0, key_index)
                for k in range(model.rowCount(route_index)):
                    field = model.index(k, 0, route_index).data(DISPLAY)
                    value = model.index(k, 1, route_index).data(RAW_ROLE)
                    _note(seen, surface, memory_id, f"{route_index.data(RAW_ROLE)}.{field}", value)
        elif key in TERMS:
            _note(seen, surface, memory_id, label, model.index(r, 1).data(RAW_ROLE))


def _json(seen: Seen, surface: str, memory_id: str, record: dict[str, Any]) -> None:
    for key, value in record.items():
        if key == "route_hits":
            for route, hit in value.items():
                for k, v in hit.items():
                    _note(seen, surface, memory_id, f"{route}.{_route_label(k)}", v)
        elif key in TERMS:
            _note(seen, surface, memory_id, TERMS[key].label, value)


def _route_label(key: str) -> str:
    return next(t.label for t in ROUTE_GLOSSARY if t.key == key)


def _memsense_result(seen: Seen, surface: str, result: dict[str, Any]) -> None:
    """Memsense's result fields (§6) that carry a term's key hold that term's value."""
    mid = result["memory_id"]

    def walk(obj: dict[str, Any]) -> None:
        for key, value in obj.items():
            if key == "route_hits":
                _json(seen, surface, mid, {"route_hits": value})
            elif isinstance(value, dict):
                walk(value)
            elif key in TERMS and not isinstance(value, list) or key in ("routes", "best_turn_routes"):
                _note(seen, surface, mid, TERMS[key].label, value)

    walk(result)


def _run_cli(capsys, *args: str) -> dict[str, Any]:
    code = cli(list(args))
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


@pytest.mark.slow
def test_every_label_means_one_number_everywhere(qtbot, capsys, tmp_path, demo_engine, demo_store, model_cache):
    questions = load_question_set(DEMO_QUESTIONS)
    per_user: dict[str, list[str]] = defaultdict(list)
    for q in questions:
        if len(per_user[q.user_id]) < QUESTIONS_PER_USER:
            per_user[q.user_id].append(q.text)
    cases = [(name, user, text) for name in CONFIGS for user, texts in sorted(per_user.items()) for text in texts]
    assert len(cases) >= 6

    gui: dict[tuple[str, str, str], tuple[Seen, set[str], list[str]]] = {}
    order_changed = False
    for name, user, text in cases:
        cfg = CONFIGS[name]
        ranking = search(demo_engine, user, text, cfg)
        assert ranking.session_first and any(r.turn_support > 0 for r in ranking.rows)
        without = rerank(ranking.pool, replace(cfg, turn_support_cap=0.0)).result_ids
        order_changed |= without != ranking.result_ids
        seen: Seen = defaultdict(lambda: defaultdict(list))
        results, pool = ResultsModel(), PoolModel()
        results.set_ranking(ranking)
        pool.set_ranking(ranking)
        result_ids = _table(seen, "Results", results)
        pool_ids = _table(seen, "Candidate pool", pool)
        assert result_ids == set(ranking.result_ids) and result_ids <= pool_ids
        panel = ExplainPanel()
        qtbot.addWidget(panel)
        for mid in pool_ids:
            panel.show_record(explain_record(ranking, mid))
            _tree(seen, "Explain", mid, panel.model)
        for mid in pool_ids:  # the record's own arithmetic (§3, §4)
            rec: CandidateRecord = ranking.record(mid)
            if rec.final_score is not None:
                assert rec.final_score == round(rec.rrf_score + cfg.alpha * rec.memory_score, 6)
                assert rec.rrf_score == pytest.approx(rec.session_rrf_score + rec.turn_support, abs=1e-15)
        gui[(name, user, text)] = (seen, pool_ids, ranking.result_ids)
    assert order_changed, "no query where turn support changes the order: the second config tests nothing new"

    demo_engine.close()  # the CLI opens the store itself
    try:
        for name, user, text in cases:
            seen, pool_ids, result_ids = gui[(name, user, text)]
            path = tmp_path / f"{name.replace(' ', '-')}.toml"
            config_io.save(CONFIGS[name], path)
            common = ["--store", str(demo_store), "--cache", str(model_cache), "--user", user, text, "--config", str(path)]
            found = _run_cli(capsys, "search", *common, "--json")
            assert [r["memory_id"] for r in found["results"]] == result_ids
            assert {p["memory_id"] for p in found["pool"]} == pool_ids
            for entry in found["pool"]:
                assert entry["fate"] == entry["status"]
                _json(seen, "search --json pool", entry["memory_id"], entry)
            for result in found["results"]:
                _memsense_result(seen, "search --json results", result)
            for mid in sorted(pool_ids):
                _json(seen, "explain --json", mid, _run_cli(capsys, "explain", *common, "--memory", mid, "--json"))
            _agree(seen, pool_ids)
    finally:
        demo_engine.__init__(demo_store, cache_dir=model_cache)


def _agree(seen: Seen, pool_ids: set[str]) -> None:
    surfaces = {"Candidate pool", "Explain", "search --json pool", "explain --json"}
    for mid in pool_ids:
        labels = seen[mid]
        for term in ("Final", "RRF + turn", "Own RRF", "Turn support", "Memory", "Fate", "Pool #"):
            assert surfaces <= {s for s, _ in labels[term]}, (mid, term, labels[term])
        for label, values in labels.items():
            distinct = {json.dumps(v) for _, v in values}
            assert len(distinct) == 1, (mid, label, values)


def test_the_glossary_names_the_record():
    assert [f for f in CandidateRecord.__dataclass_fields__] == [t.key for t in GLOSSARY]
    labels = [t.label for t in GLOSSARY]
    assert len(set(labels)) == len(labels) and "RRF" not in labels
    for model in (ResultsModel, PoolModel):
        for col, key in model.TERMS.items():
            assert model.HEADERS[col] == TERMS[key].label and TERMS[key].formula in model.HEADER_TIPS[col]
