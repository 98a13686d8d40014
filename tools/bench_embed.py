"""Embedding backends side by side: cold ingest time, vector agreement, identical rankings.

    python tools/bench_embed.py                    # locomo-dev, onnxruntime and torch, in one run
    python tools/bench_embed.py --backends onnx,onnx@92c038c --no-rankings   # against an older onnx path
    python tools/bench_embed.py --dataset FILE --backends onnx,torch --work DIR

For each backend, a fresh process ingests the dataset into a new store with an empty embedding
cache (the onnxruntime one with the ONNX copy already made, as `scripts/setup.sh` leaves it;
the one-time export is timed on its own). `onnx@REV` is the onnxruntime backend of the
project as it was at git revision REV (extracted with `git archive`, its own export), to time a
change beside the code before it. Then each cache's vectors are compared with torch's (max
|difference|, least cosine), and every question of the dataset and of the demo is recalled on
the onnx and torch stores, each with its own backend embedding the query: the top-50 ids of
every route must be the same lists. Prints the load average beside the figures; the machine is
shared. Each ingest also says where its time went (reading, chunking with facets, embedding,
store writes, and the rest: process start and imports), and within embedding the model load
(which embeds its probe texts), tokenising, the onnxruntime calls and the cache writes.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the project first, from any folder

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATASET = ROOT.parent / "shared" / "datasets" / "locomo" / "locomo-dev.json"
DEPTH = 50


CPU = {"s": 0.0}  # CPU seconds (user + system) of the last child: less sensitive to a loaded machine than wall time


def source(backend: str, work: Path) -> tuple[str, Path]:
    """(the Embedder backend, the project folder that runs it): `onnx@REV` is `onnx` of revision REV."""
    name, _, rev = backend.partition("@")
    if not rev:
        return name, ROOT
    folder = work / f"src-{rev}"
    if not folder.is_dir():
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True)
        if archive.returncode:
            raise SystemExit(f"bench: cannot take revision {rev} from git: {archive.stderr.decode().strip()}")
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            tar.extractall(folder, filter="data")
    return name, folder


def _child(code: str, backend: str, root: Path = ROOT) -> tuple[float, str]:
    """Run `code` in a fresh Python with `backend`, the project at `root`; (wall seconds from spawn
    to exit, stdout)."""
    env = {**os.environ, "MEMSENSE_EMBED_BACKEND": backend, "PYTHONPATH": str(root)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=root)  # "-c" puts the cwd first
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU["s"] = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if out.returncode:
        raise SystemExit(f"bench: the {backend} child failed:\n{out.stderr[-2000:]}")
    return wall, out.stdout


def export_onnx(cache: Path, root: Path = ROOT) -> float:
    code = f"from core.recall.embedding.embedder import Embedder; Embedder(None, {str(cache)!r}).load()"
    return _child(code, "onnx", root)[0]


PHASES = (  # (label, module, attribute path): the steps of a cold ingest, timed in the child
    ("read", "core.ingest", "load_conversations"),
    ("chunks+facets", "core.ingest", "build_chunks"),
    ("embedding", "core.recall.embedding.embedder", "Embedder.encode"),
    ("store writes", "core.recall.embedded.store", "EmbeddedStore.write_user"),
)
PARTS = (  # the parts of "embedding" (only modules the backend imports anyway)
    ("model load", "core.recall.embedding.embedder", "Embedder.load"),
    ("tokenise", "core.recall.embedding.onnx_model", "OnnxModel.tokenize"),
    ("tokenise", "core.recall.embedding.onnx_model", "OnnxModel.token_counts"),  # onnx@REV before tokenize existed
    ("onnxruntime", "core.recall.embedding.onnx_model", "OnnxModel.encode_tokens"),
    ("onnxruntime", "core.recall.embedding.onnx_model", "OnnxModel.encode"),
    ("cache writes", "core.recall.embedding.embedder", "EmbeddingCache.put_many"),
)
TIMED = """
import importlib, json, time
T, busy = {}, set()
def timed(label, f):
    def wrapper(*a, **k):
        if label in busy:  # counted once when one timed step calls another of its kind
            return f(*a, **k)
        busy.add(label); t = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            busy.discard(label); T[label] = T.get(label, 0.0) + time.perf_counter() - t
    return wrapper
for label, module, path in PHASES + PARTS:
    try:
        owner = importlib.import_module(module)
    except ImportError:
        continue
    *outer, name = path.split(".")
    for part in outer:
        owner = getattr(owner, part, None)
    if owner is not None and name in vars(owner):
        setattr(owner, name, timed(label, getattr(owner, name)))
"""


def ingest(dataset: Path, store: Path, cache: Path, backend: str, root: Path = ROOT) -> tuple[float, dict]:
    """(wall seconds, build_store's stats plus "phases": seconds in each step of PHASES)."""
    code = (f"PHASES, PARTS = {PHASES!r}, {PARTS!r}\n{TIMED}\nfrom core.recall.engine import build_store\n"
            f"s = build_store({str(dataset)!r}, {str(store)!r}, cache_dir={str(cache)!r}).to_dict()\n"
            "print(json.dumps({**s, 'phases': T}))")
    wall, out = _child(code, backend, root)
    return wall, json.loads(out.strip().splitlines()[-1])


def cache_vectors(cache: Path) -> dict[bytes, np.ndarray]:
    path = next(cache.glob("embeddings-*.sqlite"))
    with sqlite3.connect(str(path)) as db:
        return {bytes(k): np.frombuffer(v, dtype=np.float32) for k, v in db.execute("SELECT key, vec FROM emb")}


def compare_vectors(a: dict[bytes, np.ndarray], b: dict[bytes, np.ndarray]) -> tuple[int, float, float]:
    keys = sorted(set(a) & set(b))
    x, y = np.stack([a[k] for k in keys]), np.stack([b[k] for k in keys])
    return len(keys), float(np.abs(x - y).max()), float(np.einsum("ij,ij->i", x, y).min())


def route_lists(pool) -> list[list[str]]:
    """Each route's top-`DEPTH` memory ids, best first."""
    out = []
    for j in range(pool.ranks.shape[1]):
        rows = np.flatnonzero((pool.ranks[:, j] > 0) & (pool.ranks[:, j] <= DEPTH))
        out.append([pool.chunks[r].memory_id for r in rows[np.argsort(pool.ranks[rows, j])]])
    return out


def compare_rankings(label: str, stores: dict[str, tuple[Path, Path]], questions) -> bool:
    from core.recall.embedding.embedder import Embedder
    from core.recall.engine import Engine
    from core.records import ROUTES

    engines = {b: Engine(store, embedder=Embedder(None, cache, backend=b)) for b, (store, cache) in stores.items()}
    (a, ea), (b, eb) = engines.items()
    differ = []
    try:
        for q in questions:
            pa, pb = (e.recall(q.user_id, q.text, DEPTH) for e in (ea, eb))
            la, lb = route_lists(pa), route_lists(pb)
            differ += [(q.question_id, ROUTES[j], _how(la[j], lb[j], j, {a: pa, b: pb})) for j in range(len(ROUTES))
                       if la[j] != lb[j]]
    finally:
        for e in engines.values():
            e.close()
    lists = len(questions) * len(ROUTES)
    print(f"{label}: {len(questions)} questions x {len(ROUTES)} routes = {lists} top-{DEPTH} lists; "
          f"identical {lists - len(differ)}, different {len(differ)}")
    for qid, route, how in differ[:10]:
        print(f"  {qid} {route}: {how}")
    return not differ


def _how(la: list[str], lb: list[str], j: int, pools: dict) -> str:
    """Where two top lists part: one swap of neighbours (with the pair's score gap in each
    backend's pool), or the first differing place."""
    at = [i for i, (x, y) in enumerate(zip(la, lb)) if x != y]
    if len(la) == len(lb) and len(at) == 2 and at[1] == at[0] + 1 and la[at[0]] == lb[at[1]] and la[at[1]] == lb[at[0]]:
        gaps = []
        for name, pool in pools.items():
            row = {c.memory_id: r for r, c in enumerate(pool.chunks)}
            gaps.append(f"{name} {abs(pool.scores[row[la[at[0]]], j] - pool.scores[row[la[at[1]]], j]):.2e}")
        return f"neighbours #{at[0] + 1} and #{at[1] + 1} swap; their score gap: {', '.join(gaps)}"
    return f"first differs at #{at[0] + 1 if at else min(len(la), len(lb)) + 1}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--backends", default="onnx,torch",
                        help="comma-separated, run in this order: onnx, torch, onnx@REV (onnx as at git revision REV); "
                             "ratios are against the first")
    parser.add_argument("--work", type=Path, help="folder for the stores and caches (default: a temporary one)")
    parser.add_argument("--no-rankings", action="store_true", help="only time the ingests and compare the vectors")
    args = parser.parse_args(argv)
    from core.ingest.questions import load_questions
    from core.recall.engine import DEMO_DATASET, DEMO_QUESTIONS

    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    work = args.work or Path(tempfile.mkdtemp(prefix="memsense-bench-embed-"))
    for b in backends:
        shutil.rmtree(work / b, ignore_errors=True)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {os.cpu_count()} CPUs; work in {work}")
    for b in backends:
        name, root = source(b, work)
        if name == "onnx":
            prep = work / b / "onnx-export"
            print(f"one-time ONNX export for {b} (torch import, model load, export, checks): "
                  f"{export_onnx(prep, root):.1f} s ({CPU['s']:.1f} s of CPU)", flush=True)
    stats, cpu = {}, {}
    for b in backends:
        name, root = source(b, work)
        cache = work / b / "cache"
        cache.mkdir(parents=True)
        if name == "onnx":
            shutil.copytree(work / b / "onnx-export" / "onnx", cache / "onnx")
        wall, s = ingest(args.dataset, work / b / "store", cache, name, root)
        stats[b], cpu[b] = wall, CPU["s"]
        print(f"cold ingest {args.dataset.name} with {b}: {wall:.1f} s from process start, {cpu[b]:.1f} s of CPU "
              f"({s['seconds']:.1f} s in build_store; {s['texts_embedded']} texts embedded, "
              f"{s['users']} users, {s['session_chunks'] + s['turn_chunks']} chunks); "
              f"load {os.getloadavg()[0]:.2f}", flush=True)
        top = {label for label, _, _ in PHASES}
        steps = {k: v for k, v in s["phases"].items() if k in top}
        parts = {k: v for k, v in s["phases"].items() if k not in top}
        print("  where the time went: " + ", ".join(f"{k} {v:.1f} s" for k, v in steps.items())
              + f", the rest (process start, imports, checks) {wall - sum(steps.values()):.1f} s; in embedding: "
              + ", ".join(f"{k} {v:.1f} s" for k, v in parts.items()), flush=True)
    first = backends[0]
    for b in backends[1:]:
        print(f"{b} against {first}: {stats[b] / stats[first]:.2f}x the wall time, {cpu[b] / cpu[first]:.2f}x the CPU")
    reference = "torch" if "torch" in backends else first
    vectors = {b: cache_vectors(work / b / "cache") for b in backends}
    for b in backends:
        if b != reference:
            n, diff, cos = compare_vectors(vectors[b], vectors[reference])
            print(f"vectors of {n} texts: max |{b} - {reference}| {diff:.2e}, least cosine {cos:.8f}")
    if args.no_rankings or not {"onnx", "torch"} <= set(backends):
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        return 0
    pair = ("onnx", "torch")
    same = compare_rankings(f"{args.dataset.name} questions",
                            {b: (work / b / "store", work / b / "cache") for b in pair},
                            load_questions(args.dataset))
    for b in pair:
        ingest(DEMO_DATASET, work / b / "demo-store", work / b / "cache", b)
    same &= compare_rankings("demo questions", {b: (work / b / "demo-store", work / b / "cache") for b in pair},
                             load_questions(DEMO_QUESTIONS))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
