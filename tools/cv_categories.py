"""Per-category held-out figures of a `memsense tune --folds K --json` run (SPEC §12).

    memsense tune DATASET --store S --folds 5 --start sessions --analyzer english --json > cv.json
    PYTHONPATH=. python tools/cv_categories.py cv.json --store S --dataset DATASET --analyzer english

Each question is ranked by the config its fold tuned without it (the fold that held its user
out), as the cross-validated figure counts it; the table gives recall_any@4 and recall_all@4
per category beside the `memsense` preset on the same questions, the per-fold figures, and the
paired sign-flip test of recall_all@4 against `memsense`.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from core.config import from_dict
from core.config.presets import BUILTIN
from core.evaluation.evaluate import QuestionOutcome, evaluate_config, judged_only, recall_pools, summarise
from core.evaluation.judged import load_question_set
from core.evaluation.metrics import sign_flip_p
from core.recall.engine import Engine

K = 4
NAMES = {1: "1 multi-hop", 2: "2 temporal", 3: "3 open-domain", 4: "4 single-hop"}


def _pools(store: Path, questions: list, analyzer: str, depth: int) -> dict:
    engine = Engine(store, analyzer_name=analyzer)
    try:
        return recall_pools(engine.recall, questions, depth)
    finally:
        engine.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cv_json", type=Path)
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--dataset", type=Path, required=True)
    ap.add_argument("--analyzer", default="plain")
    args = ap.parse_args(argv)
    cv = json.loads(args.cv_json.read_text())
    questions = judged_only(load_question_set(args.dataset))
    pools = _pools(args.store, questions, args.analyzer, 512)  # deeper than any route_limit the tuner tries (384)
    plain = _pools(args.store, questions, "plain", 64)  # the memsense preset reads words as Memsense's route does
    held: list[QuestionOutcome] = []
    base: list[QuestionOutcome] = []
    print("| fold | held-out users | questions | train all@4 | held-out any@4 | held-out all@4 | held-out multi-hop all@4 |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for fold in cv["folds"]:
        users = set(fold["held_users"])
        qs = [q for q in questions if q.user_id in users]
        ev = evaluate_config(pools, qs, from_dict(fold["config"]), K, f"fold {fold['fold']}")
        held += ev.outcomes
        base += evaluate_config(plain, qs, BUILTIN["memsense"], K, "memsense").outcomes
        mh = ev.per_category.get(1, {}).get(f"recall_all@{K}", float("nan"))
        print(f"| {fold['fold']} | {', '.join(sorted(users))} | {len(qs)} | {fold['train']:.3f} | "
              f"{ev.overall[f'recall_any@{K}']:.3f} | {ev.overall[f'recall_all@{K}']:.3f} | {mh:.3f} |")
    tuned, ms = summarise("cross-validated", BUILTIN["memsense"], K, held), summarise("memsense", BUILTIN["memsense"], K, base)
    print(f"\n| held out | {' | '.join(f'{NAMES[c]} ({tuned.category_counts[c]})' for c in sorted(tuned.per_category))} | all |")
    print("|---|" + "---:|" * (len(tuned.per_category) + 1))
    for metric in (f"recall_any@{K}", f"recall_all@{K}"):
        for ev in (ms, tuned):
            cells = " | ".join(f"{ev.per_category[c][metric]:.3f}" for c in sorted(ev.per_category))
            print(f"| {ev.preset} {metric} | {cells} | {ev.overall[metric]:.3f} |")
    key = {o.question_id: o.metrics[f"recall_all@{K}"] for o in base}
    d = np.array([o.metrics[f"recall_all@{K}"] - key[o.question_id] for o in held])
    print(f"\ncross-validated minus memsense, recall_all@{K}: {d.mean():+.3f} ({(d > 0).sum()} won / {(d < 0).sum()} lost, "
          f"paired sign-flip p = {sign_flip_p(d):.4f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
