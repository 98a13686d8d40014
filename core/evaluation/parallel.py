"""Score configs on a fixed list of judged questions, in this process or across worker processes.

An `Evaluator` splits the questions into `jobs` shards of about equal pool rows (fewer when a
shard would have less than `MIN_SHARD_ROWS`); each shard's
re-rank arrays (`core.evaluation.batch.PoolBatch`, without the pools themselves) and session
grades go to one worker process once, when it starts. A large user's unit vectors, which every
shard needs, are not in them: they are made once in shared memory, which every worker maps
(`core.evaluation.batch_chunks.SharedVectors`: one copy in all, where each worker had its own,
about 290 MB at 100,000 chunks). Scoring a config sends it to every worker; each re-ranks
its shard at once and sends back the metric values of its questions, so one config keeps every
core busy. Configs can be submitted ahead of their results (the search asks for its next trial
while this one is scored); results come back in submission order, so a seeded search makes the
same trials whatever the number of jobs.

Workers are started with the 'spawn' method: a fresh interpreter, never a fork of a process
that runs Qt or other threads. `close()` (or leaving the `with` block, also on cancel or
error) stops them. A config the batched re-rank cannot take (another fusion scheme, or pools
recalled less deep than its `route_limit`) is scored in this process through `rerank`: once the
workers hold the arrays, this process keeps only the pools, built and sent one shard at a time.
"""
from __future__ import annotations

import multiprocessing
from collections import deque
from dataclasses import fields
from typing import Any, Mapping, Sequence

import numpy as np

from core.config import Config
from core.errors import MemsenseError
from core.evaluation import shared_rows
from core.evaluation.batch import PoolBatch
from core.evaluation.batch_chunks import SharedVectors
from core.evaluation.batch_metrics import Grades
from core.evaluation.judged import session_qrels
from core.machine import usable_cpus
from core.recall.pool import RecallPool
from core.records import Question

Metric = tuple[str, int]
"""A metric's key and its cut-off, e.g. ("recall_all@4", 4)."""


MIN_SHARD_ROWS = 20_000
"""Pool rows a worker process must have to be worth starting (a shard of fewer re-ranks in less
time than a worker takes to start); smaller question sets are scored in this process."""


def default_jobs() -> int:
    """The cores this process may use."""
    return usable_cpus()


def pack(cfg: Config) -> dict[str, Any]:
    """A config as plain values (its route weights are a read-only mapping, which pickle refuses)."""
    return {f.name: dict(cfg.route_weights) if f.name == "route_weights" else getattr(cfg, f.name)
            for f in fields(Config)}


class _Shard:
    """One shard's batch and grades: the work of one worker (or of this process)."""

    def __init__(self, batch: PoolBatch, grades: Grades, metrics: Sequence[Metric]):
        self.batch, self.grades, self.metrics = batch, grades, list(metrics)

    def lean(self) -> "_Shard":
        """This shard without its pools: what a worker process needs."""
        return _Shard(self.batch.without_pools(), self.grades, self.metrics)

    def bare(self) -> "_Shard":
        """This shard without its arrays: what this process keeps once a worker has them."""
        return _Shard(self.batch.without_arrays(), self.grades, self.metrics)

    def values(self, cfg: Config) -> np.ndarray:
        """(len(metrics), questions) metric values of this shard's questions."""
        picked, count = self.batch.selections(cfg)
        return np.array([self.grades.values(name, k, picked, count) for name, k in self.metrics]).reshape(
            len(self.metrics), len(count))


def _serve(conn) -> None:
    """A worker: map the shared matrices its shard names, receive the shard, then score each
    config received until None (or a closed pipe)."""
    if not shared_rows.receive(conn):
        return
    try:
        shard = conn.recv()
    except (EOFError, OSError):
        return
    if shard is None:  # closed before it was sent
        return
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        try:
            conn.send(("ok", shard.values(Config(**message))))
        except Exception as exc:  # noqa: BLE001 - the parent raises it as its own error
            conn.send(("error", f"{type(exc).__name__}: {exc}"))


class Evaluator:
    """Metric values of every question for configs (see the module docstring)."""

    def __init__(self, pools: Mapping[str, RecallPool], questions: Sequence[Question], metrics: Sequence[Metric],
                 jobs: int = 1):
        self.questions = list({q.question_id: q for q in questions}.values())
        self.ids = [q.question_id for q in self.questions]
        self.metrics = list(metrics)
        self._pools = [pools[q] for q in self.ids]
        rows = sum(p.size for p in self._pools)
        parts = _split([p.size for p in self._pools], max(1, min(jobs, rows // max(MIN_SHARD_ROWS, 1))))
        self._workers: list[tuple[Any, Any]] = []
        self._pending: deque[int] = deque()  # tickets sent to the workers, oldest first
        self._done: dict[int, np.ndarray] = {}
        self._next = 0
        shared = SharedVectors(self._pools) if len(parts) > 1 else None  # a large user's vectors: one copy for all
        self.shared_bytes = 0
        """Bytes of vectors the workers map from one copy (`core.evaluation.batch_chunks.SharedVectors`)."""
        try:
            if len(parts) > 1:
                self._start(len(parts))  # the interpreters start while the shards are built here
            self._shards = []
            for n, (a, b) in enumerate(parts):  # one shard's arrays at a time in this process
                shard = _Shard(PoolBatch(self._pools[a:b], shared=shared),
                               Grades([session_qrels(q) for q in self.questions[a:b]]), self.metrics)
                if shared is not None:  # workers: each takes its shard
                    proc, conn = self._workers[n]
                    shared_rows.send(conn, shared.made, proc.pid)
                    conn.send(shard.lean())
                    shard = shard.bare()
                self._shards.append(shard)
        except BaseException:
            self.close()
            raise
        finally:
            if shared is not None:
                self.shared_bytes = sum(m.nbytes for m in shared.made)
                shared.close()

    @property
    def jobs(self) -> int:
        return max(1, len(self._workers))

    def _start(self, n: int) -> None:
        ctx = multiprocessing.get_context("spawn")
        for _ in range(n):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_serve, args=(child,), daemon=True, name="memsense-tune-worker")
            proc.start()
            child.close()
            self._workers.append((proc, parent))

    # ------------------------------------------------------------------ scoring

    def submit(self, cfg: Config) -> int:
        """Start scoring `cfg`; `result(ticket)` gives its values."""
        ticket = self._next
        self._next += 1
        if not self._workers or not self._shards[0].batch.batched(cfg):
            self._done[ticket] = self._local(cfg)
            return ticket
        message = pack(cfg)
        for _, conn in self._workers:
            conn.send(message)
        self._pending.append(ticket)
        return ticket

    def result(self, ticket: int) -> np.ndarray:
        """(len(metrics), len(questions)) values of a submitted config, in question order."""
        while ticket not in self._done:
            if not self._pending:
                raise KeyError(f"no config was submitted as ticket {ticket}")
            oldest = self._pending.popleft()
            self._done[oldest] = np.concatenate([self._receive(proc, conn) for proc, conn in self._workers], axis=1)
        return self._done.pop(ticket)

    def values(self, cfg: Config) -> np.ndarray:
        return self.result(self.submit(cfg))

    def many(self, cfgs: Sequence[Config]) -> list[np.ndarray]:
        """Every config's values, all submitted before the first result is taken."""
        tickets = [self.submit(c) for c in cfgs]
        return [self.result(t) for t in tickets]

    def _local(self, cfg: Config) -> np.ndarray:
        return np.concatenate([s.values(cfg) for s in self._shards], axis=1)

    def _receive(self, proc, conn) -> np.ndarray:
        try:
            status, payload = conn.recv()
        except (EOFError, OSError):
            self.close()
            raise MemsenseError(f"a tuning worker process stopped (exit code {proc.exitcode}); "
                                "run again, or use --jobs 1") from None
        if status != "ok":
            self.close()
            raise MemsenseError(f"a tuning worker failed: {payload}")
        return payload

    # ------------------------------------------------------------------ life cycle

    def close(self) -> None:
        """Stop the workers (idempotent); results not taken yet are dropped."""
        workers, self._workers = self._workers, []
        self._pending.clear()
        for _, conn in workers:
            try:
                conn.send(None)
            except (OSError, ValueError):
                pass
        for proc, conn in workers:
            proc.join(timeout=2)
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=2)
            conn.close()

    def __enter__(self) -> "Evaluator":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_workers", None):
            self.close()


def _split(sizes: Sequence[int], parts: int) -> list[tuple[int, int]]:
    """At most `parts` contiguous (start, end) ranges of about equal total size, none empty."""
    n = len(sizes)
    parts = max(1, min(parts, n))
    if parts == 1:
        return [(0, n)]
    cum = np.cumsum(sizes, dtype=np.float64)
    cuts = [0] + [int(np.searchsorted(cum, cum[-1] * j / parts)) + 1 for j in range(1, parts)] + [n]
    cuts = sorted(set(min(max(c, 1), n - 1) if 0 < j < parts else c for j, c in enumerate(cuts)))
    return [(a, b) for a, b in zip(cuts, cuts[1:]) if b > a]
