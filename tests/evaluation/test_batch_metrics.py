"""The metrics of every question at once (`core.evaluation.batch_metrics`) against
`question_metrics`, question by question, on random selections with repeats and padding."""
from __future__ import annotations

import numpy as np
import pytest

from core.evaluation.batch_metrics import Grades, mean
from core.evaluation.metrics import question_metrics


@pytest.mark.parametrize("seed", range(3))
def test_every_metric_equals_question_metrics(seed):
    rng = np.random.default_rng(seed)
    n, width = 300, 9
    qrels = [{int(d): int(rng.integers(0, 4)) for d in rng.choice(12, size=rng.integers(0, 5), replace=False)}
             for _ in range(n)]
    count = rng.integers(0, width + 1, size=n)
    sessions = rng.integers(0, 14, size=(n, width))  # repeats happen: a session counts at its first position
    sessions[np.arange(width)[None, :] >= count[:, None]] = -1
    grades = Grades(qrels)
    for k in (1, 3, 4, 10):
        expected = [question_metrics(sessions[q, : count[q]].tolist(), qrels[q], k) for q in range(n)]
        for name in expected[0]:
            got = grades.values(name, k, sessions, count)
            assert got.tolist() == [e[name] for e in expected], (name, k)


def test_no_judgements_and_the_mean():
    grades = Grades([{}, {}])
    sessions = np.array([[1, 2], [-1, -1]])
    assert grades.values("ndcg@4", 4, sessions, np.array([2, 0])).tolist() == [0.0, 0.0]
    assert grades.values("recall_all@4", 4, sessions, np.array([2, 0])).tolist() == [0.0, 0.0]
    values = np.array([0.1, 0.2, 0.3])
    total = 0.0
    for v in values.tolist():
        total += v
    assert mean(values) == total / 3
    assert np.isnan(mean(np.zeros(0)))
