"""Render the Evaluation view offscreen on real figures and save it as a PNG (for the README).

    .venv/bin/memsense ingest core/demo/demo-conversations.jsonl --store /tmp/demo-store
    .venv/bin/python tools/screenshot_evaluation.py --store /tmp/demo-store \\
        --questions core/demo/demo-questions.json [--out resources/screenshots/evaluation-view.png]

The README's picture uses the demo data (the project's own), never LoCoMo's text.

Every built-in preset is evaluated on the questions (recall once, re-rank per preset); the
view shows memsense (A) against bm25_only (B) on recall_all@4.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--store", required=True)
    p.add_argument("--questions", required=True)
    p.add_argument("--out", default="resources/screenshots/evaluation-view.png")
    p.add_argument("--users", default="", help="only these users' questions (comma-separated)")
    args = p.parse_args()

    from PySide6.QtWidgets import QApplication

    from core.recall.engine import Engine
    from core.evaluation.evaluate import evaluate
    from core.evaluation.judged import load_question_set
    from core.config.presets import BUILTIN
    from memsense_gui import theme
    from memsense_gui.views.evaluation import EvaluationView

    app = QApplication.instance() or QApplication([])
    theme.apply(app, dark=False)
    questions = load_question_set(args.questions)
    users = {u for u in args.users.split(",") if u}
    if users:
        questions = [q for q in questions if q.user_id in users]
    engine = Engine(args.store)
    try:
        results = evaluate(lambda u, q, d: engine.recall(u, q, depth=d), questions, dict(BUILTIN))
    finally:
        engine.close()
    view = EvaluationView(presets=lambda: BUILTIN)
    view.resize(1500, 760)
    view.set_results(results)
    view.metric_combo.setCurrentText("recall_all@4")
    view.a_combo.setCurrentText("memsense")
    view.b_combo.setCurrentText("bm25_only")
    view.show()
    for _ in range(5):
        app.processEvents()
    view.metrics_table.resizeColumnsToContents()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    if not view.grab().save(args.out):
        print(f"could not write {args.out}", file=sys.stderr)
        return 1
    view.shutdown()
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
