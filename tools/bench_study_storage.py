"""Trials per second of a shared tuning study (issue 38): 1 and 2 worker processes of
`memsense tune --storage URL --study NAME` on PostgreSQL, SQLite and a journal file, all in one run.

    python -m tools.bench_study_storage QUESTIONS --store S [--cache DIR] [--train USER] [--trials 60]
        [--postgres postgresql://USER@HOST:PORT/DB] [--storages postgresql,sqlite,journal] [--workers 1,2]

Without `--postgres`, a throwaway PostgreSQL (the tests' pgserver, tests/memsense_db.py) is started
on 127.0.0.1 with fsync off, as the tests run it, and stopped at the end. Each case is a fresh study
run to `--trials` COMPLETE trials by the workers together (`--jobs 1` each, no sweep); its rate is
the COMPLETE trials over the time from the first trial's start to the last one's end, read from the
study, so each worker's start-up and recall are left out. The load average is printed before and
after each case (the figures mean little on a busy machine).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _rate(url: str, study: str) -> tuple[int, float]:
    """COMPLETE trials and the seconds from the first trial's start to the last one's end."""
    import optuna

    from core.evaluation.study_storage import open_storage, parse_storage

    trials = optuna.load_study(study_name=study, storage=open_storage(parse_storage(url), heartbeat=False)).trials
    done = [t for t in trials if t.state == optuna.trial.TrialState.COMPLETE]
    first = min(t.datetime_start for t in done if t.datetime_start)
    last = max(t.datetime_complete for t in done if t.datetime_complete)
    return len(done), (last - first).total_seconds()


def run_case(args: argparse.Namespace, url: str, study: str, workers: int) -> tuple[int, float]:
    argv = [sys.executable, "-m", "core.cli.main", "tune", args.questions, "--store", args.store, "--train",
            args.train, "--trials", str(args.trials), "--jobs", "1", "--sensitivity-points", "0", "--quiet",
            "--storage", url, "--study", study, *(["--cache", args.cache] if args.cache else [])]
    env = dict(os.environ, PYTHONPATH=str(HERE))
    procs = [subprocess.Popen(argv, cwd=HERE, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for _ in range(workers)]
    for p in procs:
        _, err = p.communicate()
        if p.returncode:
            raise SystemExit(f"a worker failed: {err.strip()}")
    return _rate(url, study)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("questions")
    ap.add_argument("--store", required=True)
    ap.add_argument("--cache")
    ap.add_argument("--train", default="demo-ana")
    ap.add_argument("--trials", type=int, default=60)
    ap.add_argument("--postgres", help="a PostgreSQL database to use (default: start a throwaway one)")
    ap.add_argument("--storages", default="postgresql,sqlite,journal")
    ap.add_argument("--workers", default="1,2")
    args = ap.parse_args(argv)
    kinds = args.storages.split(",")
    counts = [int(n) for n in args.workers.split(",")]
    server = None
    work = Path(tempfile.mkdtemp(prefix="bench-study-"))
    try:
        if "postgresql" in kinds and not args.postgres:
            import psycopg

            from tests.memsense_db import LocalPostgres

            server = LocalPostgres()
            with psycopg.connect(server.dsn(), autocommit=True) as conn:
                conn.execute("CREATE DATABASE bench")
            args.postgres = server.dsn("bench")
        urls = {"postgresql": args.postgres, "sqlite": f"sqlite:///{work / 'study.sqlite'}",
                "journal": str(work / "study.journal")}
        print(f"{os.cpu_count()} CPUs; {args.trials} trials per case, --jobs 1 per worker; load average "
              f"before: {_load()}")
        print(f"{'storage':<12}{'workers':>8}{'trials':>8}{'seconds':>9}{'trials/s':>10}   load average after")
        for kind in kinds:
            for n in counts:
                done, seconds = run_case(args, urls[kind], f"bench-{kind}-{n}", n)
                print(f"{kind:<12}{n:>8}{done:>8}{seconds:>9.1f}{done / seconds:>10.2f}   {_load()}", flush=True)
    finally:
        if server is not None:
            server.stop()
        for f in work.iterdir():
            f.unlink()
        work.rmdir()


if __name__ == "__main__":
    started = time.monotonic()
    main()
    print(f"total {time.monotonic() - started:.0f} s")
