"""Stress: the real window under cross-thread load, offscreen, on a synthetic engine.

Evaluation rounds on fresh questions (so every question is recalled through the engine
bridge), a superseded evaluation, the auto-tuner beside an evaluation, inspector queries
fired every few milliseconds (each superseding the last) and an ingest reporting progress
at every step, all at once. Before workers stopped touching Qt (memsense_gui/workers/runner.py)
the first round crashed the process within seconds ("double free or corruption").
"""
from __future__ import annotations

import json
import threading

from PySide6.QtCore import QTimer

from memsense_gui.window.evaluation import install_evaluation
from memsense_gui.workers import runner as runner_module
from tests.gui.fixtures import fake_builder

ROUNDS = 3
PER_USER = 200  # questions per user and round: 3 rounds x 2 users x 200 = 1,200 evaluation recalls
TUNE_PER_USER = 40
TUNE_TRIALS = 30
INGEST_STEPS = 25_000  # progress reports from the ingest thread


def _question_file(path, users, per_user: int, tag: str):
    items = [{"user": u, "question": f"{tag} question {i} about topic {i % 17} for {u}", "answer": "",
              "category": 1 + i % 4, "evidence": [f"D{1 + i % 10}:1"]} for u in users for i in range(per_user)]
    path.write_text(json.dumps({"questions": items}))
    return len(items)


def test_evaluation_autotune_queries_and_ingest_at_once_in_the_real_window(qtbot, make_window, tmp_path,
                                                                          monkeypatch):
    window = make_window(builder=fake_builder(steps=INGEST_STEPS))
    view = install_evaluation(window)
    users = window.ctx.users
    engine = window.engines[-1]

    box = runner_module.mailbox()
    posted = {"progress": 0, "finished": 0}
    post = box.post

    def counting_post(message):
        posted["progress" if message[2] == runner_module._PROGRESS else "finished"] += 1
        post(message)

    monkeypatch.setattr(box, "post", counting_post)
    shown: list[tuple[int, int]] = []
    view.slot._progressed = lambda done, total, what: (shown.append((done, total)), view._progressed(done, total, what))
    ingest_progress: list[int] = []

    queries = {"n": 0}

    def fire_query():
        queries["n"] += 1
        window.query_edit.setText(f"inspector query {queries['n']}")
        window.queries.run_query()

    ticker = QTimer()
    ticker.timeout.connect(fire_query)
    with qtbot.assertNotEmitted(window.ctx.error_reported, wait=0), \
            qtbot.assertNotEmitted(view.evaluation_failed, wait=0):
        ticker.start(10)
        build = window.stores.build_store(tmp_path / "data.jsonl", tmp_path / "built", "turn", open_after=False)
        build.progressed.connect(lambda done, total, what: ingest_progress.append(done))
        for r in range(ROUNDS):
            path = tmp_path / f"round{r}.json"
            n = _question_file(path, users, PER_USER, f"round {r}")
            view.source.set_path(path)
            with qtbot.waitSignal(view.evaluation_finished, timeout=120_000) as finished:
                first = view.start()
                if r == 0:
                    qtbot.waitUntil(lambda: len(engine.recalls) > 20, timeout=10_000)
                    view.start()  # newest wins: the first evaluation stops while waiting on the engine
                    assert first.cancelled
            results = finished.args[0]
            assert len(results) == len(window.ctx.presets.all()) + 1  # and the settings on screen
            assert all(res.questions == n for res in results)
        path = tmp_path / "tune.json"
        n = _question_file(path, users, TUNE_PER_USER, "tune")
        view.source.set_path(path)
        panel = view.autotune
        panel.trials_spin.setValue(TUNE_TRIALS)
        with qtbot.waitSignal(panel.tuning_finished, timeout=120_000) as tuned, \
                qtbot.waitSignal(view.evaluation_finished, timeout=120_000) as evaluated:
            panel.start()
            view.start()  # the evaluation and the auto-tuner recall the same questions side by side
        assert len(tuned.args[0].trials) == TUNE_TRIALS
        assert all(res.questions == n for res in evaluated.args[0])
        qtbot.waitUntil(lambda: build.done, timeout=120_000)
        ticker.stop()
        qtbot.waitUntil(lambda: not window.ctx.engine_runner.busy, timeout=30_000)

    evaluation_recalls = {q for u, q in engine.recalls if not q.startswith("inspector")}
    assert len(evaluation_recalls) == ROUNDS * len(users) * PER_USER + len(users) * TUNE_PER_USER
    assert len(engine.recalls) >= 1_000
    assert queries["n"] >= 100 and window.ctx.session.pool is not None
    assert len(engine.threads) == 1 and threading.get_ident() not in engine.threads  # the engine thread only
    assert posted["progress"] >= 20_000  # reports made on worker threads
    assert posted["finished"] >= queries["n"]  # every query's task ends (run, or cancelled unrun)
    # (the modal progress dialog's setValue runs a nested event loop, so slots connected after it
    # see reports interleaved; the runner's own order is checked in tests/gui/workers/test_runner.py)
    assert max(ingest_progress) == INGEST_STEPS - 1
    assert shown and all(0 <= done <= total for done, total in shown)
