"""The handlers of `memsense`'s own commands (ingest, search, explain, import, export-memsense,
rerank, bench, demo) and what they share; `core.cli.main` builds the command line and runs them.
The other commands live beside them (`evaluation`, `store`, `tuning`, `failures`, `history`)."""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from core.atomic import STDOUT as STDOUT_PATH
from core.cli.arguments import not_printed, recall_options
from core.cli.output import progress_bar
from core.errors import MemsenseError
from core.files import STDIN, check_output, read_text
from core.rank.glossary import label
from core.recall.timeouts import EMBED_TIMEOUT_S
from core.redact import redact_url


def _config(args: argparse.Namespace):
    from dataclasses import replace

    from core import config as config_io

    if getattr(args, "preset", None) is not None:
        from core.config.presets import builtin

        cfg = builtin(args.preset)
    else:  # an empty --config "" is an error, not the defaults
        cfg = config_io.load(args.config) if getattr(args, "config", None) is not None else config_io.Config()
    if getattr(args, "top_k", None) is not None:
        cfg = replace(cfg, top_k=args.top_k)
    return cfg


def _search_config(args: argparse.Namespace):
    """The config and the query of a search, checked before the store is opened."""
    from core.recall.query_text import check_query

    check_query(args.query)
    cfg = _config(args)
    cfg.check_searchable()
    return cfg


def cmd_ingest(args: argparse.Namespace) -> Any:
    from core.recall.engine import build_store
    from core.recall.memsense.session import is_postgres

    if is_postgres(args.store):
        raise MemsenseError("a Memsense database is only ever read; to work on a copy, "
                            f"`memsense import {redact_url(args.store)} --store DIR`, then ingest into DIR")

    from core.evaluation.workspace import attach_dataset

    stats = build_store(args.dataset, args.store, mode=args.mode, model=args.model, cache_dir=args.cache,
                        facet_source=args.facets, progress=_progress(args))
    try:
        questions = attach_dataset(args.store, args.dataset)
    except (MemsenseError, OSError) as exc:  # the store stands; only the memory of its questions is missing
        questions = 0
        print(f"memsense: warning: the dataset's questions were not attached to the store ({exc})", file=sys.stderr)
    if args.json:
        return {**stats.to_dict(), "questions_attached": questions}
    print(f"stored {stats.users} users: {stats.session_chunks} session chunks, {stats.turn_chunks} turn chunks; "
          f"{stats.texts_embedded} texts embedded, {stats.texts_from_cache} from cache, {stats.seconds:.1f} s")
    if questions:
        print(f"attached its {questions} judged questions to the store (the app offers them with it)")
    return None


def _progress(args: argparse.Namespace) -> Callable[[int, int, str], None] | None:
    return None if args.json or args.quiet else progress_bar()


def _query(args: argparse.Namespace) -> str:
    """The query, or standard input's text for `-` (one query; a final line break dropped)."""
    if args.query != STDIN:
        return args.query
    return read_text(STDIN, "query").removesuffix("\n").removesuffix("\r")


def _engine(args: argparse.Namespace):
    from core.recall.memsense.session import is_postgres

    if is_postgres(args.store):
        from core.recall.memsense.engine import PostgresEngine

        return PostgresEngine(args.store, tenant=getattr(args, "tenant", "default"), scope=getattr(args, "scope", "user"),
                              embedder=getattr(args, "embedder", None) or args.model,
                              embed_timeout=getattr(args, "embed_timeout", EMBED_TIMEOUT_S))
    if getattr(args, "service", None):
        raise MemsenseError("--service compares with a live Memsense: give its database as --store postgresql://...")
    from core.recall.engine import Engine

    return Engine(args.store, model=args.model, cache_dir=args.cache, **recall_options(args))


def pool_table(ranking) -> list[dict[str, Any]]:
    """Every row of the Candidate pool (`core.rank.record.pool_order`) as its record; `fate`
    repeats `status` under the key this list used before the record."""
    from core.rank.record import pool_order

    out = []
    for i in pool_order(ranking):
        rec = ranking.record(ranking.pool.chunks[i].memory_id).to_json()
        out.append({**rec, "fate": rec["status"]})
    return out


def cmd_search(args: argparse.Namespace) -> Any:
    from core.search import search
    from core.rank.score import to_fixed

    cfg = _search_config(args)
    args.query = _query(args)
    engine = _engine(args)
    try:
        ranking = search(engine, args.user, args.query, cfg)
        comparison = None
        stored = engine.model_text or ""
        if getattr(args, "service", None):
            from core.recall.memsense.service import compare, service_search

            production = service_search(args.service, tenant=args.tenant, scope=args.scope, user=args.user,
                                        query=args.query, top_k=cfg.top_k, timeout=args.service_timeout)
            comparison = compare(production, ranking)
    finally:
        engine.close()
    if args.json:
        out = {"query": args.query, "user": args.user, "session_first": ranking.session_first,
               "results": list(ranking.results), "pool": pool_table(ranking)}
        if comparison is not None:
            out["production"] = comparison.to_dict()
        if stored:
            out["stored_vectors"] = stored
        return out
    if comparison is not None:
        print(f"{'':>2} {'production':<24}{'final_score':>12}   {'reproduction':<24}{'final_score':>12}")
        for line in comparison.lines:
            mark = "=" if line.matches else "≠"
            print(f"{line.position:>2} {line.production_id or '-':<24}{_score(line.production_score):>12} {mark} "
                  f"{line.reproduction_id or '-':<24}{_score(line.reproduction_score):>12}"
                  + (f"\n   {line.reason}" if line.reason else ""))
        print(comparison.summary)
        return None
    for r in ranking.results:
        text = json.loads(r["content"])["user"].replace("\n", " ")
        print(f"{r['explain']['diversity']['selected_rank']:>2} {r['memory_id']:<22} final {to_fixed(r['final_score'], 6)} "
              f"rrf+turn {to_fixed(r['rrf_score'], 4)}  {', '.join(r['routes'])}\n   {text[:110]}")
    print(f"pool: {len(ranking.candidates)} candidates; session-first: {ranking.session_first}"
          + (f"; stored vectors: {stored}" if stored else ""))
    return None


def _score(v: float | None) -> str:
    """A score as Memsense prints it (`toFixed(6)`)."""
    from core.rank.score import to_fixed

    return "-" if v is None else to_fixed(v, 6)


def cmd_explain(args: argparse.Namespace) -> Any:
    from core.rank.rerank import rerank
    from core.rank.score import to_fixed
    from core.rank.whatif import what_would_change
    from core.recall.pool import deepest

    cfg = _search_config(args)
    args.query = _query(args)
    engine = _engine(args)
    try:
        if args.memory not in {c.memory_id for c in engine.chunks(args.user)}:
            raise MemsenseError(f"no chunk {args.memory!r} for user {args.user!r}; ids look like {engine.chunks(args.user)[0].memory_id}")
        pool = engine.recall_for(args.user, args.query, cfg)
        deep = deepest(pool)  # "why not" and "what would it take" read the deepest lists
    finally:
        engine.close()
    ranking = rerank(pool, cfg)
    record = explain_record(ranking, args.memory, deep)
    whatif = what_would_change(pool, cfg, args.memory, base=ranking, deepest=deep)
    record["what_would_change"] = [c.to_json() for c in whatif.changes]
    record["what_would_change_note"] = whatif.note
    if args.json:
        return record
    print(f"{record['memory_id']}: {record['status']}\n  {record['reason']}")
    shown = [key for key in SCORE_TERMS if record[key] is not None]
    if shown:
        print("  " + " · ".join(f"{label(key)} {_term_text(record[key])}" for key in shown))
    for route, hit in record["route_hits"].items():
        print(f"  {route:<20} rank {hit['rank']:>4}  raw {to_fixed(hit['raw_score'], 4)}  share {to_fixed(hit['contribution'], 4)}")
    for bout in record["beaten_by"]:
        versus = "a duplicate by then" if bout["score"] is None else f"its own {bout['score']:.4f}, {bout['margin']:.4f} short"
        print(f"  pick {bout['rank']}: {bout['winner']} won on {bout['basis']} {bout['winner_score']:.4f} ({versus})")
    if whatif.changes or whatif.note:
        print("what would it take:" + (f" {whatif.note}" if whatif.note else ""))
    for change in whatif.changes:
        print(f"  {change.describe()}")
    return None


SCORE_TERMS = ("selected_rank", "pool_rank", "session_rrf_score", "turn_support", "rrf_score", "memory_score",
               "final_score", "mmr_score", "max_redundancy")
"""The record's numbers `memsense explain` prints, under their glossary labels."""


def _term_text(value: float | int) -> str:
    return str(value) if isinstance(value, int) else f"{value:.6f}"


def explain_record(ranking, memory_id: str, deep=None) -> dict[str, Any]:
    """The chunk's record (`core.rank.record`: fate, scores, route hits; the fate read in `deep`,
    the query's deepest pool, when no route found it within route_limit) and, when it lost the MMR
    selection, each pick it lost (`beaten_by`)."""
    from core.rank.contest import contest

    i = ranking.pool.index_of(memory_id)
    row_pos = ranking.row_of_index.get(i) if i is not None else None
    bouts = contest(ranking, row_pos) if row_pos is not None else ()
    record = ranking.record(memory_id, lambda r, m: r.fate(m, deep)).to_json()
    return {**record, "beaten_by": [{**b._asdict(), "margin": b.margin} for b in bouts]}


def cmd_import(args: argparse.Namespace) -> Any:
    from core.recall.memsense.import_users import import_users
    from core.recall.memsense.session import is_postgres

    if not is_postgres(args.database):
        raise MemsenseError(f"{redact_url(args.database)} is not a PostgreSQL address; write postgresql://USER:PASSWORD@HOST:PORT/DB")
    if is_postgres(args.store):
        raise MemsenseError("--store is where the copy goes: a folder (or a Qdrant URL), not a database")
    stats = import_users(args.database, args.store, tenant=args.tenant, scope=args.scope, users=args.user,
                         model=args.model, progress=_progress(args))
    if args.json:
        return stats.to_dict()
    print(f"copied {len(stats.users)} users ({stats.chunks} chunks, vectors of {stats.model}) into {redact_url(args.store)} "
          f"in {stats.seconds:.1f} s")
    for user, why in stats.skipped.items():
        print(f"skipped {user}: {why}")
    return None


def cmd_export_memsense(args: argparse.Namespace) -> Any:
    from core.atomic import write_output
    from core.config.memsense_options import memsense_export

    if args.out == STDOUT_PATH:  # `-`: print it, as with no --out
        args.out = None
    if args.out is not None:  # "" (an unset $VARIABLE) is refused, never taken for "print it"
        check_output(args.out, "--out")
    out = memsense_export(_config(args))
    if args.out:
        write_output(args.out, json.dumps(out, indent=2) + "\n", what="--out")
    if args.json or not args.out:
        if not args.json:
            print(json.dumps(out, indent=2))
        return out if args.json else None
    print(f"wrote {args.out}: re-rank options {json.dumps(out['rerankOptions'])}, top_k {out['topK']}; "
          f"{out['summary']}")
    return None


def cmd_rerank(args: argparse.Namespace) -> Any:
    from core.rank.replay import replay
    from core.rank.score import to_fixed

    base = _config(args) if args.config else None
    try:
        data = json.loads(read_text(args.cases, "rerank cases"))
    except json.JSONDecodeError as exc:
        raise MemsenseError(f"{args.cases}: not valid JSON ({exc}); is the file truncated?") from None
    out = replay(data, base)
    if args.json:
        return out
    for case in out:
        print(f"{case['name']}: " + " ".join(f"{r['memory_id']}({to_fixed(r['final_score'], 6)})" for r in case["results"]))
    return None


def cmd_bench(args: argparse.Namespace) -> Any:
    not_printed("--out", args.out, "to print the figures as JSON, use --json instead")
    if args.out is not None:
        check_output(args.out, "benchmark output")
    from core.cli import bench
    return bench.main(args)


def cmd_demo(args: argparse.Namespace) -> Any:
    from core.recall.engine import DEMO_DATASET, DEMO_QUESTIONS

    path = str(DEMO_QUESTIONS if args.questions else DEMO_DATASET)
    if args.json:
        return {"dataset": str(DEMO_DATASET), "questions": str(DEMO_QUESTIONS)}
    print(path)
    return None
