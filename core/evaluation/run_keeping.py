"""The run history's one way in: keep a run (its configs, per-question metrics, returned ids and categories).

Only the workspace (`core.evaluation.workspace.Workspace.keep`) calls it, for the command line and the app
alike, so a run is written one way, and a history that cannot be written is a note beside the run's figures
(an import-linter contract in pyproject.toml keeps `core.cli` and `memsense_gui` from calling it directly).
Reading, naming and comparing kept runs is `core.evaluation.history` and `core.evaluation.experiments`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from core.config import Config
from core.evaluation.history import History, history_path, model_key, store_label


def per_question(evaluations: Mapping[str, Any]) -> dict[str, Mapping[str, Mapping[str, float]]]:
    """Config name -> question id -> metric -> value, from a `PresetEvaluation` (anything with
    `outcomes`) or such a mapping already, per config."""
    return {name: ({o.question_id: dict(o.metrics) for o in ev.outcomes} if hasattr(ev, "outcomes") else ev)
            for name, ev in evaluations.items()}


def keep_run(store: str | Path, kind: str, dataset: str | Path, configs: Mapping[str, Config],
             evaluations: Mapping[str, Any], summary: Mapping[str, Any], model: str | None = None,
             into: History | None = None) -> int:
    """Keep one run in the history of `store` (`history_path`), or `into` that history (a team's
    shared runs, `core.evaluation.shared_runs.open_history`), which it closes; its id. `model`: the
    model's identity when known, else read from the store (`model_key`)."""
    model = model if model is not None else model_key(store)  # first: a location that is no store leaves no file
    with into if into is not None else History(history_path(store)) as history:
        return history.add(kind, store_label(store), model, str(dataset), configs, summary, per_question(evaluations),
                           *returned_and_categories(evaluations))


def returned_and_categories(evaluations: Mapping[str, Any]) -> tuple[dict[str, dict[str, list[str]]], dict[str, int]]:
    """Config name -> question id -> returned memory ids, and question id -> category, from the evaluations
    that carry their outcomes (`PresetEvaluation`); a mapping of metrics alone gives none."""
    returned: dict[str, dict[str, list[str]]] = {}
    categories: dict[str, int] = {}
    for name, ev in evaluations.items():
        outcomes = getattr(ev, "outcomes", None)
        if outcomes is None:
            continue
        returned[name] = {o.question_id: list(o.result_ids) for o in outcomes}
        categories.update({o.question_id: int(o.category) for o in outcomes})
    return returned, categories
