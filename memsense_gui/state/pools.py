"""The current query's recall pool, and the deepest pool ranked from it so far.

Re-ranking never searches: a config is re-ranked on the deepest pool held (cut to its
`route_limit`) once that pool serves it. Deeper route lists are an explicit job, `deepen_pool`,
submitted to a task runner (ranking lists thousands deep on a large user takes a while, so never
on the UI thread), which also re-ranks the deeper pool under the configs that wait for it (as
long again); `deepened` follows on the UI thread, and `ranked(cfg)` hands each such ranking
over once. A re-rank too long for the UI thread on a pool deep enough already is a job too
(`rank`; `ranked_ready` follows), one at a time. One deepening of the current pool at a
time: asks meanwhile are asked again when it ends. A new query drops the last one's deepening
(cancelled if it has not started, its result ignored if it has).
"""
from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from core.config import Config
from core.rank.ranking import Ranking
from core.recall.pool import RecallPool, deepen
from memsense_gui.workers import jobs
from memsense_gui.workers.runner import Task, TaskRunner


KEEP_RANKED = 4
"""Rankings made on the runner kept for handing over: the settings may have moved on meanwhile."""


class PoolHolder(QObject):
    """`pool` as recalled, `deep` as deep as deepened so far; `deepen(depth)` on the runner."""

    deepening = Signal(bool)  # True while the current pool's deeper lists are being ranked
    deepened = Signal(object)  # RecallPool (the query's pool): `deep` is deeper; ask `ready` again
    failed = Signal(object)  # the exception of a deepening of the current pool
    ranked_ready = Signal(object)  # Config: a re-rank asked with `rank` is done; ask `ranked` for it

    def __init__(self, runner: TaskRunner | None = None, parent: QObject | None = None):
        super().__init__(parent)
        self.runner = runner if runner is not None else TaskRunner("memsense-deepen", self)
        self.pool: RecallPool | None = None
        self.deep: RecallPool | None = None
        self._task: Task | None = None
        self._token: object = None
        self._ranked: list[tuple[Config, Ranking | Exception]] = []  # made on the runner, not yet handed over
        self._rank_task: Task | None = None
        self._rank_token: object = None

    @property
    def is_deepening(self) -> bool:
        return self._task is not None

    @property
    def is_ranking(self) -> bool:
        return self._rank_task is not None

    def set(self, pool: RecallPool | None) -> None:
        """A new query's pool (None: no query): the last one's deepening and re-rank no longer count."""
        if self._task is not None:
            self._task.cancel()
            self._task, self._token = None, None
            self.deepening.emit(False)
        if self._rank_task is not None:
            self._rank_task.cancel()
            self._rank_task, self._rank_token = None, None
        self.pool = self.deep = pool
        self._ranked = []

    def ready(self, depth: int) -> bool:
        """Whether a re-rank `depth` deep can read a pool now, with no route list to rank."""
        pool, deep = self.pool, self.deep
        return pool is not None and deep is not None and (deep.serves(depth) or pool.ready(depth))

    def pool_for(self, depth: int) -> RecallPool:
        """The deepest pool held that serves `depth` (`ready(depth)` must hold); lists another
        job ranked already (this query's source has them) are taken as they are, a quick cut."""
        assert self.pool is not None and self.deep is not None
        if self.deep.serves(depth):
            return self.deep
        deeper = deepen(self.pool, depth)  # ready: a cut of lists ranked before, no ranking here
        if deeper.depth > self.deep.depth:
            self.deep = deeper
        return deeper

    @property
    def deepest_ready(self) -> bool:
        """Whether the query's deepest lists can be read now (`pool_for(max_depth)`)."""
        return self.pool is not None and self.ready(self.pool.max_depth)

    def deepen(self, depth: int, configs: tuple[Config, ...] = ()) -> None:
        """Rank the current pool `depth` deep on the runner, and re-rank it there under each of
        `configs` (nothing if a deepening is under way)."""
        pool = self.pool
        if pool is None or self._task is not None or self.ready(depth):
            return
        token = self._token = object()
        self._task = self.runner.submit("deepen the recall pool", jobs.deepen_pool, pool, depth, configs,
                                        succeeded=lambda done: self._done(token, done, None),
                                        failed=lambda exc: self._done(token, None, exc))
        self.deepening.emit(True)

    def rank(self, cfg: Config) -> None:
        """Re-rank the pool under `cfg` on the runner (`ready(cfg.route_limit)` must hold; nothing
        if a re-rank is under way: ask again on `ranked_ready`)."""
        if self.pool is None or self._rank_task is not None:
            return
        token = self._rank_token = object()
        self._rank_task = self.runner.submit(
            "re-rank the recall pool", jobs.rerank_each, self.pool_for(cfg.route_limit), (cfg,),
            succeeded=lambda outcomes: self._ranked_done(token, outcomes),
            failed=lambda exc: self._ranked_done(token, ((cfg, exc if isinstance(exc, Exception) else RuntimeError(exc)),)))

    def has_ranked(self, cfg: Config) -> bool:
        """Whether a ranking under `cfg` made on the runner waits to be handed over."""
        return any(made == cfg for made, _ in self._ranked)

    def ranked(self, cfg: Config) -> Ranking | None:
        """The ranking under `cfg` made on the runner (by a deepening or `rank`), handed over once
        (None: re-rank it here); a re-rank that failed there raises its exception here."""
        for i, (made, outcome) in enumerate(self._ranked):
            if made == cfg:
                del self._ranked[i]
                if isinstance(outcome, Exception):
                    raise outcome
                return outcome
        return None

    def _ranked_done(self, token: object, outcomes: jobs.Reranked) -> None:
        if token is not self._rank_token:
            return  # an earlier query's re-rank
        self._rank_task, self._rank_token = None, None
        self._ranked = [*self._ranked, *outcomes][-KEEP_RANKED:]
        self.ranked_ready.emit(outcomes[-1][0])

    def _done(self, token: object, done: jobs.Deepened | None, error: BaseException | None) -> None:
        if token is not self._token:
            return  # an earlier query's deepening
        self._task, self._token = None, None
        self.deepening.emit(False)
        if error is not None:
            self.failed.emit(error)
            return
        assert done is not None and self.deep is not None
        if done.pool.depth > self.deep.depth:
            self.deep = done.pool
        self._ranked = [*self._ranked, *done.rankings][-KEEP_RANKED:]
        self.deepened.emit(self.pool)
