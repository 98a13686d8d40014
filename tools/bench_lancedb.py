"""LanceDB beside the embedded store's numpy scan, on the same vectors: is it exact, and how fast?

The embedded store answers a route with an exact scan (`vectors @ query`, then `argpartition` to
the depth asked; `core.recall.deepen`). LanceDB searches a table without a vector index by brute
force, so it is exact too; this measures what that costs. Not part of the library or the tests:
run it in a scratch venv that has lancedb and numpy (nothing of this project is imported):

    python -m venv /tmp/lance && /tmp/lance/bin/pip install lancedb numpy
    /tmp/lance/bin/python tools/bench_lancedb.py [--rows 30000] [--queries 20] [--depths 128,8000]

It prints, per depth, whether every LanceDB list has the numpy scan's ids in the same order (and
the largest score difference), and the median time of one query for each, measured in this run.
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import numpy as np


def unit_rows(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    x = rng.standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def numpy_top(vectors: np.ndarray, query: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """The embedded store's scan: every score, the `depth` best by score (ties by row)."""
    scores = vectors @ query
    part = np.argpartition(-scores, depth - 1)[:depth]
    order = np.lexsort((part, -scores[part]))
    return part[order], scores[part[order]]


def lance_top(table, query: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray]:
    got = table.search(query).distance_type("dot").limit(depth).select(["id", "_distance"]).to_arrow()
    ids = got.column("id").to_numpy()
    return ids, 1.0 - got.column("_distance").to_numpy()  # LanceDB's dot distance is 1 - dot


def timed(fn, queries: np.ndarray) -> tuple[float, list]:
    times, out = [], []
    for q in queries:
        start = time.perf_counter()
        out.append(fn(q))
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000, out


def main() -> None:
    import lancedb
    import pyarrow as pa

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=30_000, help="vectors in the table (one user's chunks of one route)")
    p.add_argument("--dim", type=int, default=384, help="dimensions (all-MiniLM-L6-v2: 384)")
    p.add_argument("--queries", type=int, default=20, help="queries timed per depth")
    p.add_argument("--depths", default="128,8000", help="list depths to ask for (the app asks up to 8,000)")
    args = p.parse_args()
    rng = np.random.default_rng(0)
    vectors, queries = unit_rows(rng, args.rows, args.dim), unit_rows(rng, args.queries, args.dim)
    print(f"lancedb {lancedb.__version__}, numpy {np.__version__}; {args.rows} rows of {args.dim} dims, "
          f"{args.queries} queries; {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as folder:
        db = lancedb.connect(folder)
        table = db.create_table("route", pa.table({
            "id": pa.array(np.arange(args.rows, dtype=np.int64)),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), args.dim)}))
        print(f"indices on the table: {table.list_indices() or 'none'} (a flat, brute-force search)")
        for depth in (int(d) for d in args.depths.split(",")):
            numpy_ms, expected = timed(lambda q, d=depth: numpy_top(vectors, q, d), queries)
            lance_ms, got = timed(lambda q, d=depth: lance_top(table, q, d), queries)
            same = sum(np.array_equal(e[0], g[0]) for e, g in zip(expected, got))
            same_sets = sum(set(e[0]) == set(g[0]) for e, g in zip(expected, got))
            diff = max(float(np.abs(np.sort(e[1]) - np.sort(g[1])).max()) for e, g in zip(expected, got))
            # where the orders differ, how far apart the exact (numpy) scores of the two ids are
            gap = max((float(np.abs(vectors[e[0][m]] @ q - vectors[g[0][m]] @ q).max())
                       for e, g, q in zip(expected, got, queries) if (m := e[0] != g[0]).any()), default=0.0)
            print(f"depth {depth}: same ids {same_sets}/{len(queries)}, in the same order {same}/{len(queries)} "
                  f"(where not, the swapped ids' scores differ by at most {gap:.1e}); max |score difference| "
                  f"{diff:.1e}; median per query: numpy {numpy_ms:.2f} ms, LanceDB {lance_ms:.2f} ms "
                  f"({lance_ms / numpy_ms:.1f}x)")


if __name__ == "__main__":
    main()
