"""Measure what else might beat the `sessions` preset on LoCoMo dev (issue 22 item 3).

    PYTHONPATH=. python tools/beyond_experiments.py [--store /work/stores/locomo] [--dataset ../shared/datasets/locomo/locomo-dev.json]

Recalls every judged question (categories 1-4 with evidence) once, re-ranks it under the
`sessions` and the `memsense` preset (every session, first row of each in final order), and
runs each variant of `tools/beyond_variants.py` on that order: cluster-based selection,
negative feedback (dense away from the picks; lexical without the picks' words; MMR), coverage
of the query's terms, keyword/entity session indexes as a route, decomposition of how-many /
total / all / when questions (its parts recalled too). Per variant: recall_any@4,
recall_all@4, multi-hop recall_all@4, ms/query (recall + re-rank + the variant, embedding
cached) and the paired sign-flip test (10,000 flips, two-sided) of recall_all@4 against the
`sessions` preset and against `memsense`, and of multi-hop recall_all@4 against `sessions`.
"""
from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, Callable

import numpy as np

from core.config import Config
from core.config.presets import BUILTIN, only
from core.evaluation.evaluate import evaluate_config, judged_only, recall_pools
from core.evaluation.judged import load_question_set, session_qrels
from core.evaluation.metrics import question_metrics, relevant_of, sign_flip_p
from core.rank.rerank import rerank
from core.recall.engine import Engine
from core.recall.pool import RecallPool
from core.recall.query_text import for_local_model
from core.records import ROUTES, Question
from tools import beyond_variants as bv

K = bv.K
DEPTH = 64
Variant = Callable[[bv.Ctx], list[int]]


def session_order(pool: RecallPool, cfg: Config) -> tuple[list[int], dict[int, float], dict[int, int]]:
    """Every session in the config's final order (its first row), its final score and that row."""
    ranking = rerank(pool, cfg)  # `rows` holds every candidate session row in final order, whatever top_k
    codes: list[int] = []
    final: dict[int, float] = {}
    row_of: dict[int, int] = {}
    for r in ranking.rows:
        c = int(pool.static.session_of[r.index])
        if c not in final:
            codes.append(c)
            final[c], row_of[c] = r.final_score, r.index
    return codes, final, row_of


def context(pool: RecallPool, cfg: Config, q: Question, user: bv.UserData, qvec: np.ndarray) -> bv.Ctx:
    codes, final, row_of = session_order(pool, cfg)

    def route_rank(code: int, route: str) -> int:
        return int(pool.ranks[row_of[code], ROUTES.index(route)])

    return bv.Ctx(q.text, codes, final, route_rank, user, qvec)


def variants() -> list[tuple[str, str, Variant]]:
    """(label, base preset, variant)."""
    out: list[tuple[str, str, Variant]] = [("(check) first 4 sessions in final order", "sessions", lambda c: c.codes)]
    for base in ("sessions", "memsense"):
        for n in (8, 12, 20):
            out.append((f"1 cluster top {n} into 4 (average linkage, cosine of mean turn vectors)", base, partial(bv.cluster, n=n)))
        for beta in (0.05, 0.1, 0.2):
            out.append((f"3 coverage of query terms, beta {beta}", base, partial(bv.coverage, beta=beta)))
    for gamma in (0.25, 0.5, 1.0):
        out.append((f"2 negative feedback: session_dense away from picks, gamma {gamma}", "sessions",
                    partial(bv.away_dense, gamma=gamma)))
    out.append(("2 negative feedback: session_lexical without the picks' words", "sessions", bv.drop_terms))
    for field_name in ("capitalised", "tfidf20"):
        for w in (1.0, 2.0):
            out.append((f"4 keyword session index ({field_name}) as a route, weight {w:g}", "sessions",
                        partial(bv.keyword_route, field_name=field_name, weight=w)))
    return out


def load(engine: Engine, questions: list[Question]) -> tuple[dict[str, bv.UserData], dict[str, dict[int, int]]]:
    users, numbers = {}, {}
    for u in sorted({q.user_id for q in questions}):
        ix = engine._index(u)  # noqa: SLF001 - the tool reads the user's session index as recall built it
        index = ix.sessions()
        users[u] = bv.UserData.build(ix.chunks, index, ix.vec_full)
        numbers[u] = {int(c): ix.chunks[int(rows[0])].session_number for c, rows in zip(index.codes.tolist(), index.rows)}
    return users, numbers


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", type=Path, default=Path("/work/stores/locomo"))
    ap.add_argument("--dataset", type=Path, default=Path("../shared/datasets/locomo/locomo-dev.json"))
    ap.add_argument("--analyzer", default="plain", help="the chunk-level BM25 route's analyzer (recall option)")
    ap.add_argument("--model", default=None, help="the store's model folder (default: bundled all-MiniLM-L6-v2)")
    ap.add_argument("--cache", default=None, help="the embedding cache folder (default ~/.cache/memsense)")
    ap.add_argument("--dump", type=Path, help="write every row's recall_all@4 per question here (JSON)")
    ap.add_argument("--against", type=Path, help="a --dump of another run (another store or model): add the paired "
                                                 "test of each preset row against the same row there")
    args = ap.parse_args(argv)
    t_start = time.perf_counter()
    questions = judged_only(load_question_set(args.dataset))
    engine = Engine(args.store, model=args.model, cache_dir=args.cache, analyzer_name=args.analyzer)
    try:
        users, numbers = load(engine, questions)
        for u in users:
            engine.recall(u, "warm up")
        qvecs = {q.question_id: engine.embedder.encode([for_local_model(q.text)])[0] for q in questions}  # cached now
        t0 = time.perf_counter()
        pools = recall_pools(engine.recall, questions, DEPTH)
        recall_ms = (time.perf_counter() - t0) * 1e3 / len(questions)
        by_base = {"sessions": pools, "memsense": pools if args.analyzer == "plain" else plain_pools(args, questions)}
        rows = measure(engine, questions, by_base, users, numbers, qvecs, recall_ms)
    finally:
        engine.close()
    report(questions, rows, recall_ms)
    if args.dump:
        args.dump.write_text(json.dumps({label: every.tolist() for label, _, _, every, _ in rows}))
    if args.against:
        against(questions, rows, json.loads(args.against.read_text()))
    print(f"\nwhole run {time.perf_counter() - t_start:.0f} s")
    return 0


def plain_pools(args: argparse.Namespace, questions: list[Question]) -> dict[str, RecallPool]:
    """The `memsense` preset's pools: its chunk-level BM25 reads words as Memsense's does (plain)."""
    engine = Engine(args.store, model=args.model, cache_dir=args.cache)
    try:
        return recall_pools(engine.recall, questions, DEPTH)
    finally:
        engine.close()


Row = tuple[str, str, np.ndarray, np.ndarray, float]  # label, base, any@4, all@4 per question, ms/query


def measure(engine: Engine, questions: list[Question], by_base: dict[str, dict[str, RecallPool]], users: dict[str, bv.UserData],
            numbers: dict[str, dict[int, int]], qvecs: dict[str, np.ndarray], recall_ms: float) -> list[Row]:
    out: list[Row] = []

    def scored(label: str, base: str, orders: list[list[int]], ms: float) -> None:
        m = [question_metrics([numbers[q.user_id][c] for c in o[:K]], session_qrels(q), K) for q, o in zip(questions, orders)]
        out.append((label, base, np.array([x[f"recall_any@{K}"] for x in m]), np.array([x[f"recall_all@{K}"] for x in m]), ms))

    plain: dict[str, Any] = dict(alpha=0.0, mmr_lambda=1.0, duplicate_threshold=1.0, turn_support_cap=0.0, distinct_sessions=True)
    references = {**{f"preset {n}": BUILTIN[n] for n in ("memsense", "sessions", "dense_only")},
                  "preset session_dense alone (by session)": Config(route_weights=only(session_dense=1.0), **plain)}
    for name, cfg in references.items():
        t0 = time.perf_counter()
        ev = evaluate_config(by_base["memsense" if name == "preset memsense" else "sessions"], questions, cfg, K, name)
        ms = recall_ms + (time.perf_counter() - t0) * 1e3 / len(questions)
        out.append((name, name, np.array([o.metrics[f"recall_any@{K}"] for o in ev.outcomes]),
                    np.array([o.metrics[f"recall_all@{K}"] for o in ev.outcomes]), ms))
    for lam in (0.95, 0.9, 0.85, 0.8):
        t0 = time.perf_counter()
        ev = evaluate_config(by_base["sessions"], questions, replace(BUILTIN["sessions"], mmr_lambda=lam), K)
        ms = recall_ms + (time.perf_counter() - t0) * 1e3 / len(questions)
        out.append((f"2 negative feedback as MMR on session vectors, lambda {lam}", "sessions",
                    np.array([o.metrics[f"recall_any@{K}"] for o in ev.outcomes]),
                    np.array([o.metrics[f"recall_all@{K}"] for o in ev.outcomes]), ms))
    contexts: dict[str, list[bv.Ctx]] = {}
    base_ms: dict[str, float] = {}
    for base in ("sessions", "memsense"):
        t0 = time.perf_counter()
        contexts[base] = [context(by_base[base][q.question_id], BUILTIN[base], q, users[q.user_id], qvecs[q.question_id])
                          for q in questions]
        base_ms[base] = (time.perf_counter() - t0) * 1e3 / len(questions)
    headroom(questions, contexts["sessions"], numbers)
    for label, base, fn in variants():
        t0 = time.perf_counter()
        orders = [fn(c) for c in contexts[base]]
        ms = recall_ms + base_ms[base] + (time.perf_counter() - t0) * 1e3 / len(questions)
        scored(label + ("" if base == "sessions" else ", on memsense (by session)"), base, orders, ms)
    engine.embedder.encode([for_local_model(s) for q in questions for s in bv.sub_queries(q.text)])  # cached, as the questions'
    for part_weight in (0.5, 1.0):
        t0 = time.perf_counter()
        orders = []
        for q, c in zip(questions, contexts["sessions"]):
            subs = bv.sub_queries(q.text)
            parts = [session_order(engine.recall(q.user_id, s, DEPTH), BUILTIN["sessions"])[0] for s in subs]
            orders.append(bv.fuse_orders(c.codes, parts, part_weight) if parts else c.codes)
        ms = recall_ms + base_ms["sessions"] + (time.perf_counter() - t0) * 1e3 / len(questions)
        fired = sum(1 for q in questions if bv.sub_queries(q.text))
        scored(f"5 decomposition ({fired} questions split), parts' weight {part_weight:g}", "sessions", orders, ms)
    return out


def headroom(questions: list[Question], contexts: list[bv.Ctx], numbers: dict[str, dict[int, int]]) -> None:
    """How deep the `sessions` preset's session order must be read to hold every gold session
    of a multi-hop question: what re-ordering its top sessions could win at most."""
    deepest = []
    for q, c in zip(questions, contexts):
        if q.category == 1:
            order = [numbers[q.user_id][code] for code in c.codes]
            deepest.append(max(order.index(g) + 1 if g in order else 10**6 for g in relevant_of(session_qrels(q))))
    d = np.array(deepest)
    print("multi-hop, share whose gold sessions all lie within the first n of the sessions preset's order: "
          + ", ".join(f"n {n}: {(d <= n).mean():.3f}" for n in (4, 6, 8, 12, 20)), flush=True)


def report(questions: list[Question], rows: list[Row], recall_ms: float) -> None:
    cats = np.array([q.category for q in questions])
    mh = cats == 1
    ref = {label: every for label, _, _, every, _ in rows if label.startswith("preset ")}
    s_all, m_all = ref["preset sessions"], ref["preset memsense"]
    print(f"{len(questions)} questions ({int(mh.sum())} multi-hop); recall {recall_ms:.1f} ms/query (embedding cached)")
    print(f"| variant | any@{K} | all@{K} | multi-hop all@{K} | ms/query | Δ all vs sessions (won/lost), p | "
          f"Δ multi-hop all vs sessions, p | Δ all vs memsense, p |")
    print("|---|---:|---:|---:|---:|---|---|---|")
    for label, _, any_, every, ms in rows:
        d, dm, dmh = every - s_all, every - m_all, (every - s_all)[mh]
        print(f"| {label} | {any_.mean():.3f} | {every.mean():.3f} | {every[mh].mean():.3f} | {ms:.1f} | "
              f"{d.mean():+.3f} ({(d > 0).sum()}/{(d < 0).sum()}), {sign_flip_p(d):.4f} | "
              f"{dmh.mean():+.3f}, {sign_flip_p(dmh):.4f} | {dm.mean():+.3f}, {sign_flip_p(dm):.4f} |", flush=True)
    fired = np.array([bool(bv.sub_queries(q.text)) for q in questions])
    temporal = cats == 2
    print(f"\ndecomposition, on what it targets: the {int(fired.sum())} questions it splits "
          f"({int((fired & mh).sum())} multi-hop, {int((fired & temporal).sum())} temporal) and the temporal category")
    print(f"| variant | all@{K} of the split questions | Δ vs sessions, p | temporal all@{K} | Δ vs sessions, p |")
    print("|---|---:|---|---:|---|")
    for label, _, _, every, _ in rows:
        if label.startswith(("5 ", "preset sessions")):
            d = every - s_all
            print(f"| {label} | {every[fired].mean():.3f} | {d[fired].mean():+.3f}, {sign_flip_p(d[fired]):.4f} | "
                  f"{every[temporal].mean():.3f} | {d[temporal].mean():+.3f}, {sign_flip_p(d[temporal]):.4f} |")


def against(questions: list[Question], rows: list[Row], other: dict[str, list[float]]) -> None:
    """Each preset row against the same row of another run (e.g. another embedding model's store)."""
    mh = np.array([q.category == 1 for q in questions])
    print(f"\n| row | all@{K} here | there | Δ (won/lost), p | multi-hop here | there | Δ, p |")
    print("|---|---:|---:|---|---:|---:|---|")
    for label, _, _, every, _ in rows:
        if label.startswith("preset ") and label in other:
            there = np.array(other[label])
            d = every - there
            print(f"| {label} | {every.mean():.3f} | {there.mean():.3f} | {d.mean():+.3f} ({(d > 0).sum()}/{(d < 0).sum()}), "
                  f"{sign_flip_p(d):.4f} | {every[mh].mean():.3f} | {there[mh].mean():.3f} | {d[mh].mean():+.3f}, "
                  f"{sign_flip_p(d[mh]):.4f} |")


if __name__ == "__main__":
    raise SystemExit(main())
