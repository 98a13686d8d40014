"""Whole tables as CSV: every row of the data, snippet after the rank, atomic writes."""
from __future__ import annotations

import csv

import pytest

from core.config import Config
from core.errors import MemsenseError
from core.evaluation.evaluate import evaluate_config
from core.evaluation.tables import evaluation_table, matrix_table, pool_table, write_csv
from core.rank.record import pool_order
from core.rank.rerank import rerank
from core.rank.synthetic import synthetic_pool
from core.records import ROUTES, Question


def test_pool_and_matrix_hold_every_row(tmp_path):
    ranking = rerank(synthetic_pool(n_sessions=12, turns_per_session=4, seed=2), Config())
    header, rows = pool_table(ranking)
    assert header[:3] == ("pool_rank", "snippet", "memory_id")
    assert [r[2] for r in rows] == [ranking.pool.chunks[i].memory_id for i in pool_order(ranking)]  # the pool table's rows
    assert {r[-2] for r in rows} >= {"selected"}
    header, rows = matrix_table(ranking)
    found = int((ranking.pool.ranks > 0).any(axis=1).sum())
    assert len(rows) == found > len(ranking.candidates) and header[3:] == ROUTES
    path = write_csv((header, rows), tmp_path / "matrix.csv")
    with path.open(encoding="utf-8") as fh:
        back = list(csv.reader(fh))
    assert back[0] == list(header) and len(back) == found + 1


def test_evaluation_table_has_categories_and_rejects_other_suffixes(tmp_path):
    pools = {f"q{i}": synthetic_pool(n_sessions=6, turns_per_session=1, seed=i) for i in range(4)}
    questions = [Question(f"q{i}", "synth", "q", "", 1 + i % 2, (1 + i,)) for i in range(4)]
    ev = evaluate_config(pools, questions, Config(), name="memsense")
    header, rows = evaluation_table([ev])
    assert rows[0][:2] == ("memsense", 4) and "recall_all@4 [2 temporal]" in header
    assert rows[0][header.index("recall_all@4")] == ev.overall["recall_all@4"]
    with pytest.raises(MemsenseError, match=r"end in \.csv"):
        write_csv((header, rows), tmp_path / "t.txt")
