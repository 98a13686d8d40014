"""Replay of Memsense rows: `memsense rerank`'s per-case time beside Memsense's own `rerank.js`
on the same rows, measured alternately in one run.

    python tools/bench_replay.py --rerank-js MEMSENSE_SRC/src/server/retrieval/rerank.js
    MEMSENSE_SRC=/path/to/memsense python tools/bench_replay.py      # the same, found from the source tree

Cases are random Memsense pools: 384-dimensional embeddings as pgvector text (`"[..]"`, what a
logged pool holds), a few tags, `rrf_score` in [0, 0.3]. 32 rows are re-ranked to top_k 8 (one
search); 512 rows to top_k 32 (a deep pool re-ranked deep, where rerank.js's MMR loop costs most).

What is timed is the same work on both sides: the cases file is decoded once, outside the clock
(node: JSON.parse; Python: json.loads), so each side starts from rows whose embeddings are still
strings, then per case: read every row (parse each embedding string, score, tags), final score,
sort, MMR, the picks, on one thread (BLAS is held to one, as node runs one). Ours also checks
every row (one clear error on bad input) and builds the explain records; rerank.js does neither. Each side runs every case once to warm up, then `reps`
times; its figure is the median over cases of the mean per call, and each side is measured twice,
alternately (ours, node, ours, node), keeping the better of its two. The picks of both sides are
compared case by case, so the two did the same re-rank.
Below each size, parts of ours timed apart, case by case, each the better of two rounds: the whole
re-rank; reading the embedding strings into unit rows (one simdjson parse) with, inside it,
simdjson's parse of their joined text into doubles alone (the library's floor); MMR's picks
with, inside them, the dot products alone (one `row_dots` per pick, the arithmetic's floor); and
the rest of the whole (checking the rows, final scores, order, tags, explain records).
Without `--rerank-js` (or without node) only our figures are printed.
"""
from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one thread, as node runs rerank.js: set before numpy loads BLAS

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import simdjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the project first, from any folder

from core.config import Config  # noqa: E402
from core.rank import mmr  # noqa: E402
from core.rank.replay import case_rows, case_vectors, final_scores, replay_case, score_order  # noqa: E402

TAGS = ["music", "travel", "pets", "work", "food", "art", "health", "family"]
DRIVER = """
import { readFileSync } from 'fs';
const { hybridRerank } = await import(process.argv[2]);
const cases = JSON.parse(readFileSync(process.argv[3], 'utf8'));
const reps = Number(process.argv[4]);
const times = [];
const picks = [];
for (const c of cases) {
  picks.push(hybridRerank(c.rows, c.top_k, c.options).map((r) => r.memory_id));
  const t = process.hrtime.bigint();
  for (let i = 0; i < reps; i++) hybridRerank(c.rows, c.top_k, c.options);
  times.push(Number(process.hrtime.bigint() - t) / 1e6 / reps);
}
times.sort((a, b) => a - b);
console.log(JSON.stringify({ median_ms: times[Math.floor(times.length / 2)], picks }));
"""


def cases(rows: int, top_k: int, n: int = 12, dim: int = 384, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed + rows)
    out = []
    for c in range(n):
        pool = [{"memory_id": f"m{c}-{i:04d}", "rrf_score": float(rng.random() * 0.3), "score": 0.5,
                 "embedding": "[" + ",".join(f"{x:.6g}" for x in rng.standard_normal(dim)) + "]",
                 "tags": rng.choice(TAGS, size=int(rng.integers(0, 4)), replace=False).tolist(),
                 "routes": ["lexical", "vec_full"]} for i in range(rows)]
        out.append({"name": f"{rows}-{c}", "top_k": top_k, "options": {}, "rows": pool})
    return out


def ours(batch: list[dict], reps: int) -> tuple[float, list[list[str]]]:
    """Median over cases of the mean time per call (ms), and each case's picks."""
    times, picks = [], []
    for case in batch:
        picks.append([r["memory_id"] for r in replay_case(case)["results"]])
        t = time.perf_counter()
        for _ in range(reps):
            replay_case(case)
        times.append((time.perf_counter() - t) * 1e3 / reps)
    return statistics.median(times), picks


def parts(batch: list[dict], reps: int) -> dict[str, float]:
    """Where our time goes, median over cases of the mean per call (ms), each part the better of
    two rounds: the whole re-rank; reading the embedding strings into unit rows (one simdjson
    parse) and within it the parse alone of their joined text into doubles (the library's
    floor); MMR's picks, and within them the dot products alone (one `row_dots` per pick: the
    arithmetic's floor); and the rest of the whole (checking the rows, final scores, order,
    tags, explain records)."""
    cfg = Config()
    out: dict[str, list[float]] = {"whole": [], "embeddings": [], "parse": [], "mmr": [], "dots": [], "rest": []}
    parser = simdjson.Parser()
    for case in batch:
        ids, rrf, scores, tags, _ = case_rows(case["rows"], case["name"])
        final = final_scores(rrf, scores, cfg.alpha)
        order = score_order(final, ids)
        texts = [case["rows"][i]["embedding"] for i in order]
        unit, dims = case_vectors(texts, str)
        args = (np.array([final[i] for i in order]), unit, dims, mmr.tag_matrix([tags[i] for i in order]))
        knobs = {"top_k": case["top_k"], "mmr_lambda": cfg.mmr_lambda, "duplicate_threshold": cfg.duplicate_threshold,
                 "tag_weight": cfg.tag_weight, "fallback_fill": cfg.fallback_fill}
        picks = mmr.select(*args, **knobs).order
        joined = "[" + ",".join(texts) + "]"
        work = {"whole": (replay_case, case), "embeddings": (case_vectors, texts, str),
                "parse": (_parse_alone, parser, joined),
                "mmr": (lambda a=args, k=knobs: mmr.select(*a, **k),),
                "dots": (lambda u=unit, p=picks: [mmr.row_dots(u, u[i]) for i in p],)}
        best = {key: min(_mean_ms(reps, *job) for _ in range(2)) for key, job in work.items()}
        best["rest"] = best["whole"] - best["embeddings"] - best["mmr"]
        for key, value in best.items():
            out[key].append(value)
    return {key: statistics.median(values) for key, values in out.items()}


def _parse_alone(parser: simdjson.Parser, text: str) -> Any:
    doc: Any = parser.parse(text)
    return doc.as_buffer(of_type="d")


def _mean_ms(reps: int, work, *args) -> float:
    t = time.perf_counter()
    for _ in range(reps):
        work(*args)
    return (time.perf_counter() - t) * 1e3 / reps


def theirs(driver: Path, module: Path, data: Path, reps: int) -> tuple[float, list[list[str]]]:
    out = subprocess.run(["node", str(driver), str(module), str(data), str(reps)],
                         capture_output=True, text=True, check=True)
    result = json.loads(out.stdout)
    return float(result["median_ms"]), result["picks"]


def rerank_js(arg: Path | None) -> Path | None:
    if arg is None and os.environ.get("MEMSENSE_SRC"):
        arg = Path(os.environ["MEMSENSE_SRC"]) / "src" / "server" / "retrieval" / "rerank.js"
    if arg is None or not shutil.which("node"):
        return None
    if not arg.is_file():
        sys.exit(f"bench_replay: error: {arg} is not a file; give Memsense's src/server/retrieval/rerank.js")
    return arg


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rerank-js", type=Path, help="Memsense's src/server/retrieval/rerank.js "
                                                   "(default: $MEMSENSE_SRC/src/server/retrieval/rerank.js)")
    args = ap.parse_args()
    js = rerank_js(args.rerank_js)
    load = os.getloadavg()
    print("timed on both sides, per case, on one thread: parse every row's embedding string, final score, sort, "
          "MMR picks (cases decoded from JSON outside the clock); ours also checks every row and builds explain records")
    with tempfile.TemporaryDirectory() as tmp:
        module, driver = Path(tmp) / "rerank.mjs", Path(tmp) / "drive.mjs"
        if js:
            module.write_text(js.read_text())  # an ES module whatever the source tree says
            driver.write_text(DRIVER)
        for rows, top_k, reps in ((32, 8, 40), (128, 16, 10), (512, 32, 3)):
            batch = cases(rows, top_k)
            mine, our_picks = ours(batch, reps)
            line = f"{rows:>4} rows, top_k {top_k:>2}: memsense rerank {mine:8.2f} ms per case"
            if js:
                data = Path(tmp) / f"cases-{rows}.json"
                data.write_text(json.dumps(batch))
                node, js_picks = theirs(driver, module, data, reps)
                mine = min(mine, ours(batch, reps)[0])  # alternately: ours, node, ours, node
                node = min(node, theirs(driver, module, data, reps)[0])
                same = sum(a == b for a, b in zip(our_picks, js_picks))
                line = (f"{rows:>4} rows, top_k {top_k:>2}: memsense rerank {mine:8.2f} ms per case   "
                        f"rerank.js {node:8.2f} ms   ({node / mine:.1f}x faster)   same picks in {same}/{len(batch)} cases")
            print(line, flush=True)
            share = parts(batch, reps)
            print(f"      parts, timed apart: the whole {share['whole']:.2f} ms = embedding strings to unit rows "
                  f"{share['embeddings']:.2f} ms (simdjson's parse of their joined text alone {share['parse']:.2f} ms) "
                  f"+ MMR picks {share['mmr']:.2f} ms (their dot products alone {share['dots']:.2f} ms) "
                  f"+ the rest {share['rest']:.2f} ms", flush=True)
    print(f"load average before / after: {' '.join(f'{x:.2f}' for x in load)} / "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
