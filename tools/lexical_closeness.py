"""How close the Memsense-like lexical route (core.recall.lexical.fulltext) comes to PostgreSQL's own:
for every question, the chunks PostgreSQL's `websearch_to_tsquery('english')` matches in a
Memsense database and their `ts_rank_cd`, beside the same from `FullTextIndex` over the same
stored texts.

    python tools/lexical_closeness.py QUESTIONS --database postgresql://… [--user U,…] [--json]

QUESTIONS as for tools/check_memsense_service.py (project questions, or LoCoMo JSON with --user
naming the Memsense user of each sample). Read-only.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tools.check_memsense_service import questions, questions_parser  # noqa: E402

DOC = "to_tsvector('english', COALESCE(task_tag, '') || ' ' || COALESCE(content, ''))"


def _top10(scores: dict) -> list:
    """The ten best-scored ids, ties by id (scores rounded to 1e-6 as Postgres prints them)."""
    return sorted(scores, key=lambda m: (-round(scores[m], 6), m))[:10]


def measure(store, asked: list[tuple[str, str]]) -> dict:
    from core.recall.lexical.fulltext import FullTextIndex

    texts: dict[str, tuple[list[str], FullTextIndex]] = {}
    n = same_set = pg_any = ours_any = 0
    jaccard = same_top = 0.0
    common_chunks = same_score_chunks = 0
    for user, question in asked:
        if user not in texts:
            rows = store.db.rows("SELECT memory_id, COALESCE(task_tag, '') || ' ' || COALESCE(content, '') AS text "
                               "FROM memory_chunks WHERE tenant_id = %(t)s AND scope = %(s)s AND user_id = %(u)s "
                               "AND status = 'active' ORDER BY memory_id", {"t": store.tenant, "s": store.scope, "u": user})
            texts[user] = ([r["memory_id"] for r in rows], FullTextIndex([r["text"] for r in rows]))
        ids, index = texts[user]
        pg = {r["memory_id"]: r["rank"] for r in store.db.rows(
            f"SELECT memory_id, ts_rank_cd({DOC}, websearch_to_tsquery('english', %(q)s))::float8 AS rank "
            f"FROM memory_chunks WHERE tenant_id = %(t)s AND scope = %(s)s AND user_id = %(u)s AND status = 'active' "
            f"AND {DOC} @@ websearch_to_tsquery('english', %(q)s)",
            {"q": question.strip(), "t": store.tenant, "s": store.scope, "u": user})}
        scores = index.scores(question.strip())
        ours = {ids[i]: float(scores[i]) for i in range(len(ids)) if scores[i] > 0}
        n += 1
        pg_any += bool(pg)
        ours_any += bool(ours)
        union = set(pg) | set(ours)
        same_set += set(pg) == set(ours)
        jaccard += len(set(pg) & set(ours)) / len(union) if union else 1.0
        common = set(pg) & set(ours)
        common_chunks += len(common)
        same_score_chunks += sum(abs(pg[m] - ours[m]) <= 1e-6 * max(1.0, pg[m]) for m in common)
        same_top += _top10(pg) == _top10(ours)
    return {"questions": n, "postgres_matches_some_chunk": pg_any / n, "ours_matches_some_chunk": ours_any / n,
            "same_matched_chunks": same_set / n, "mean_jaccard_of_matches": jaccard / n,
            "matched_chunks_both": common_chunks,
            "same_score_share_of_those": same_score_chunks / common_chunks if common_chunks else 1.0, "same_top10_order": same_top / n}


def main(argv: list[str] | None = None) -> int:
    from core.recall.memsense.database import PostgresStore

    p = questions_parser(__doc__)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    store = PostgresStore(args.database, args.tenant, args.scope)
    try:
        figures = measure(store, questions(args.questions, [u for u in args.user.split(",") if u]))
    finally:
        store.close()
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print(", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in figures.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
