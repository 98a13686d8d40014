"""The Qdrant-server store with many users: open and list users, then a first search, in the
tenant layout (one collection, `user_id` tenant index) beside the older layout (one collection
per user) holding the same data, measured in one run.

    python tools/bench_qdrant_tenants.py [--users 1000] [--chunks 3]

No Qdrant server binary is installed here, so both layouts live in qdrant-client's local mode on
disk (`QdrantClient(path=…)`), which has the server's API. Local mode reads every point of the
folder into memory when its client is made (printed apart: a server does no such thing), and it
answers a filtered search by testing every point's payload in Python, where a server uses the
tenant index; opening the store and listing users is timed on the made client, with the number
of requests it took (the same whatever the number of users).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the project first, from any folder

from qdrant_client import QdrantClient  # noqa: E402

from core.cli.bench_scale import DIM, RandomEmbedder, synthetic_user  # noqa: E402
from core.recall.qdrant.store import QdrantStore  # noqa: E402
from core.records import DENSE_ROUTES  # noqa: E402
from tests.recall.qdrant_legacy import write_legacy_store  # noqa: E402


class Counter:
    """A client that counts the calls it forwards (each one request on a server)."""

    def __init__(self, client):
        self.client, self.calls = client, 0

    def __getattr__(self, name):
        attr = getattr(self.client, name)
        if not callable(attr):
            return attr

        def call(*args, **kwargs):
            self.calls += 1
            return attr(*args, **kwargs)
        return call


def measure(path: Path, user: str, query: np.ndarray) -> dict:
    t = time.perf_counter()
    client = Counter(QdrantClient(path=str(path)))  # local mode reads every point of the folder here
    loaded = time.perf_counter() - t
    t = time.perf_counter()
    store = QdrantStore(path, client=client)
    users = store.users()
    listed = time.perf_counter() - t
    requests = client.calls
    t = time.perf_counter()
    store.search(user, query, DENSE_ROUTES, 50)
    first = time.perf_counter() - t
    store.close()
    return {"users": len(users), "client_load_s": loaded, "open_and_list_s": listed, "list_requests": requests,
            "first_search_ms": first * 1e3}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", type=int, default=1000)
    ap.add_argument("--chunks", type=int, default=3, help="chunks per user")
    args = ap.parse_args()
    load = os.getloadavg()
    rng = np.random.default_rng(0)
    data = {f"user-{i:04d}": synthetic_user(f"user-{i:04d}", args.chunks, rng) for i in range(args.users)}
    query = rng.standard_normal(DIM)
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # local mode: payload indexes have no effect
        tenant, legacy = Path(tmp) / "tenant", Path(tmp) / "legacy"
        t = time.perf_counter()
        store = QdrantStore(tenant, create=True)
        for user, (chunks, vectors) in data.items():
            store.write_user(user, chunks, vectors, RandomEmbedder.key, DIM)
        store.close()
        write_tenant = time.perf_counter() - t
        t = time.perf_counter()
        client = QdrantClient(path=str(legacy))
        write_legacy_store(client, data, RandomEmbedder.key, DIM)
        client.close()
        write_old = time.perf_counter() - t
        user = sorted(data)[len(data) // 2]
        rows = [("one collection, tenant index", write_tenant, measure(tenant, user, query)),
                ("one collection per user (older)", write_old, measure(legacy, user, query))]
    print(f"{args.users} users x {args.chunks} chunks, {DIM}-d, 7 routes; qdrant-client local mode on disk")
    for name, wrote, m in rows:
        print(f"  {name:32s} open the store and list its {m['users']} users {m['open_and_list_s'] * 1e3:7.1f} ms "
              f"({m['list_requests']} requests)   first search {m['first_search_ms']:7.1f} ms   "
              f"[local mode loading the folder first: {m['client_load_s']:.2f} s; written in {wrote:.1f} s]")
    print(f"load average before / after: {' '.join(f'{x:.2f}' for x in load)} / "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
