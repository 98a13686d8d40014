"""MMR's cosine is the same float wherever a row sits (`mmr.row_dots`): a matrix-vector
product through BLAS changes the last bits with the row's position, which would make two
chunks more or less redundant depending on the rows re-ranked with them."""
from __future__ import annotations

import numpy as np
import pytest

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


def reference_select(final, unit, dims, tags, *, top_k, mmr_lambda, duplicate_threshold, tag_weight, fallback_fill):
    """MMR as SPEC §5 states it, pair by pair in plain Python (each cosine the same `row_dots`
    sum of the one row): what `mmr.select` must pick, charge and skip, value for value."""
    n = len(final)
    tag_sets = [frozenset(np.flatnonzero(t).tolist()) for t in tags]

    def redundancy(i: int, j: int) -> float:
        cos = float(np.clip(mmr.row_dots(unit[i:i + 1], unit[j])[0], 0.0, 1.0))
        if dims[i] != dims[j] or dims[i] == 0:
            cos = 0.0
        union = len(tag_sets[i] | tag_sets[j])
        return max(cos, tag_weight * (len(tag_sets[i] & tag_sets[j]) / union if union else 0.0))

    max_red, cause, picked, out = [0.0] * n, [None] * n, [], []

    def take(row, score, fallback, skipped):
        out.append((row, score, max_red[row], cause[row], fallback, skipped))
        picked.append(row)
        for i in range(n):
            red = redundancy(i, row)
            if red > max_red[i]:
                max_red[i], cause[i] = red, row

    take(0, None, False, ())
    while len(picked) < min(top_k, n):
        rest = [i for i in range(n) if i not in picked]
        skipped = tuple((i, max_red[i], cause[i] if cause[i] is not None else -1)
                        for i in rest if max_red[i] >= duplicate_threshold)
        free = [i for i in rest if max_red[i] < duplicate_threshold]
        if free:
            scores = {i: mmr_lambda * final[i] - (1.0 - mmr_lambda) * max_red[i] for i in free}
            best = max(scores.values())
            row = next(i for i in free if scores[i] == best)  # the earliest of equal scores
            take(row, scores[row], False, skipped)
        elif fallback_fill:
            take(rest[0], None, True, skipped)
        else:
            break
    return out, max_red


@pytest.mark.parametrize("seed", range(60))
def test_select_equals_the_pair_by_pair_reference(seed):
    """Random pools with near-duplicates, tied scores, tags or none, missing vectors and mixed
    dimensions: `select` (vectorised) picks, scores, charges and skips exactly as the reference."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(1, 60)), int(rng.choice([3, 16, 384]))
    base = rng.normal(size=(3, d))
    vectors = np.where(rng.random((n, 1)) < 0.4, base[rng.integers(0, 3, n)] + rng.normal(size=(n, d)) * 1e-3,
                       rng.normal(size=(n, d)))
    dims = np.full(n, d)
    if seed % 3 == 1:  # some rows without a vector, some of another dimension
        dims[rng.random(n) < 0.2] = 0
        dims[rng.random(n) < 0.2] = d - 1
    vectors[:, :][np.arange(d)[None, :] >= dims[:, None]] = 0.0
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
    names = ["a", "b", "c"] if seed % 4 else []
    tags = mmr.tag_matrix([tuple(rng.choice(names, size=int(rng.integers(0, len(names) + 1)), replace=False))
                           for _ in range(n)] if names else [()] * n)
    final = np.sort(rng.choice([0.3, 0.2, 0.1], n) if seed % 2 else rng.random(n))[::-1].copy()  # ties when odd
    knobs = dict(top_k=int(rng.integers(1, n + 2)), mmr_lambda=float(rng.choice([0.0, 0.5, 0.78, 1.0])),
                 duplicate_threshold=float(rng.choice([0.3, 0.94, 1.0])), tag_weight=float(rng.choice([0.0, 0.35, 1.0])),
                 fallback_fill=bool(seed % 5))
    sel = mmr.select(final, unit, dims, tags, **knobs)
    want, want_red = reference_select(final, unit, dims, tags, **knobs)
    got = [(s.row, s.mmr_score, s.max_redundancy, s.redundant_with, s.fallback, s.skipped) for s in sel.steps]
    assert got == want
    assert sel.max_redundancy.tolist() == want_red


@pytest.mark.parametrize("vocabulary, per_row", [(3, 2), (12, 4), (70, 5)])
def test_tag_table_equals_each_picks_own_jaccards(monkeypatch, vocabulary, per_row):
    """The table of each row's weighted Jaccard against each distinct tag set (built when few
    sets serve many picks; never past 62 tags) gives every pick the floats its own sums give."""
    rng = np.random.default_rng(vocabulary)
    n = 200
    unit = rng.normal(size=(n, 8))
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    names = [f"t{j}" for j in range(vocabulary)]
    tags = mmr.tag_matrix([tuple(rng.choice(names, size=int(rng.integers(0, per_row + 1)), replace=False))
                           for _ in range(n)])
    dims = np.full(n, 8)
    tabled = mmr.Redundancy(unit, dims, tags, 0.35, picks=n)
    assert (tabled.table is None) == (vocabulary > 62)
    monkeypatch.setattr(mmr, "TAG_TABLE_WORK", 0)
    plain = mmr.Redundancy(unit, dims, tags, 0.35, picks=n)
    assert plain.table is None
    for row in range(n):
        assert np.array_equal(tabled(row), plain(row))
