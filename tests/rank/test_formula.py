"""A candidate's score as a tree of its formula (`core.rank.formula`): every sum it names holds."""
from __future__ import annotations

import pytest

from core.config import Config
from core.config.schema import SCHEMES
from core.rank.formula import adds_up, formula_tree
from core.rank.rerank import rerank
from core.rank.synthetic import synthetic_pool


@pytest.fixture(scope="module")
def pool():
    return synthetic_pool(n_sessions=10, turns_per_session=8, dim=16, seed=3)


def test_every_scheme_and_mode_adds_up(pool):
    """The tree's sums hold for every chunk of a pool, under each fusion scheme, session-first or not."""
    for scheme in SCHEMES:
        for session_first in (True, False):
            ranking = rerank(pool, Config(top_k=6, scheme=scheme, session_first=session_first))
            for chunk in pool.chunks:
                tree = formula_tree(ranking.record(chunk.memory_id), ranking.config, ranking.session_first)
                assert adds_up(tree) == [], (scheme, session_first, chunk.memory_id)


def test_a_pick_reads_mmr_over_final_over_rrf_over_each_route(pool):
    ranking = rerank(pool, Config(top_k=6))
    second = ranking.record(ranking.result_ids[1])
    tree = formula_tree(second, ranking.config, ranking.session_first)
    assert (tree.label, tree.value, tree.adds) == ("Pick #2: MMR", second.mmr_score, True)
    relevance, penalty = tree.children
    (final,) = relevance.children
    assert final.value == second.final_score and final.children[0].value == second.rrf_score
    own = final.children[0].children[0]
    assert own.value == second.session_rrf_score
    assert {c.key for c in own.children} == set(second.route_hits)
    assert penalty.value == -(1 - ranking.config.mmr_lambda) * second.max_redundancy
    first = formula_tree(ranking.record(ranking.result_ids[0]), ranking.config, ranking.session_first)
    assert first.value is None and first.children[-1].label == "Final"  # the top Final: no MMR term
