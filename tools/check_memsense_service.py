"""Does the app reproduce a live Memsense? Every question of a file, asked of the service and
recomputed from its database, compared position by position (ids, order, final_score to 1e-6).

    python tools/check_memsense_service.py QUESTIONS --database postgresql://… --embedder URL \\
        --service URL [--user U] [--top-k 4]

QUESTIONS: the project's question file ({"questions": [{"user", "question"}, …]}) or LoCoMo JSON
(then --user names the Memsense user each sample was ingested as, in order, comma-separated).
Prints every difference with its reason, then the count; exits 1 when any differs.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def questions(path: Path, users: list[str]) -> list[tuple[str, str]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, dict):
        return [(q["user"], q["question"]) for q in data["questions"]]
    return [(user, q["question"]) for user, sample in zip(users, data) for q in sample.get("qa", [])]


def questions_parser(doc: str) -> argparse.ArgumentParser:
    """The arguments of a tool that asks a question file of a Memsense database: the file, the
    database with its tenant and scope, and for LoCoMo the users its samples were ingested as."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("questions", type=Path)
    p.add_argument("--database", required=True)
    p.add_argument("--tenant", default="default")
    p.add_argument("--scope", default="user")
    p.add_argument("--user", default="", help="LoCoMo only: the users the samples were ingested as, comma-separated")
    return p


def main(argv: list[str] | None = None) -> int:
    from core.config import Config
    from core.recall.memsense.engine import PostgresEngine
    from core.recall.memsense.service import compare, service_search
    from core.search import search

    p = questions_parser(__doc__)
    p.add_argument("--embedder", required=True)
    p.add_argument("--service", required=True)
    p.add_argument("--top-k", type=int, default=4)
    args = p.parse_args(argv)
    engine = PostgresEngine(args.database, tenant=args.tenant, scope=args.scope, embedder=args.embedder)
    cfg = Config(top_k=args.top_k)
    asked = same = 0
    try:
        for user, question in questions(args.questions, [u for u in args.user.split(",") if u]):
            production = service_search(args.service, tenant=args.tenant, scope=args.scope, user=user,
                                        query=question, top_k=args.top_k)
            verdict = compare(production, search(engine, user, question, cfg))
            asked += 1
            same += verdict.matches
            if not verdict.matches:
                print(f"DIFFERS {user}: {question}")
                for line in verdict.lines:
                    if not line.matches:
                        print(f"  #{line.position} {line.production_id} vs {line.reproduction_id}: {line.reason}")
    finally:
        engine.close()
    print(f"{same}/{asked} questions: production and reproduction match (ids, order, final_score to 1e-6)")
    return 0 if same == asked else 1


if __name__ == "__main__":
    sys.exit(main())
