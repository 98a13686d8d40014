"""MMR's cosine is the same float wherever a row sits (`mmr.row_dots`): a matrix-vector
product through BLAS changes the last bits with the row's position, which would make two
chunks more or less redundant depending on the rows re-ranked with them."""
from __future__ import annotations

import numpy as np

from core.rank import mmr


def test_row_dots_do_not_depend_on_the_rows_around_them():
    rng = np.random.default_rng(0)
    unit = rng.normal(size=(300, 384))
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    table = np.array([mmr.row_dots(unit, unit[a]) for a in range(len(unit))])
    assert (table == table.T).all()
    for _ in range(50):
        rows = rng.permutation(len(unit))[: rng.integers(1, len(unit))]
        offset = int(rng.integers(0, 7))  # also a start that is not 16-byte aligned
        buffer = np.empty(len(rows) * 384 + 8)
        sub = buffer[offset: offset + len(rows) * 384].reshape(len(rows), 384)
        sub[:] = unit[rows]
        pick = int(rng.integers(len(rows)))
        assert (mmr.row_dots(sub, sub[pick]) == table[rows, rows[pick]]).all()


def test_group_dots_are_row_dots_of_each_group():
    rng = np.random.default_rng(1)
    for d in (4, 12, 384):
        unit = rng.normal(size=(500, d))
        unit /= np.linalg.norm(unit, axis=1, keepdims=True)
        rows, picks = rng.integers(0, 500, size=(40, 30)), rng.integers(0, 500, size=40)
        want = np.array([mmr.row_dots(unit[r], unit[p]) for r, p in zip(rows, picks)])
        assert (mmr.group_dots(unit[rows], unit[picks]) == want).all()


def test_redundancy_is_the_larger_of_cosine_and_weighted_jaccard():
    unit = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0], [0.0, 0.0]])
    dims = np.array([2, 2, 2, 0])
    tags = mmr.tag_matrix([("a", "b"), ("a",), ("c",), ("a", "b")])
    red = mmr.redundancy_to(0, unit, dims, tags, tags.sum(axis=1), 0.5)
    assert red.tolist() == [1.0, 0.6, 0.0, 0.5]  # row 3 has no vector: only its tags count
