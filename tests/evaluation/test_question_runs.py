"""One question across the kept runs of its question file (`core.evaluation.question_runs`)."""
from __future__ import annotations

from core.config import Config
from core.evaluation.history import Run
from core.evaluation.question_runs import across_runs, latest, of_file

METRIC = f"recall_all@{Config().top_k}"


def _run(run_id: int, when: float, digest: str, results: dict) -> Run:
    return Run(run_id, "eval", when, "store", "model", "q.json", digest, {c: {} for c in results}, {}, results)


def test_latest_and_across_runs_read_the_runs_of_one_file_only():
    a, b, other = (_run(1, 10.0, "A", {"x": {"q1": {METRIC: 0.0}, "q2": {METRIC: 1.0}}}),
                   _run(2, 20.0, "A", {"x": {"q1": {METRIC: 1.0}}, "y": {"q1": {METRIC: 0.0}, "q3": {METRIC: 0.5}}}),
                   _run(3, 30.0, "B", {"x": {"q1": {METRIC: 0.0}}}))
    runs = of_file([other, b, a], "A")
    assert [r.id for r in runs] == [1, 2]  # oldest first; the other file's run left out
    last = latest(runs, METRIC)
    assert (last["q1"].run_id, last["q1"].config, last["q1"].passes) == (2, "x", True)
    assert (last["q2"].run_id, last["q2"].value) == (1, 1.0)  # the newest run that scored it
    assert last["q3"].config == "y" and last["q3"].passes is False
    assert latest(runs, METRIC, prefer="y")["q1"].value == 0.0  # the config asked for, when the run ranked it
    assert [(v.run_id, v.config, v.value) for v in across_runs(runs, "q1", METRIC)] == [
        (1, "x", 0.0), (2, "x", 1.0), (2, "y", 0.0)]
    assert latest(runs, "mrr") == {} and across_runs(runs, "q1", "mrr") == []
