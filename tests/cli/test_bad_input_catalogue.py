"""The bad-input catalogue: what a hostile but realistic user tries, through the real CLI.

Every case runs `core.cli.main` in-process against one demo store built once per session and
asserts: exit code 1 (2 when the command line itself is wrong: `usage=True`), exactly one stderr
line `memsense: error: ...` naming the problem (no traceback, no warning noise), no slow work
before a cheap check could have failed (the embedder refuses to run unless the case needs it),
and afterwards a reference search over the
store is byte-identical and the store's files are unchanged. The session summary prints the
number of cases, tracebacks and cases with data changed (`tests/cli/conftest.py`).
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import sqlite3
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from core.cli.main import main
from tests.cli.conftest import TALLY, digest

QUERY = "How many races has Ana run in 2024?"
ROUTES = ("vec_full", "vec_user", "vec_asst", "vec_next_user", "lexical",
          "facet_personal_info", "facet_preferences", "facet_events")
ROOT = Path(__file__).resolve().parents[2]
DEMO_DATASET = ROOT / "core" / "demo" / "demo-conversations.jsonl"
DEMO_QUESTIONS = ROOT / "core" / "demo" / "demo-questions.json"


PROGRESS = re.compile(r"^\r?.{1,40} \[[#.]+\] \d+/\d+(  \(about .{1,20} left\))?$")
"""A progress bar line on stderr (`stage [###...] done/total`, perhaps the time left): progress, not a message."""


def _row(**fields) -> dict:
    return {"memory_id": "m1", "rrf_score": 0.1, **fields}


def _json(data) -> str:
    return json.dumps(data, allow_nan=True)


FILES: dict[str, str | bytes] = {
    # configs
    "config-weight-abc.json": _json({"routeWeights": {"vec_full": "abc"}}),
    "config-weight-null.json": _json({"routeWeights": {"vec_full": None}}),
    "config-weight-list.json": _json({"routeWeights": {"vec_full": [1]}}),
    "config-weight-negative.toml": "[routeWeights]\nvec_full = -1.0\n",
    "config-weight-inf.toml": "[routeWeights]\nlexical = inf\n",
    "config-weight-unknown-route.json": _json({"routeWeights": {"vec_everything": 1.0}}),
    "config-weights-all-zero.json": _json({"routeWeights": {r: 0 for r in ROUTES}}),
    "config-topk-float.json": _json({"topK": 50.0, "candidateLimitMin": 2000}),
    "config-topk-fraction.json": _json({"topK": 4.5}),
    "config-alpha-nan.json": '{"alpha": NaN}',
    "config-alpha-inf.toml": "alpha = inf\n",
    "config-alpha-string.json": _json({"alpha": "0.1"}),
    "config-alpha-bool.json": _json({"alpha": True}),
    "config-lambda-huge.json": _json({"lambda": 1e308}),
    "config-session-first-yes.json": _json({"sessionFirst": "yes"}),
    "config-fusion-number.json": _json({"fusion": 5}),
    "config-fusion-unknown.toml": 'fusion = "borda"\n',
    "config-as-of-yesterday.json": _json({"qualityAsOf": "yesterday"}),
    "config-unknown-key.toml": "alpah = 0.2\n",
    "config-top-level-list.json": "[1, 2]",
    "config-route-weights-string.json": _json({"routeWeights": "abc"}),
    "config-invalid.toml": "alpha = = 0.1\n",
    "config-invalid.json": '{"alpha": 0.1,',
    "config-non-utf8.toml": b"alpha = 0.1\n# caf\xe9\n",
    "config-non-utf8.json": b'{"alpha": 0.1, "x": "\xff"}',
    "config.yaml": "alpha: 0.1\n",
    # rerank rows
    "rows-nan-embedding.json": _json({"rows": [_row(embedding=[float("nan"), 1.0])]}),
    "rows-nan-in-embedding-string.json": _json({"rows": [_row(embedding="[NaN, 1]")]}),
    "rows-inf-rrf.json": _json({"rows": [_row(rrf_score=float("inf"))]}),
    "rows-nan-rrf.json": _json({"rows": [_row(rrf_score=float("nan"))]}),
    "rows-inf-score.json": _json({"rows": [_row(score=float("inf"))]}),
    "rows-string-rrf.json": _json({"rows": [_row(rrf_score="0.1")]}),
    "rows-bool-rrf.json": _json({"rows": [_row(rrf_score=True)]}),
    "rows-tags-string.json": _json({"rows": [_row(tags="running")]}),
    "rows-tags-number.json": _json({"rows": [_row(tags=5)]}),
    "rows-tags-mixed.json": _json({"rows": [_row(tags=["a", 5, None])]}),
    "rows-routes-string.json": _json({"rows": [_row(routes="vec_full")]}),
    "rows-routes-number.json": _json({"rows": [_row(routes=5)]}),
    "rows-memory-id-list.json": _json({"rows": [_row(memory_id=[1])]}),
    "rows-memory-id-empty.json": _json({"rows": [_row(memory_id="")]}),
    "rows-memory-id-twice.json": _json({"rows": [_row(), _row(rrf_score=0.2)]}),
    "rows-missing-rrf.json": _json({"rows": [{"memory_id": "m1"}]}),
    "rows-embedding-object.json": _json({"rows": [_row(embedding={"a": 1})]}),
    "rows-embedding-bad-string.json": _json({"rows": [_row(embedding="[1,")]}),
    "rows-embedding-unsplit-numbers.json": _json({"rows": [_row(embedding="[0.5, 1]"), _row(memory_id="m2", embedding="[1 2]")]}),
    "rows-not-a-list.json": _json({"rows": {"m1": 0.1}}),
    "rows-cases-of-numbers.json": "[1, 2]",
    "rows-top-k-string.json": _json({"rows": [_row()], "top_k": "3"}),
    "rows-top-k-zero.json": _json({"rows": [_row()], "top_k": 0}),
    "rows-option-nan.json": '{"rows": [{"memory_id": "m1", "rrf_score": 0.1}], "options": {"alpha": NaN}}',
    "rows-option-unknown.json": _json({"rows": [_row()], "options": {"gamma": 1}}),
    "rows-name-list.json": _json({"name": [1], "rows": [_row()]}),
    "rows-non-utf8.json": b'{"rows": [{"memory_id": "\xff", "rrf_score": 0.1}]}',
    "rows-truncated.json": '{"rows": [{"memory_id": "m1", "rrf_',
    # judged questions, qrels, presets
    "questions-non-utf8.json": b'{"questions": [{"user": "demo-ana", "question": "caf\xe9?", "answer": "a", '
                               b'"category": 1, "evidence": ["D1:1"]}]}',
    "questions-invalid.json": '{"questions": [',
    "questions-unknown-user.json": _json({"questions": [{"user": "nobody", "question": "who?", "answer": "a",
                                                         "category": 1, "evidence": ["D1:1"]}]}),
    "questions-none-judged.json": _json({"questions": [{"user": "demo-ana", "question": "who?", "answer": "a",
                                                        "category": 5, "evidence": []}]}),
    "qrels-non-utf8.qrels": b"q1 0 demo-ana:S00\xff 1\n",
    "qrels-three-columns.qrels": "q1 0 demo-ana:S001\n",
    "qrels-unknown-question.qrels": "no-such-question 0 demo-ana:S001 1\n",
    "qrels-grade-nine.qrels": "{qid} 0 demo-ana:S001 9\n",
    "qrels-grade-word.qrels": "{qid} 0 demo-ana:S001 high\n",
    "qrels-twice.qrels": "{qid} 0 demo-ana:S001 1\n{qid} 0 demo-ana:S001 2\n",
    "qrels-other-user.qrels": "{qid} 0 demo-mei:S001 1\n",
    "qrels-unknown-doc.qrels": "{qid} 0 demo-ana:S099 1\n",
    "qrels.qrels": "{qid} 0 demo-ana:S001 1\n",
    "presets-non-utf8.json": b'{"mine\xff": {"alpha": 0.2}}',
    "presets-invalid.json": '{"mine": ',
    "presets-list.json": "[1, 2]",
    "presets-bad-value.json": _json({"mine": {"alpha": "abc"}}),
    "presets-entry-list.json": _json({"mine": [1]}),
    "presets-named-builtin.json": _json({"memsense": {"alpha": 0.5}}),
    # datasets
    "dataset-non-utf8.jsonl": b'{"user": "u", "session": 1, "time": "2024-01-01", "speaker": "A", "text": "caf\xe9"}\n',
    "dataset-invalid.json": "[{",
    "dataset-empty.jsonl": "",
    "dataset-bad-line.jsonl": '{"user": "u", "session": 1, "time": "2024-01-01", "speaker": "A", "text": "hi"}\nnot json\n',
    "dataset-session-zero.jsonl": '{"user": "u", "session": 0, "time": "2024-01-01", "speaker": "A", "text": "hi"}\n',
    "not-a-store.txt": "just a file\n",
}


@dataclass(frozen=True)
class Env:
    store: Path
    cache: Path
    files: Path
    home: Path
    work: Path
    tuned_model: Path
    other_folder_model: Path
    qid: str


@dataclass(frozen=True)
class Case:
    id: str
    argv: tuple[str, ...]
    expect: str  # what the one error line must say (case-insensitive substring)
    setup: Callable[[Env, contextlib.ExitStack, pytest.MonkeyPatch], None] | None = None
    may_embed: bool = False  # the error can only show after embedding (cache writes)
    code: int = 1  # the exit status: 1 the command failed, 2 the command line is wrong


def C(id: str, argv: str | tuple, expect: str, setup=None, may_embed: bool = False, usage: bool = False) -> Case:
    return Case(id, tuple(argv.split("\x1f")) if isinstance(argv, str) else tuple(argv), expect, setup, may_embed,
                2 if usage else 1)


S = ("--store", "{store}", "--cache", "{cache}")
SEARCH = ("search", *S, "--user", "demo-ana")
EVAL = ("eval", "{demoq}", *S, "--quiet")
TUNE = ("tune", "{demoq}", *S, "--train", "demo-ana", "--trials", "3", "--quiet")


# ---------------------------------------------------------------- setups

def _qdrant_timeout(value: str) -> Callable[[Env, contextlib.ExitStack, pytest.MonkeyPatch], None]:
    """$MEMSENSE_QDRANT_TIMEOUT set to `value` (a Qdrant server's whole-request deadline)."""
    return lambda env, stack, mp: mp.setenv("MEMSENSE_QDRANT_TIMEOUT", value)


def _locked(env: Env, stack: contextlib.ExitStack, mp) -> None:
    from core.recall.backends import open_store

    store = open_store(env.store, write=True)  # another process writing to it
    stack.callback(store.close)


def _garbage_cache(env: Env, stack, mp) -> None:
    from core.recall.embedding.embedder import default_model_path
    from core.recall.embedding.model_identity import model_key

    cache = env.work / "garbage-cache"
    cache.mkdir()
    (cache / f"embeddings-{model_key(default_model_path())}.sqlite").write_bytes(b"not a database " * 300)


class _StubModel:
    """Deterministic unit vectors of the real model's size: the cache faults below are about
    SQLite, not about the model, so the model need not be loaded."""

    def get_sentence_embedding_dimension(self) -> int:
        return 384

    def encode(self, texts, **kwargs):
        out = np.stack([np.random.default_rng(abs(hash(t)) % 2**32).normal(size=384) for t in texts])
        return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)


def _cache_copy(env: Env, mp, after_open: Callable) -> None:
    from core.recall.embedding import embedder as embed

    cache = env.work / "cache-copy"
    shutil.copytree(env.cache, cache)
    original = embed.EmbeddingCache.__init__

    def init(self, path):
        original(self, path)
        after_open(self, path)

    mp.setattr(embed.EmbeddingCache, "__init__", init)
    mp.setattr(embed.Embedder, "load", lambda self: setattr(self, "_model", _StubModel()))


def _read_only_cache(env: Env, stack, mp) -> None:
    """As the test runs as root, a read-only file is a read-only SQLite connection."""

    def reopen(cache, path):
        cache._db.close()
        cache._db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)

    _cache_copy(env, mp, reopen)


def _full_disk(env: Env, stack, mp) -> None:
    """SQLite's own "database or disk is full": the file may not grow by a single page."""

    def cap(cache, path):
        pages = cache._db.execute("PRAGMA page_count").fetchone()[0]
        cache._db.execute(f"PRAGMA max_page_count = {pages}")
        with contextlib.suppress(sqlite3.OperationalError):  # fill the last free bytes: the file is now full
            for n in range(1000):
                with cache._db:
                    cache._db.execute("INSERT INTO emb VALUES (?, ?)", (b"filler%d" % n, b"\0" * 512))

    _cache_copy(env, mp, cap)


def _damaged_copy(harm: str):
    """A copy of the demo store whose demo-ana data is garbled or gone (the original is untouched)."""

    def setup(env: Env, stack, mp) -> None:
        from core.recall.embedded.store import DB

        copy = env.work / "damaged-store"
        shutil.copytree(env.store, copy)
        with contextlib.closing(sqlite3.connect(copy / DB)) as db:
            (file,) = db.execute("SELECT file FROM users WHERE user_id = 'demo-ana'").fetchone()
        vectors = next(p for p in copy.rglob("*") if p.is_file() and p.name == Path(file).name)
        if harm == "garbled":
            vectors.write_bytes(b"\xff" * 64 + vectors.read_bytes()[64:])
        else:
            vectors.unlink()

    return setup


def _stdin(data: bytes):
    """Standard input holding `data` (for `-` in place of a file or a query)."""

    def setup(env: Env, stack, mp) -> None:
        from core import files

        mp.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
        mp.setattr(files, "_stdin", None)

    return setup


def _presets_with(name: str):
    def setup(env: Env, stack, mp) -> None:
        (env.home / "presets.json").write_bytes((env.files / name).read_bytes())

    return setup


# ---------------------------------------------------------------- the catalogue

CASES: list[Case] = [
    # -- queries and search arguments
    C("query-non-utf8", (*SEARCH, b"caf\xe9 \xff".decode("utf-8", "surrogateescape")), "not valid utf-8"),
    C("query-empty", (*SEARCH, ""), "query is empty"),
    C("query-blank", (*SEARCH, " \t\n "), "query is empty"),
    C("query-huge", (*SEARCH, "word " * 30_000), "the limit is"),
    C("query-only-escapes", (*SEARCH, "\x1b[31m\x1b[0m"), "control character"),
    C("query-with-nul", (*SEARCH, "how\x00many"), "the query holds a nul byte"),
    C("user-unknown", ("search", *S, "--user", "nobody", QUERY), "unknown user 'nobody'"),
    C("user-empty", ("search", *S, "--user", "", QUERY), "user"),
    C("user-with-escapes", ("search", *S, "--user", "\x1b]0;pwned\x07", QUERY), "unknown user"),
    C("top-k-zero", (*SEARCH, QUERY, "--top-k", "0"), "argument --top-k: must be a whole number from 1 to 50",
      usage=True),
    C("top-k-negative", (*SEARCH, QUERY, "--top-k", "-3"), "argument --top-k: must be a whole number", usage=True),
    C("top-k-huge", (*SEARCH, QUERY, "--top-k", "1000"), "argument --top-k: must be a whole number", usage=True),
    C("top-k-word", (*SEARCH, QUERY, "--top-k", "many"), "--top-k", usage=True),
    C("preset-unknown", (*SEARCH, QUERY, "--preset", "fastest"), "unknown preset 'fastest'"),
    C("preset-and-config", (*SEARCH, QUERY, "--preset", "memsense", "--config", "{files}/config-alpha-nan.json"),
      "not allowed with", usage=True),
    C("command-unknown", ("serach", *S), "invalid choice", usage=True),
    C("option-unknown", (*SEARCH, QUERY, "--fast"), "unrecognized arguments", usage=True),
    C("analyzer-unknown", (*SEARCH, QUERY, "--analyzer", "porter"), "--analyzer", usage=True),
    C("session-dense-unknown", (*SEARCH, QUERY, "--session-dense", "median"), "--session-dense", usage=True),
    C("store-missing-argument", ("search", "--user", "demo-ana", QUERY), "--store", usage=True),
    # -- stores
    C("store-empty-path", ("search", "--store", "", "--cache", "{cache}", "--user", "demo-ana", QUERY), "--store is empty", usage=True),
    C("store-blank-path", ("search", "--store", "  ", "--cache", "{cache}", "--user", "demo-ana", QUERY), "--store is empty", usage=True),
    C("store-does-not-exist", ("search", "--store", "{work}/no-such-store", "--user", "demo-ana", QUERY), "no memory store"),
    C("store-is-a-file", ("search", "--store", "{files}/not-a-store.txt", "--user", "demo-ana", QUERY), "not a store folder", usage=True),
    C("store-is-an-empty-folder", ("search", "--store", "{files}", "--user", "demo-ana", QUERY), "no memory store"),
    C("store-locked", (*SEARCH, QUERY), "open in another process", setup=_locked),
    C("store-user-garbled", ("search", "--store", "{work}/damaged-store", "--cache", "{cache}", "--user", "demo-ana",
                             QUERY), "memsense drop", setup=_damaged_copy("garbled")),
    C("store-user-file-deleted", ("search", "--store", "{work}/damaged-store", "--cache", "{cache}", "--user",
                                  "demo-ana", QUERY), "demo-ana", setup=_damaged_copy("deleted")),
    C("explain-user-file-deleted", ("explain", "--store", "{work}/damaged-store", "--cache", "{cache}", "--user",
                                    "demo-ana", QUERY, "--memory", "demo-ana:S001:P00"), "demo-ana",
      setup=_damaged_copy("deleted")),
    C("qdrant-url-down", ("search", "--store", "http://127.0.0.1:9", "--user", "demo-ana", QUERY), "qdrant server"),
    C("qdrant-url-no-host", ("search", "--store", "http://", "--user", "demo-ana", QUERY), "qdrant"),
    C("qdrant-url-bad-host", ("search", "--store", "http://[::1", "--user", "demo-ana", QUERY), "qdrant"),
    C("qdrant-url-bad-port", ("search", "--store", "http://localhost:port", "--user", "demo-ana", QUERY), "qdrant"),
    # -- models
    C("model-missing", (*SEARCH, QUERY, "--model", "{work}/no-model"), "does not exist"),
    C("model-is-a-file", (*SEARCH, QUERY, "--model", "{files}/not-a-store.txt"), "does not exist"),
    C("model-folder-without-model", (*SEARCH, QUERY, "--model", "{files}"), "not a sentence-transformers model"),
    C("model-fine-tuned-same-name", (*SEARCH, QUERY, "--model", "{tuned_model}"), "another embedding model"),
    C("ingest-with-fine-tuned-model", ("ingest", "{demo}", *S, "--model", "{tuned_model}"), "another embedding model"),
    # -- embedding cache faults
    C("cache-garbage", ("search", "--store", "{store}", "--cache", "{work}/garbage-cache", "--user", "demo-ana", QUERY),
      "not a database", setup=_garbage_cache),
    C("cache-is-a-file", ("search", "--store", "{store}", "--cache", "{files}/not-a-store.txt", "--user", "demo-ana",
                          QUERY), "embedding cache"),
    C("cache-read-only", (*SEARCH, "a question never asked before"), "readonly", setup=_read_only_cache,
      may_embed=True),
    C("cache-disk-full", (*SEARCH, "another question never asked before"), "full", setup=_full_disk,
      may_embed=True),
    # -- configs
    *[C(f"config-{name[7:].rsplit('.', 1)[0]}", (*SEARCH, QUERY, "--config", f"{{files}}/{name}"), expect)
      for name, expect in [
          ("config-weight-abc.json", "route_weights.vec_full"),
          ("config-weight-null.json", "route_weights.vec_full"),
          ("config-weight-list.json", "route_weights.vec_full"),
          ("config-weight-negative.toml", "route_weights.vec_full"),
          ("config-weight-inf.toml", "route_weights.lexical"),
          ("config-weight-unknown-route.json", "vec_everything"),
          ("config-weights-all-zero.json", "every route weight is 0"),
          ("config-topk-float.json", "top_k: must be a whole number"),
          ("config-topk-fraction.json", "top_k: must be a whole number"),
          ("config-alpha-nan.json", "alpha"),
          ("config-alpha-inf.toml", "alpha"),
          ("config-alpha-string.json", "alpha"),
          ("config-alpha-bool.json", "alpha"),
          ("config-lambda-huge.json", "mmr_lambda"),
          ("config-session-first-yes.json", "session_first"),
          ("config-fusion-number.json", "scheme"),
          ("config-fusion-unknown.toml", "borda"),
          ("config-as-of-yesterday.json", "quality_as_of"),
          ("config-unknown-key.toml", "alpah"),
          ("config-top-level-list.json", "table/object"),
          ("config-route-weights-string.json", "routeweights"),
          ("config-invalid.toml", "not valid toml"),
          ("config-invalid.json", "not valid json"),
          ("config-non-utf8.toml", "not utf-8"),
          ("config-non-utf8.json", "not utf-8"),
          ("config.yaml", ".toml or .json"),
      ]],
    C("config-missing", (*SEARCH, QUERY, "--config", "{work}/nowhere.toml"), "does not exist"),
    C("config-is-a-folder", (*SEARCH, QUERY, "--config", "{work}/folder.toml"), "is a folder"),
    C("config-empty-path", (*SEARCH, QUERY, "--config", ""), "empty"),
    # -- explain
    C("explain-unknown-memory", ("explain", *S, "--user", "demo-ana", QUERY, "--memory", "nope"), "no chunk 'nope'"),
    C("explain-other-users-memory", ("explain", *S, "--user", "demo-ana", QUERY, "--memory", "demo-mei:S001:P00"),
      "no chunk"),
    C("explain-empty-memory", ("explain", *S, "--user", "demo-ana", QUERY, "--memory", ""), "no chunk"),
    # -- rerank
    *[C(f"rerank-{name[5:].rsplit('.', 1)[0]}", ("rerank", f"{{files}}/{name}", "--json"), expect)
      for name, expect in [
          ("rows-nan-embedding.json", "embedding[0] is nan"),
          ("rows-nan-in-embedding-string.json", "embedding[0] is nan"),
          ("rows-inf-rrf.json", "rrf_score must be a finite number"),
          ("rows-nan-rrf.json", "rrf_score must be a finite number"),
          ("rows-inf-score.json", "score must be a finite number"),
          ("rows-string-rrf.json", "rrf_score must be a finite number"),
          ("rows-bool-rrf.json", "rrf_score must be a finite number"),
          ("rows-tags-string.json", "tags must be a list of strings"),
          ("rows-tags-number.json", "tags must be a list of strings"),
          ("rows-tags-mixed.json", "tags must be a list of strings"),
          ("rows-routes-string.json", "routes must be a list of strings"),
          ("rows-routes-number.json", "routes must be a list of strings"),
          ("rows-memory-id-list.json", "memory_id must be non-empty text"),
          ("rows-memory-id-empty.json", "memory_id must be non-empty text"),
          ("rows-memory-id-twice.json", "appears twice"),
          ("rows-missing-rrf.json", "needs memory_id and rrf_score"),
          ("rows-embedding-object.json", "embedding must be a list"),
          ("rows-embedding-bad-string.json", "embedding string"),
          ("rows-embedding-unsplit-numbers.json", "row 1: embedding string is not a JSON list"),
          ("rows-not-a-list.json", "'rows' list"),
          ("rows-cases-of-numbers.json", "'rows' list"),
          ("rows-top-k-string.json", "top_k"),
          ("rows-top-k-zero.json", "top_k"),
          ("rows-option-nan.json", "alpha"),
          ("rows-option-unknown.json", "gamma"),
          ("rows-name-list.json", "case name"),
          ("rows-non-utf8.json", "not utf-8"),
          ("rows-truncated.json", "not valid json"),
      ]],
    C("rerank-missing-file", ("rerank", "{work}/no-rows.json"), "does not exist"),
    C("rerank-folder", ("rerank", "{files}"), "is a folder"),
    C("rerank-bad-config", ("rerank", "{files}/rows-tags-string.json", "--config", "{files}/config-non-utf8.toml"),
      "not utf-8"),
    # -- ingest: cheap checks before embedding
    C("ingest-dataset-missing", ("ingest", "{work}/none.jsonl", *S), "does not exist"),
    C("ingest-dataset-folder", ("ingest", "{files}", *S), "is a folder"),
    C("ingest-dataset-non-utf8", ("ingest", "{files}/dataset-non-utf8.jsonl", *S), "not utf-8"),
    C("ingest-dataset-invalid-json", ("ingest", "{files}/dataset-invalid.json", *S), "json"),
    C("ingest-dataset-empty", ("ingest", "{files}/dataset-empty.jsonl", *S), "empty"),
    C("ingest-dataset-bad-line", ("ingest", "{files}/dataset-bad-line.jsonl", *S), "line 2"),
    C("ingest-dataset-session-zero", ("ingest", "{files}/dataset-session-zero.jsonl", *S), "session"),
    C("ingest-store-locked", ("ingest", "{demo}", *S), "open in another process", setup=_locked),
    C("ingest-store-empty-path", ("ingest", "{demo}", "--store", "", "--cache", "{cache}"), "--store is empty", usage=True),
    C("ingest-store-url-down", ("ingest", "{demo}", "--store", "http://127.0.0.1:9", "--cache", "{cache}"),
      "qdrant server"),
    C("ingest-mode-unknown", ("ingest", "{demo}", *S, "--mode", "paragraph"), "invalid choice", usage=True),
    # -- eval, compare, tune: every check before recall
    C("eval-k-zero", (*EVAL, "--k", "0"), "--k", usage=True),
    C("eval-preset-unknown", (*EVAL, "--preset", "fastest"), "unknown preset 'fastest'"),
    C("eval-users-unknown", (*EVAL, "--users", "nobody"), "nobody"),
    C("eval-questions-non-utf8", ("eval", "{files}/questions-non-utf8.json", *S, "--quiet"), "not utf-8"),
    C("eval-questions-invalid", ("eval", "{files}/questions-invalid.json", *S, "--quiet"), "json"),
    C("eval-questions-missing", ("eval", "{work}/none.json", *S, "--quiet"), "does not exist"),
    C("eval-questions-unknown-user", ("eval", "{files}/questions-unknown-user.json", *S, "--quiet"), "nobody"),
    C("eval-questions-none-judged", ("eval", "{files}/questions-none-judged.json", *S, "--quiet"), "no judged"),
    C("eval-config-weights-abc", (*EVAL, "--config", "{files}/config-weight-abc.json"), "route_weights.vec_full"),
    C("eval-config-all-zero", (*EVAL, "--config", "{files}/config-weights-all-zero.json"), "every route weight is 0"),
    C("eval-presets-file-folder", (*EVAL, "--presets", "{files}", "--preset", "mine"), "is a folder"),
    *[C(f"eval-user-{name[:-5]}", (*EVAL, "--preset", "mine"), expect, setup=_presets_with(name))
      for name, expect in [
          ("presets-non-utf8.json", "not utf-8"),
          ("presets-invalid.json", "unreadable"),
          ("presets-list.json", "object of name"),
          ("presets-bad-value.json", "alpha"),
          ("presets-entry-list.json", "mine"),
          ("presets-named-builtin.json", "built-in"),
      ]],
    C("compare-unknown-b", ("compare", "{demoq}", *S, "--a", "memsense", "--b", "fastest", "--quiet"), "fastest"),
    C("compare-bad-metric", ("compare", "{demoq}", *S, "--a", "memsense", "--b", "bm25_only", "--metric", "speed@4",
                             "--quiet"), "speed"),
    C("tune-export-folder", (*TUNE, "--export", "{work}"), "is a folder"),
    C("tune-export-missing-folder", (*TUNE, "--export", "{work}/no/such/tuned.toml"), "does not exist"),
    C("tune-export-bad-extension", (*TUNE, "--export", "{work}/tuned.txt"), ".toml or .json"),
    C("tune-save-preset-builtin", (*TUNE, "--save-preset", "memsense"), "built-in"),
    C("tune-save-preset-blank", (*TUNE, "--save-preset", "  "), "name"),
    C("tune-trials-zero", (*TUNE[:-3], "--trials", "0", "--quiet"), "--trials", usage=True),
    C("tune-metric-unknown", (*TUNE, "--metric", "speed@4"), "speed"),
    C("tune-train-unknown", ("tune", "{demoq}", *S, "--train", "nobody", "--quiet"), "nobody"),
    C("tune-train-empty", ("tune", "{demoq}", *S, "--train", " , ", "--quiet"), "--train", usage=True),
    C("tune-start-unknown", (*TUNE, "--start", "fastest"), "fastest"),
    C("tune-baseline-unknown", (*TUNE, "--baseline", "fastest"), "fastest"),
    C("tune-presets-broken", (*TUNE, "--save-preset", "mine"), "unreadable", setup=_presets_with("presets-invalid.json")),
    # -- judge
    C("judge-qrels-out-folder", ("judge", "qrels", "{demoq}", "--out", "{work}"), "is a folder"),
    C("judge-qrels-out-missing-folder", ("judge", "qrels", "{demoq}", "--out", "{work}/no/such/gold.qrels"),
      "does not exist"),
    C("judge-import-non-utf8", ("judge", "import", "{files}/qrels-non-utf8.qrels", "--questions", "{demoq}",
                                "--out", "{work}/judged.json"), "not utf-8"),
    C("judge-import-out-missing-folder", ("judge", "import", "{files}/qrels.qrels", "--questions", "{demoq}",
                                          "--out", "{work}/made/up/judged.json"), "does not exist"),
    C("judge-import-out-folder", ("judge", "import", "{files}/qrels.qrels", "--questions", "{demoq}",
                                  "--out", "{work}"), "is a folder"),
    *[C(f"judge-import-{name[6:-6]}", ("judge", "import", f"{{files}}/{name}", "--questions", "{demoq}",
                                       "--out", "{work}/judged.json", *(("--store", "{store}", "--cache", "{cache}")
                                                                      if "doc" in name else ())), expect)
      for name, expect in [
          ("qrels-three-columns.qrels", "4 columns"),
          ("qrels-unknown-question.qrels", "unknown question id"),
          ("qrels-grade-nine.qrels", "0-3"),
          ("qrels-grade-word.qrels", "grade"),
          ("qrels-twice.qrels", "judged twice"),
          ("qrels-other-user.qrels", "belongs to user"),
          ("qrels-unknown-doc.qrels", "unknown document"),
      ]],
    C("judge-run-out-folder", ("judge", "run", "{demoq}", *S, "--preset", "memsense", "--out", "{work}", "--quiet"),
      "is a folder"),
    C("judge-run-two-presets", ("judge", "run", "{demoq}", *S, "--preset", "memsense", "--preset", "bm25_only",
                                "--out", "{work}/x.run", "--quiet"), "exactly one", usage=True),
    C("judge-level-unknown", ("judge", "qrels", "{demoq}", "--out", "{work}/g.qrels", "--level", "word"),
      "invalid choice", usage=True),
    # -- standard input (`-`) and exit codes
    C("stdin-dataset-empty", ("ingest", "-", *S), "empty", setup=_stdin(b"")),
    C("stdin-dataset-non-utf8", ("ingest", "-", *S), "not utf-8", setup=_stdin(b'{"user": "caf\xe9"}\n')),
    C("stdin-dataset-question-file", ("ingest", "-", *S), "question file",
      setup=_stdin(b'{"questions": [{"user": "demo-ana", "question": "q"}]}\n')),
    C("stdin-query-empty", (*SEARCH, "-"), "query is empty", setup=_stdin(b"\n")),
    C("stdin-query-with-escapes", (*SEARCH, "-"), "control character", setup=_stdin(b"\x1b[31mhi\n")),
    C("stdin-questions-invalid", ("eval", "-", *S, "--quiet"), "json", setup=_stdin(b'{"questions": [')),
    C("stdin-rerank-truncated", ("rerank", "-"), "not valid json", setup=_stdin(b'{"rows": [')),
    C("usage-no-command", (), "required", usage=True),
    C("usage-quiet-and-json-unknown-flag", (*SEARCH, QUERY, "-q", "--verbose", "--nope"), "unrecognized", usage=True),
    C("usage-verbose-with-value", (*SEARCH, QUERY, "--verbose=2"), "ignored explicit argument", usage=True),
    C("log-file-in-missing-folder", (*SEARCH, QUERY, "--log-file", "{work}/no/such/folder/log.txt"), "log file"),
    C("log-file-is-a-folder", (*SEARCH, QUERY, "--log-file", "{work}"), "log file"),
    # -- bench
    C("bench-out-folder", ("bench", "--quick", "--out", "{work}"), "is a folder"),
    C("bench-out-missing-folder", ("bench", "--quick", "--out", "{work}/no/such/bench.json"), "does not exist"),
]


# ---------------------------------------------------------------- issue 21 items 3, 4, 6, 7 (h8): tracebacks and
# silently wrong answers found by the reliability round; full disks and locks are in test_full_disk.py and
# tests/recall/test_store_lock.py

def _dataset_line(user: str = "u", text: str = "hi", speaker: str = "A") -> str:
    return json.dumps({"user": user, "session": 1, "time": "2024-01-01", "speaker": speaker, "text": text})


FILES.update({
    "config-duplicate-key.json": '{"alpha": 0.2, "routeWeights": {"vec_full": 1}, "alpha": 0.5}',
    "config-duplicate-nested-key.json": '{"routeWeights": {"lexical": 0, "lexical": 1}}',
    "config-linear-weights-zero.toml": 'fusion = "linear"\nlinearKeywordWeight = 0\nlinearSemanticWeight = 0\n',
    "config-linear-below-cut.toml": 'fusion = "linear"\nlinearKeywordWeight = 0.1\n[routeWeights]\nvec_full = 0\n',
    "presets-duplicate-key.json": '{"mine": {"alpha": 0.2}, "mine": {"alpha": 0.9}}',
    "dataset-message-id-twice.jsonl": "".join(json.dumps({**json.loads(_dataset_line(speaker=sp, text=t)), "id": "D1:1"})
                                              + "\n" for sp, t in (("A", "hi"), ("B", "hello"))),
    "dataset-user-with-nul.jsonl": _dataset_line(user="a\x00b") + "\n" + _dataset_line(user="a\x00b", speaker="B") + "\n",
    "dataset-lone-surrogate.jsonl": _dataset_line() + "\n" + _dataset_line(speaker="B").replace(
        '"hi"', '"an emoji \\ud83d\\ude00 is fine, half of one \\udc00 is not"') + "\n",
    "dataset-lone-surrogate.json": '[{"sample_id": "x", "conversation": {"speaker_a": "A\\ud800", "speaker_b": "B"}}]',
    "questions-lone-surrogate.json": '{"questions": [{"user": "demo-ana", "question": "caf\\ud800?", "answer": "a", '
                                     '"category": 1, "evidence": ["D1:1"]}]}',
})


def _emptied_copy(env: Env, stack, mp) -> None:
    """A copy of the demo store whose demo-ana vector file is empty (0 bytes): once an EOFError."""
    from core.recall.embedded.store import DB

    copy = env.work / "damaged-store"
    shutil.copytree(env.store, copy)
    with contextlib.closing(sqlite3.connect(copy / DB)) as db:
        (file,) = db.execute("SELECT file FROM users WHERE user_id = 'demo-ana'").fetchone()
    (copy / "vectors" / file).write_bytes(b"")


class _ZeroModel(_StubModel):
    """A broken model: every vector is 0."""

    def encode(self, texts, **kwargs):
        return np.zeros((len(texts), 384), dtype=np.float32)


def _zero_model(env: Env, stack, mp) -> None:
    from core.recall.embedding import embedder as embed

    mp.setattr(embed.Embedder, "load", lambda self: setattr(self, "_model", _ZeroModel()))


CASES += [
    C("store-user-file-empty", ("search", "--store", "{work}/damaged-store", "--cache", "{cache}", "--user", "demo-ana",
                                QUERY), "memsense drop", setup=_emptied_copy),
    C("dataset-lone-surrogate-jsonl", ("ingest", "{files}/dataset-lone-surrogate.jsonl", *S), "line 2 holds \\udc00"),
    C("dataset-lone-surrogate-locomo", ("ingest", "{files}/dataset-lone-surrogate.json", *S), "surrogate"),
    C("eval-questions-lone-surrogate", ("eval", "{files}/questions-lone-surrogate.json", *S, "--quiet"), "surrogate"),
    C("tune-seed-negative", (*TUNE, "--seed", "-1"), "--seed", usage=True),
    C("tune-seed-huge", (*TUNE, "--seed", str(2**32)), "--seed", usage=True),
    C("embedder-all-zero-vectors", (*SEARCH, "a question no cache has seen"), "all-zero", setup=_zero_model,
      may_embed=True),
    C("config-json-duplicate-key", (*SEARCH, QUERY, "--config", "{files}/config-duplicate-key.json"),
      "'alpha' is given twice"),
    C("config-json-duplicate-nested-key", (*SEARCH, QUERY, "--config", "{files}/config-duplicate-nested-key.json"),
      "'lexical' is given twice"),
    C("eval-presets-duplicate-key", (*EVAL, "--preset", "mine"), "'mine' is given twice",
      setup=_presets_with("presets-duplicate-key.json")),
    C("config-linear-weights-zero", (*SEARCH, QUERY, "--config", "{files}/config-linear-weights-zero.toml"),
      "every score is 0"),
    C("config-linear-below-cut", (*SEARCH, QUERY, "--config", "{files}/config-linear-below-cut.toml"),
      "no score can reach linearminscore 0.15"),
    C("eval-config-linear-weights-zero", (*EVAL, "--config", "{files}/config-linear-weights-zero.toml"),
      "every score is 0"),
    C("ingest-user-id-with-nul", ("ingest", "{files}/dataset-user-with-nul.jsonl", *S), "nul character"),
    C("ingest-message-id-twice", ("ingest", "{files}/dataset-message-id-twice.jsonl", *S),
      "message id 'D1:1' of user 'u' is already the id of line 1"),
    C("tune-sensitivity-points-one", (*TUNE, "--sensitivity-points", "1"), "a sweep needs two values", usage=True),
]


def test_questions_asked_twice_are_scored_with_a_warning(case_env, tmp_path):
    """Warned, not refused: each copy is a well-defined score, and a file may repeat a question on
    purpose; the warning says they weigh double."""
    question = {"user": "demo-ana", "question": QUERY, "answer": "3", "category": 1, "evidence": ["D1:1"]}
    questions = tmp_path / "questions.json"
    for copies, expect_warning in ((1, False), (2, True)):
        questions.write_text(json.dumps({"questions": [question] * copies + [{**question, "user": "demo-mei"}]}))
        code, out, err, tb = run_cli(["eval", str(questions), "--store", str(case_env.store), "--cache",
                                      str(case_env.cache), "--preset", "memsense", "--quiet"])
        assert (code, tb) == (0, None), err
        if expect_warning:
            assert err.splitlines() == [f"memsense: warning: questions asked more than once of the same user: 1 (e.g. "
                                        f"{QUERY!r} of demo-ana, 2 times); each copy is scored, so 1 extra copies weigh "
                                        "in every mean; remove them for one score per distinct question"]
        else:
            assert err == ""


# ---------------------------------------------------------------- issue 21 (h6): secrets, outputs, deadlines, parity
# Secrets: every address below carries SECRET; no output may show it (checked for every case).
# Outputs: a link, a device, a FIFO or a missing folder is refused, and what the link points to
# is left as it was (checked by the setup's callback after the run).

SECRET = "s3cr3t-XYZ"
PG_URL = f"postgresql://memsense:{SECRET}@127.0.0.1:9/memsense?sslmode=disable"
PG_PARAM = f"postgresql://memsense@127.0.0.1:9/memsense?sslmode=disable&password={SECRET}"
LIBPQ = f"host=127.0.0.1 port=9 dbname=memsense sslmode=disable password={SECRET}"
QDRANT_TOKEN = f"http://{SECRET}@127.0.0.1:9"
QDRANT_KEY = f"http://127.0.0.1:9/?api_key={SECRET}"
LIVE = ("--store", PG_URL, "--embedder", f"http://u:{SECRET}@127.0.0.1:9/embed?token={SECRET}", "--user", "demo-ana")
FOLDER_ONLY = "a live memsense database, which only search and explain read"


def _special_left_alone(name: str):
    """`{work}/NAME` made as a link to a file outside the work folder (`link*`), a link to a
    folder (`dirlink*`) or a FIFO (`fifo*`); after the run, it and its target are as they were."""

    def setup(env: Env, stack, mp) -> None:
        path = env.work / name
        if name.startswith("link"):
            outside = env.work.parent / f"outside-{name}"
            outside.write_text("precious\n")
            path.symlink_to(outside)
            stack.callback(lambda: _assert(path.is_symlink() and outside.read_text() == "precious\n",
                                           f"{name} or the file it points to was changed"))
        elif name.startswith("dirlink"):
            (env.work / "real-folder").mkdir()
            path.symlink_to(env.work / "real-folder")
            stack.callback(lambda: _assert(path.is_symlink() and not any((env.work / "real-folder").iterdir()),
                                           f"{name} was replaced or written through"))
        else:
            os.mkfifo(path)
            stack.callback(lambda: _assert(path.is_fifo(), f"{name} is no longer a FIFO"))

    return setup


def _devices_left_alone(env: Env, stack, mp) -> None:
    stack.callback(lambda: _assert(Path("/dev/stdout").is_symlink() and Path("/dev/null").is_char_device(),
                                   "/dev/stdout or /dev/null was replaced"))


def _assert(ok: bool, what: str) -> None:
    assert ok, what


CASES += [
    # -- secrets: a database URL where only a folder (or a Qdrant URL) is taken
    C("h6-users-pg", ("users", "--store", PG_URL), FOLDER_ONLY, usage=True),
    C("h6-drop-pg", ("drop", "--store", PG_URL, "--user", "demo-ana"), FOLDER_ONLY, usage=True),
    C("h6-eval-pg", ("eval", "{demoq}", "--store", PG_URL, "--quiet"), FOLDER_ONLY, usage=True),
    C("h6-compare-pg", ("compare", "{demoq}", "--store", PG_URL, "--a", "memsense", "--b", "bm25_only", "--quiet"),
      FOLDER_ONLY, usage=True),
    C("h6-tune-pg", ("tune", "{demoq}", "--store", PG_URL, "--train", "demo-ana", "--quiet"), FOLDER_ONLY, usage=True),
    C("h6-judge-run-pg", ("judge", "run", "{demoq}", "--store", PG_URL, "--preset", "memsense", "--out",
                          "{work}/x.run", "--quiet"), FOLDER_ONLY, usage=True),
    C("h6-judge-import-pg", ("judge", "import", "{files}/qrels.qrels", "--questions", "{demoq}", "--out",
                             "{work}/judged.json", "--store", PG_URL), FOLDER_ONLY, usage=True),
    C("h6-migrate-from-pg", ("migrate", PG_URL, "--store", "{work}/new-store"), FOLDER_ONLY, usage=True),
    C("h6-migrate-to-pg", ("migrate", "{store}", "--store", PG_URL), FOLDER_ONLY, usage=True),
    C("h6-users-pg-password-parameter", ("users", "--store", PG_PARAM), FOLDER_ONLY, usage=True),
    C("h6-users-libpq", ("users", "--store", LIBPQ), "libpq connection string", usage=True),
    C("h6-search-libpq", ("search", "--store", LIBPQ, "--user", "demo-ana", QUERY), "libpq connection string", usage=True),
    C("h6-search-other-scheme", ("search", "--store", f"mysql://u:{SECRET}@127.0.0.1/db", "--user", "demo-ana",
                                 QUERY), "neither a store folder", usage=True),
    C("h6-import-libpq", ("import", LIBPQ, "--store", "{work}/copy"), "not a postgresql address"),
    # -- secrets: servers that are down, named in the message with their secrets masked
    C("h6-search-pg-down", ("search", *LIVE, QUERY), "no postgresql answers at postgresql://memsense:***@"),
    C("h6-search-pg-password-parameter-down", ("search", "--store", PG_PARAM, "--embedder", "http://127.0.0.1:9",
                                               "--user", "demo-ana", QUERY), "password=***"),
    C("h6-import-pg-down", ("import", PG_URL, "--store", "{work}/copy"), "no postgresql answers"),
    C("h6-users-qdrant-token-down", ("users", "--store", QDRANT_TOKEN), "qdrant server at http://***@127.0.0.1:9"),
    C("h6-search-qdrant-key-down", ("search", "--store", QDRANT_KEY, "--user", "demo-ana", QUERY), "api_key=***"),
    C("h6-ingest-qdrant-token-down", ("ingest", "{demo}", "--store", QDRANT_TOKEN, "--cache", "{cache}"),
      "qdrant server"),
    # -- deadlines: a timeout is positive and finite
    *[C(f"h6-embed-timeout-{name}", ("search", *LIVE, "--embed-timeout", value, QUERY), "--embed-timeout must be", usage=True)
      for name, value in [("negative", "-1"), ("nan", "nan"), ("inf", "inf"), ("zero", "0"), ("word", "soon")]],
    C("h6-service-timeout-zero", ("search", *LIVE, "--service", "http://127.0.0.1:9", "--service-timeout", "0",
                                  QUERY), "--service-timeout must be", usage=True),
    *[C(f"h6-qdrant-timeout-{name}", ("users", "--store", "http://127.0.0.1:9"), "MEMSENSE_QDRANT_TIMEOUT must be",
        setup=_qdrant_timeout(value)) for name, value in [("negative", "-1"), ("nan", "nan"), ("word", "soon")]],
    # -- outputs: one writer, no links, no special files, no new folders
    C("h6-export-memsense-dev-stdout", ("export-memsense", "--out", "/dev/stdout"), "--out /dev/stdout is",
      setup=_devices_left_alone),
    C("h6-export-memsense-dev-null", ("export-memsense", "--out", "/dev/null"), "not a regular file",
      setup=_devices_left_alone),
    C("h6-export-memsense-fifo", ("export-memsense", "--out", "{work}/fifo.json"), "not a regular file",
      setup=_special_left_alone("fifo.json")),
    C("h6-export-memsense-link", ("export-memsense", "--out", "{work}/link.json"), "symbolic link",
      setup=_special_left_alone("link.json")),
    C("h6-export-memsense-link-to-folder", ("export-memsense", "--out", "{work}/dirlink"), "symbolic link",
      setup=_special_left_alone("dirlink")),
    C("h6-export-memsense-missing-folder", ("export-memsense", "--out", "{work}/made/up.json"), "does not exist"),
    C("h6-bench-out-link", ("bench", "--quick", "--out", "{work}/link.json"), "symbolic link",
      setup=_special_left_alone("link.json")),
    C("h6-bench-out-dev-stdout", ("bench", "--quick", "--out", "/dev/stdout"), "/dev/stdout is",
      setup=_devices_left_alone),
    C("h6-tune-export-link", (*TUNE, "--export", "{work}/link.toml"), "symbolic link",
      setup=_special_left_alone("link.toml")),
    C("h6-judge-qrels-out-dev-null", ("judge", "qrels", "{demoq}", "--out", "/dev/null"), "not a regular file",
      setup=_devices_left_alone),
    C("h6-judge-run-out-fifo", ("judge", "run", "{demoq}", *S, "--preset", "memsense", "--out", "{work}/fifo.run",
                                "--quiet"), "not a regular file", setup=_special_left_alone("fifo.run")),
    # -- production parity: the query
    C("h6-query-nul-live", ("search", *LIVE, "how\x00many"), "the query holds a nul byte at character 4"),
    C("h6-query-starts-with-dash", (*SEARCH, "-how"), "goes after `--`", usage=True),
    C("h6-query-dash-word-after", (*SEARCH, QUERY, "-x"), "goes after `--`", usage=True),
]


# ---------------------------------------------------------------- issue 39, class 1: the run history
# `STORE.history.sqlite` damaged, of another shape, read-only, locked or on a full disk. `history` says so in
# one line; a run (eval, diagnose, fix, tune) prints its results and says in one warning line it was not kept.
# Either way the history file's bytes are as they were.

HSTORE = ("--store", "{work}/store", "--cache", "{cache}")


def _history_run(db: sqlite3.Connection, n: int = 1) -> None:
    from core.config import Config, to_dict

    results = {"memsense": {f"demo-ana:q{i}": {"recall_all@4": 1.0, "mrr": 0.5} for i in range(40)}}
    for _ in range(n):
        db.execute("INSERT INTO runs (kind, time, store, model, dataset, dataset_sha256, configs, summary, results) "
                   "VALUES ('eval', 1.7e9, 's', 'm', 'd.json', 'x', ?, '{}', ?)",
                   (json.dumps({"memsense": to_dict(Config())}), json.dumps(results)))


def _harm_history(path: Path, harm: str) -> None:
    """A history beside a store copy, harmed as `harm` says."""
    from core.evaluation.history import SCHEMA

    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute(SCHEMA)
        _history_run(db, 12)
    data = path.read_bytes()
    sql = {"table-dropped": "DROP TABLE runs",
           "column-renamed": "ALTER TABLE runs RENAME COLUMN time TO at",
           "newer-column": "ALTER TABLE runs ADD COLUMN tenant TEXT NOT NULL DEFAULT 'x'",
           "newer-column-required": "ALTER TABLE runs ADD COLUMN tenant TEXT NOT NULL DEFAULT 'x'",
           "bad-json": "UPDATE runs SET configs = '{\"memsense\": {' WHERE id = 3",
           "other-shape": "UPDATE runs SET results = '[1, 2, 3]' WHERE id = 3",
           "nested-json": "UPDATE runs SET summary = '" + "[" * 100_000 + "]" * 100_000 + "' WHERE id = 3",
           "textual-time": "UPDATE runs SET time = 'yesterday' WHERE id = 3",
           "huge-time": "UPDATE runs SET time = 1e300 WHERE id = 3"}.get(harm)
    if sql is not None:
        with contextlib.closing(sqlite3.connect(path)) as db, db:
            db.execute(sql)
            if harm == "newer-column-required":  # a newer version's required column: an old INSERT cannot fill it
                db.execute("CREATE TRIGGER needs_tenant BEFORE INSERT ON runs WHEN NEW.tenant = 'x' "
                           "BEGIN SELECT RAISE(ABORT, 'NOT NULL constraint failed: runs.tenant'); END")
    elif harm == "truncated":
        path.write_bytes(data[:4096 + 100])  # the header page and a bit: the pages of the runs are gone
    elif harm == "zeroed":
        path.write_bytes(b"\0" * len(data))
    elif harm == "random":
        path.write_bytes(np.random.default_rng(39).bytes(len(data)))
    elif harm != "healthy":
        raise AssertionError(harm)


def _history(harm: str, hold: str | None = None):
    """Setup: a store copy in the work folder with a harmed history beside it; `hold`: another
    process holds the history ("write": a write transaction, "exclusive": not even a reader gets
    in) for longer than a command waits; "read-only" or "full": the file cannot be written or grow.
    After the run, the history's bytes are checked unchanged."""

    def setup(env: Env, stack: contextlib.ExitStack, mp) -> None:
        from core.evaluation import history

        shutil.copytree(env.store, env.work / "store")
        path = env.work / "store.history.sqlite"
        _harm_history(path, harm)
        mp.setattr(history, "LOCK_WAIT_S", 0.2)
        if hold in ("write", "exclusive"):
            other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            other.execute("BEGIN IMMEDIATE" if hold == "write" else "BEGIN EXCLUSIVE")
            stack.callback(other.close)
            stack.callback(other.execute, "ROLLBACK")
        elif hold in ("read-only", "full"):
            _confine_history(mp, hold)
        before = path.read_bytes()
        stack.callback(lambda: _assert(path.read_bytes() == before, "the run history's bytes changed"))

    return setup


def _confine_history(mp, hold: str) -> None:
    """The history opened read-only (as root, a read-only file is writable: SQLite's own read-only
    mode stands in), or capped at its size (SQLite's "database or disk is full")."""
    from core.evaluation import history

    original = history.History.__init__

    def init(self, path, create=True):
        original(self, path, create)
        if hold == "read-only":
            self.db.close()
            self.db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        else:
            self.db.execute(f"PRAGMA max_page_count = {self.db.execute('PRAGMA page_count').fetchone()[0]}")

    mp.setattr(history.History, "__init__", init)


HISTORY = ("history", "--store", "{work}/store")
CASES += [
    *[C(f"i39-history-{harm}", HISTORY, expect, setup=_history(harm)) for harm, expect in [
        ("truncated", "is damaged (database disk image is malformed); move the file aside"),
        ("zeroed", "is damaged"),
        ("random", "is damaged (file is not a database)"),
        ("table-dropped", "is damaged (no such table: runs)"),
        ("column-renamed", "has another shape (no such column: time): written by another version"),
        ("bad-json", "run 3 in the run history"),
        ("other-shape", "run 3 in the run history"),
        ("nested-json", "run 3 in the run history"),
        ("textual-time", "its time 'yesterday' is not a number"),
        ("huge-time", "run 3 in the run history"),
    ]],
    C("i39-history-locked", HISTORY, "is in use by another process", setup=_history("healthy", "exclusive")),
    C("i39-history-compare-id-too-long", (*HISTORY, "--compare", "1", "99999999999999999999"),
      "no run 99999999999999999999", setup=_history("healthy")),
    C("i39-history-compare-negative-id-too-long", (*HISTORY, "--compare", "-99999999999999999999", "1"),
      "no run -99999999999999999999", setup=_history("healthy")),
    C("i39-history-compare-and-export", (*HISTORY, "--compare", "1", "2", "--export", "1", "--out", "{work}/r.toml"),
      "one at a time", setup=_history("healthy"), usage=True),
    C("i39-history-out-without-export", (*HISTORY, "--out", "{work}/r.toml"), "--out goes with --export",
      setup=_history("healthy"), usage=True),
]


# ---------------------------------------------------------------- issue 39, class 4: outputs
# `-` is standard output where the output is the command's only one (tests below); where it would mix with the
# command's own report it is refused with a line saying how to print. A folder named through a link, a missing
# one or one that cannot be written: one line, nothing written anywhere.

def _unwritable_folder(env: Env, stack, mp) -> None:
    """Every new file in a folder is refused (as root, a read-only folder is writable: this stands in)."""
    import errno
    import tempfile

    from core import atomic

    def refuse(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied")

    mp.setattr(atomic.tempfile, "mkstemp", refuse)
    stack.callback(lambda: _assert(atomic.tempfile is tempfile, "tempfile replaced"))


REPORT = ("report", "{demoq}", *S, "--a", "memsense", "--b", "bm25_only", "--quiet")
CASES += [
    C("i39-log-file-stdout", (*SEARCH, QUERY, "--log-file", "-"), "the messages go to standard error already",
      usage=True),
    C("i39-tune-export-stdout", (*TUNE, "--export", "-"), "would mix the file with this command's report", usage=True),
    C("i39-bench-out-stdout", ("bench", "--quick", "--out", "-"), "use --json instead", usage=True),
    C("i39-judge-qrels-stdout-and-json", ("judge", "qrels", "{demoq}", "--out", "-", "--json"), "--json prints too",
      usage=True),
    C("i39-history-export-stdout-and-json", (*HISTORY, "--export", "1", "--out", "-", "--json"), "--json prints too",
      setup=_history("healthy"), usage=True),
    C("i39-export-memsense-linked-folder", ("export-memsense", "--out", "{work}/dirlink/x.json"),
      "/dirlink is a symbolic link; links are never written through", setup=_special_left_alone("dirlink")),
    C("i39-judge-qrels-linked-folder", ("judge", "qrels", "{demoq}", "--out", "{work}/dirlink/gold.qrels"),
      "is a symbolic link", setup=_special_left_alone("dirlink")),
    C("i39-report-linked-folder", (*REPORT, "--out", "{work}/dirlink/r.html"), "is a symbolic link",
      setup=_special_left_alone("dirlink")),
    C("i39-report-missing-folder", (*REPORT, "--out", "{work}/made/r.html"), "does not exist"),
    C("i39-report-unwritable-folder", (*REPORT, "--out", "{work}/r.html"),
      "/r.html: permission denied; pick another folder", setup=_unwritable_folder, may_embed=True),
    C("i39-export-memsense-unwritable-folder", ("export-memsense", "--out", "{work}/x.json"),
      "/x.json: permission denied; pick another folder", setup=_unwritable_folder),
]


# ---------------------------------------------------------------- issue 39, class 2: configs, presets and question
# files beyond what a parser reads (numbers of thousands of digits, nesting 100,000 deep), and inputs that are no
# file at all (/dev/zero never ends, a named pipe with no writer never answers): one line each, within a deadline.

DIGITS_4000, DIGITS_5000 = "1" + "0" * 4000, "1" + "0" * 5000
DEEP = "[" * 100_000 + "]" * 100_000


def _question_with(category: str) -> str:
    return ('{"questions": [{"user": "demo-ana", "question": "How many races?", "answer": "3", "category": '
            + category + ', "evidence": ["D1:1"]}]}')


FILES.update({
    "config-topk-4000-digits.json": '{"topK": ' + DIGITS_4000 + "}",
    "config-topk-5000-digits.json": '{"topK": ' + DIGITS_5000 + "}",
    "config-weight-4000-digits.json": '{"routeWeights": {"vec_full": ' + DIGITS_4000 + "}}",
    "config-weight-negative-4000-digits.toml": "[routeWeights]\nvec_full = -" + DIGITS_4000 + "\n",
    "config-alpha-4000-digits.toml": "alpha = " + DIGITS_4000 + "\n",
    "config-alpha-5000-digits.toml": "alpha = " + DIGITS_5000 + "\n",
    "config-nested.json": '{"alpha": ' + DEEP + "}",
    "config-nested.toml": "alpha = " + DEEP + "\n",
    "config-nested-inline-tables.toml": "alpha = " + "{ a = " * 100_000 + "1" + " }" * 100_000 + "\n",
    "config-nested-500.json": '{"alpha": ' + "[" * 500 + "]" * 500 + "}",
    "presets-4000-digits.json": '{"mine": {"topK": ' + DIGITS_4000 + "}}",
    "presets-5000-digits.json": '{"mine": {"topK": ' + DIGITS_5000 + "}}",
    "presets-nested.json": '{"mine": ' + DEEP + "}",
    "questions-category-5001-digits.json": _question_with(DIGITS_5000),
    "questions-category-5001-digit-text.json": _question_with('"' + DIGITS_5000 + '"'),
    "questions-category-nan.json": _question_with("NaN"),
    "questions-category-1e400.json": _question_with("1e400"),
    "questions-nested.json": '{"questions": ' + DEEP + "}",
    "questions-nested.jsonl": DEEP + "\n",
    "questions-utf16.json": _question_with("1").encode("utf-16"),
})


CONFIG_CASES = [
    ("config-topk-4000-digits.json", "top_k: a whole number of about 4001 digits is above the maximum"),
    ("config-topk-5000-digits.json", "it holds a number of thousands of digits"),
    ("config-weight-4000-digits.json", "route_weights.vec_full: a whole number of about 4001 digits is above"),
    ("config-weight-negative-4000-digits.toml", "route_weights.vec_full: a whole number of about 4001 digits is below"),
    ("config-alpha-4000-digits.toml", "alpha: a whole number of about 4001 digits is above the maximum"),
    ("config-alpha-5000-digits.toml", "it holds a number of thousands of digits"),
    ("config-nested.json", "it is nested too deep"),
    ("config-nested.toml", "it is nested too deep"),
    ("config-nested-inline-tables.toml", "it is nested too deep"),
    ("config-nested-500.json", "alpha: must be a number, got [[[...]]]"),
]
CASES += [
    *[C(f"i39-search-{name.rsplit('.', 1)[0]}-{name.rsplit('.', 1)[1]}", (*SEARCH, QUERY, "--config", f"{{files}}/{name}"),
        expect) for name, expect in CONFIG_CASES],
    *[C(f"i39-{cmd}-{name.rsplit('.', 1)[0]}", argv, expect) for name, expect in CONFIG_CASES[::3]
      for cmd, argv in [("eval", (*EVAL, "--config", f"{{files}}/{name}")),
                        ("export-memsense", ("export-memsense", "--config", f"{{files}}/{name}")),
                        ("rerank", ("rerank", "{files}/rows-tags-string.json", "--config", f"{{files}}/{name}")),
                        ("diagnose", ("diagnose", "{demoq}", *S, "--config", f"{{files}}/{name}", "--quiet")),
                        ("fix", ("fix", "{demoq}", *S, "--cases", "demo-ana:q0", "--config", f"{{files}}/{name}")),
                        ("tune-start", (*TUNE, "--start", f"{{files}}/{name}")),
                        ("compare", ("compare", "{demoq}", *S, "--a", "memsense", "--b", f"{{files}}/{name}"))]],
    *[C(f"i39-eval-{name[:-5]}", (*EVAL, "--preset", "mine"), expect, setup=_presets_with(name)) for name, expect in [
        ("presets-4000-digits.json", "top_k: a whole number of about 4001 digits"),
        ("presets-5000-digits.json", "it holds a number of thousands of digits"),
        ("presets-nested.json", "it is nested too deep"),
    ]],
    *[C(f"i39-eval-{name.replace('.', '-')}", ("eval", f"{{files}}/{name}", *S, "--quiet"), expect) for name, expect in [
        ("questions-category-5001-digits.json", "it holds a number of thousands of digits"),
        ("questions-category-5001-digit-text.json", "'category' must be a whole number (1-4), got '10000"),
        ("questions-category-nan.json", "'category' must be a whole number (1-4), got nan"),
        ("questions-category-1e400.json", "'category' must be a whole number (1-4), got inf"),
        ("questions-nested.json", "it is nested too deep"),
        ("questions-nested.jsonl", "it is nested too deep"),
        ("questions-utf16.json", "not utf-8"),
    ]],
    C("i39-eval-questions-folder", ("eval", "{files}", *S, "--quiet"), "is a folder"),
]


# ---------------------------------------------------------------- issue 39, class 3: fix, diagnose and tune arguments

FIX = ("fix", "{demoq}", *S, "--quiet")


def _study(metric: str):
    """Setup: a tuning study `s1` in {work}/study.sqlite, run with another metric."""

    def setup(env: Env, stack, mp) -> None:
        from core.evaluation.study import open_study

        open_study(f"sqlite:///{env.work / 'study.sqlite'}", "s1", 0, {"metric": metric})

    return setup


def _garbage_study(env: Env, stack, mp) -> None:
    (env.work / "study.sqlite").write_bytes(np.random.default_rng(39).bytes(8192))


CASES += [
    C("i39-fix-cases-blank", (*FIX, "--cases", " , "), "--cases names no question", usage=True),
    C("i39-fix-cases-unknown", (*FIX, "--cases", "nope"), "no judged question nope"),
    C("i39-fix-passing-case-twice", (*FIX, "--cases", "demo-ana:q2,demo-ana:q2", "--trials", "3"),
      "every case already scores 1", may_embed=True),
    C("i39-fix-cases-10000", (*FIX, "--cases", ",".join(f"demo-ana:q{i}" for i in range(10_000))),
      "no judged question demo-ana:q"),
    C("i39-fix-cases-of-another-user", (*FIX, "--users", "demo-mei", "--cases", "demo-ana:q0"),
      "no judged question demo-ana:q0"),
    C("i39-fix-trials-zero", (*FIX, "--cases", "demo-ana:q0", "--trials", "0"), "--trials must be at least 1",
      usage=True),
    C("i39-fix-trials-negative", (*FIX, "--cases", "demo-ana:q0", "--trials", "-5"), "--trials must be at least 1",
      usage=True),
    C("i39-fix-trials-huge", (*FIX, "--cases", "demo-ana:q0", "--trials", "1000000000"), "give at most 100,000",
      usage=True),
    C("i39-tune-trials-huge", (*TUNE[:-3], "--trials", "1000000000", "--quiet"), "give at most 100,000", usage=True),
    C("i39-fix-metric-empty", (*FIX, "--cases", "demo-ana:q0", "--metric", ""), "--metric is empty", usage=True),
    C("i39-fix-metric-unknown", (*FIX, "--cases", "demo-ana:q0", "--metric", "speed@4"), "speed"),
    C("i39-tune-study-db-is-the-store", (*TUNE, "--study-db", "{store}/memsense.sqlite"), "which tuning never writes"),
    C("i39-tune-study-db-in-the-store", (*TUNE, "--study-db", "{store}/study.sqlite"), "which tuning never writes"),
    C("i39-tune-study-db-is-the-history", (*TUNE, "--study-db", "{store}.history.sqlite"), "which tuning never writes"),
    C("i38-tune-storage-sqlite-is-the-store", (*TUNE, "--storage", "sqlite:///{store}/memsense.sqlite"),
      "which tuning never writes"),
    C("i38-tune-storage-journal-in-the-store", (*TUNE, "--storage", "{store}/study.journal"), "which tuning never writes"),
    C("i38-tune-storage-sqlite-is-the-history", (*TUNE, "--storage", "sqlite:///{store}.history.sqlite"),
      "which tuning never writes"),
    C("i39-tune-study-of-another-metric", (*TUNE, "--study-db", "{work}/study.sqlite", "--study", "s1"),
      "was run with different metric", setup=_study("ndcg@4"), may_embed=True),
    C("i39-tune-study-db-garbage", (*TUNE, "--study-db", "{work}/study.sqlite", "--study", "s1"),
      "cannot open the tuning study", setup=_garbage_study, may_embed=True),
]

RUNS = {
    "eval": ("eval", "{demoq}", *HSTORE, "--preset", "memsense", "--quiet"),
    "diagnose": ("diagnose", "{demoq}", *HSTORE, "--quiet"),
    "fix": ("fix", "{demoq}", *HSTORE, "--cases", "demo-ana:q0", "--trials", "3", "--quiet"),
    "tune": ("tune", "{demoq}", *HSTORE, "--train", "demo-ana", "--trials", "3", "--sensitivity-points", "0",
             "--jobs", "1", "--quiet"),
}
NOT_KEPT = [
    ("eval", "truncated", None, "is damaged"),
    ("eval", "zeroed", None, "is damaged"),
    ("eval", "random", None, "is damaged (file is not a database)"),
    ("eval", "column-renamed", None, "has another shape"),
    ("eval", "newer-column-required", None, "has another shape"),
    ("eval", "healthy", "write", "is in use by another process"),
    ("eval", "healthy", "read-only", "cannot be written"),
    ("eval", "healthy", "full", "is full; free disk space"),
    ("diagnose", "healthy", "write", "is in use by another process"),
    ("diagnose", "random", None, "is damaged"),
    ("fix", "healthy", "write", "is in use by another process"),
    ("fix", "column-renamed", None, "has another shape"),
    ("tune", "healthy", "write", "is in use by another process"),
    ("tune", "truncated", None, "is damaged"),
]


@pytest.mark.parametrize("command,harm,hold,expect", NOT_KEPT, ids=[f"{c}-{h}-{o or 'alone'}" for c, h, o, _ in NOT_KEPT])
def test_a_history_that_cannot_be_written_never_blocks_a_run(command, harm, hold, expect, case_env, reference,
                                                              monkeypatch):
    TALLY["cases"] += 1
    with contextlib.ExitStack() as stack, monkeypatch.context() as mp:
        _history(harm, hold)(case_env, stack, mp)
        code, out, err, tb = run_cli([_expand(a, case_env) for a in RUNS[command]])
    TALLY["tracebacks"] += tb is not None or "Traceback" in err
    assert tb is None, tb
    assert code == 0 and out.strip(), f"exit {code}; stderr {err!r}"  # the results stand
    lines = [line for line in err.splitlines() if line.strip() and not PROGRESS.match(line)]
    assert len(lines) == 1 and lines[0].startswith("memsense: warning: this run was not kept in the history: "), err
    assert expect in lines[0], lines[0]
    assert "move" not in lines[0] or harm != "healthy", "a healthy history is never to be moved aside"
    assert digest(case_env.store) == reference[1]


def test_a_newer_versions_extra_column_is_read_and_kept(case_env):
    """A column a newer version added (with a default) is no harm: runs list, and a run is kept."""
    with contextlib.ExitStack() as stack, pytest.MonkeyPatch.context() as mp:
        _history("newer-column")(case_env, stack, mp)
        stack.pop_all()  # the run is kept: the file grows
        code, out, err, tb = run_cli([_expand(a, case_env) for a in HISTORY])
        assert (code, tb, err) == (0, None, "") and out.count("eval") == 12
        code, out, err, tb = run_cli([_expand(a, case_env) for a in RUNS["eval"]])
        assert (code, tb, err) == (0, None, ""), err
        assert run_cli([_expand(a, case_env) for a in HISTORY])[1].count("eval") == 13



def test_a_dash_output_is_printed_and_no_file_named_dash_is_written(case_env):
    env = case_env
    code, out, err, tb = run_cli(["export-memsense", "--preset", "memsense", "--out", "-"])
    assert (code, tb, err) == (0, None, "")
    assert out == run_cli(["export-memsense", "--preset", "memsense"])[1] and json.loads(out)["topK"]
    code, out, err, tb = run_cli(["judge", "qrels", str(DEMO_QUESTIONS), "--out", "-"])
    assert (code, tb, err) == (0, None, "")
    assert out.splitlines() and all(len(line.split()) == 4 for line in out.splitlines())  # qrels lines, no "wrote"
    with contextlib.ExitStack() as stack, pytest.MonkeyPatch.context() as mp:
        _history("healthy")(env, stack, mp)
        code, out, err, tb = run_cli([_expand(a, env) for a in (*HISTORY, "--export", "2", "--out", "-")])
    assert (code, tb, err) == (0, None, "")
    from core import config as config_io

    from core.config import Config

    assert config_io.loads(out, "toml") == Config()  # the settings as TOML, loadable
    store = ("--store", str(env.store), "--cache", str(env.cache), "--quiet")
    code, out, err, tb = run_cli(["report", str(DEMO_QUESTIONS), *store, "--a", "memsense", "--b", "bm25_only",
                                  "--out", "-"])
    assert (code, tb, err) == (0, None, "") and out.lstrip().lower().startswith("<!doctype html") and "wrote" not in out
    code, out, err, tb = run_cli(["judge", "run", str(DEMO_QUESTIONS), *store, "--preset", "memsense", "--out", "-"])
    assert (code, tb, err) == (0, None, "") and all(len(line.split()) == 6 for line in out.splitlines())
    assert not (env.work / "-").exists()



def test_question_files_in_crlf_with_a_bom_or_on_standard_input_score_as_the_plain_file(case_env, monkeypatch):
    """CRLF line ends, a UTF-8 BOM, and `-` with the file on standard input (diagnose read it, then
    failed on a file named `-`) give the same figures as the file itself."""
    plain = DEMO_QUESTIONS.read_bytes()
    variants = {"crlf.json": plain.replace(b"\n", b"\r\n"), "bom.json": b"\xef\xbb\xbf" + plain}
    for name, data in variants.items():
        (case_env.work / name).write_bytes(data)
    for command in ("eval", "diagnose"):
        argv = [command, "QUESTIONS", "--store", str(case_env.store), "--cache", str(case_env.cache), "--quiet",
                *(("--preset", "memsense") if command == "eval" else ())]
        expected = run_cli([str(DEMO_QUESTIONS) if a == "QUESTIONS" else a for a in argv])
        assert expected[0] == 0 and expected[1], expected[2]
        for name in variants:
            assert run_cli([str(case_env.work / name) if a == "QUESTIONS" else a for a in argv])[:3] == expected[:3]
        with monkeypatch.context() as mp:
            _stdin(plain)(case_env, None, mp)
            code, out, err, tb = run_cli(["-" if a == "QUESTIONS" else a for a in argv])
        assert (code, tb, err) == (0, None, ""), err
        assert out == expected[1]



NOT_FILES = [
    ("eval-questions-fifo", ("eval", "{work}/fifo.json", *S, "--quiet"), "is a named pipe, not a file"),
    ("diagnose-questions-fifo", ("diagnose", "{work}/fifo.json", *S, "--quiet"), "is a named pipe"),
    ("impact-queries-fifo", ("impact", "{work}/fifo.json", *S, "--a", "memsense", "--b", "bm25_only"), "is a named pipe"),
    ("search-config-fifo", (*SEARCH, QUERY, "--config", "{work}/fifo.json"), "is a named pipe"),
    ("search-log-file-fifo", (*SEARCH, QUERY, "--log-file", "{work}/fifo.json"), "is a named pipe, not a file"),
    ("ingest-dataset-fifo", ("ingest", "{work}/fifo.json", *S), "is a named pipe"),
    ("eval-questions-dev-zero", ("eval", "/dev/zero", *S, "--quiet"), "/dev/zero is a device, not a file"),
    ("diagnose-questions-dev-zero", ("diagnose", "/dev/zero", *S, "--quiet"), "is a device"),
    ("impact-queries-dev-zero", ("impact", "/dev/zero", *S, "--a", "memsense", "--b", "bm25_only"), "is a device"),
    ("rerank-dev-zero", ("rerank", "/dev/zero"), "is a device"),
    ("judge-import-qrels-dev-zero", ("judge", "import", "/dev/zero", "--questions", "{demoq}", "--out",
                                     "{work}/judged.json"), "is a device"),
]


def _memory_cap() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))  # a read of /dev/zero fails, not the machine


@pytest.mark.parametrize("name,argv,expect", NOT_FILES, ids=[n for n, _, _ in NOT_FILES])
def test_an_input_that_is_no_file_is_refused_at_once(name, argv, expect, case_env, reference):
    """/dev/zero never ends and a named pipe with no writer never answers: refused before any read,
    in a process of its own under a deadline (a read that never returns cannot be interrupted in-process)."""
    import subprocess

    TALLY["cases"] += 1
    if "fifo" in name:
        os.mkfifo(case_env.work / "fifo.json")
    code = "import sys; from core.cli.main import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.run([sys.executable, "-c", code, *(_expand(a, case_env) for a in argv)], capture_output=True,
                          text=True, timeout=90, cwd=case_env.work, preexec_fn=_memory_cap,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    TALLY["tracebacks"] += "Traceback" in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip() and not PROGRESS.match(line)]
    assert proc.returncode == 1 and len(lines) == 1, proc.stderr[-2000:]
    assert lines[0].startswith("memsense: error: ") and expect in lines[0], lines[0]
    assert digest(case_env.store) == reference[1]
    assert sorted(p.name for p in case_env.work.iterdir()) == sorted(["folder.toml"] + ["fifo.json"] * ("fifo" in name))



def test_a_case_named_three_times_is_one_case(case_env):
    code, out, err, tb = run_cli([_expand(a, case_env) for a in (*FIX, "--cases", "demo-ana:q0,demo-ana:q0,demo-ana:q0",
                                                                 "--trials", "3", "--json")])
    assert (code, tb) == (0, None), err
    assert json.loads(out)["cases"] == ["demo-ana:q0"]
    code, out, err, tb = run_cli([_expand(a, case_env) for a in (*FIX, "--cases", "demo-ana:q0,demo-ana:q0",
                                                                 "--trials", "3")])
    assert (code, tb) == (0, None) and out.startswith("1 cases from memsense"), out


def _ctrl_c_after(mp, module, trials: int) -> None:
    """Ctrl+C (SIGINT) arrives while the search scores trial `trials`."""
    import signal

    def progress(args):
        def show(done: int, total: int, stage: str) -> None:
            if done == trials and ("trial" in stage or "sweep" in stage):
                os.kill(os.getpid(), signal.SIGINT)
        return show

    mp.setattr(module, "progress", progress)


@pytest.mark.parametrize("command", ["fix", "tune"])
def test_ctrl_c_keeps_the_trials_done_and_reports_the_best_so_far(command, case_env, monkeypatch):
    from core.cli import failures, tuning

    store = ("--store", str(case_env.store), "--cache", str(case_env.cache))
    argv = {"fix": ["fix", str(DEMO_QUESTIONS), *store, "--cases", "demo-ana:q0", "--trials", "200"],
            "tune": ["tune", str(DEMO_QUESTIONS), *store, "--train", "demo-ana", "--trials", "200", "--jobs", "1",
                     "--sensitivity-points", "0"]}[command]
    _ctrl_c_after(monkeypatch, failures if command == "fix" else tuning, 3)
    code, out, err, tb = run_cli(argv)
    assert tb is None, tb
    assert code == 0 and out.strip(), err
    lines = [line for line in err.splitlines() if line.strip() and not PROGRESS.match(line)]
    assert len(lines) == 1 and lines[0].startswith("memsense: warning: stopped by Ctrl+C after "), err
    assert " of 200 trials" in lines[0] and "after 200 of" not in lines[0]



def _expand(arg: str, env: Env) -> str:
    for key, value in {"{store}": env.store, "{cache}": env.cache, "{files}": env.files, "{work}": env.work,
                       "{demo}": DEMO_DATASET, "{demoq}": DEMO_QUESTIONS, "{tuned_model}": env.tuned_model,
                       "{other_model}": env.other_folder_model}.items():
        arg = arg.replace(key, str(value))
    return arg


def run_cli(argv: list[str]) -> tuple[int, str, str, str | None]:
    """(exit code, stdout, stderr, traceback text or None) of one in-process CLI run."""
    out, err = io.StringIO(), io.StringIO()
    tb = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
        except BaseException:  # the one thing the catalogue exists to catch
            code, tb = -1, traceback.format_exc()
    return code, out.getvalue(), err.getvalue(), tb


@pytest.fixture(scope="session")
def catalogue_env(tmp_path_factory, demo_store, model_cache) -> Env:
    from core.recall.embedding.embedder import default_model_path

    root = tmp_path_factory.mktemp("catalogue")
    files = root / "files"
    files.mkdir()
    qid = json.loads(DEMO_QUESTIONS.read_text())["questions"][0].get("id") or _first_question_id()
    for name, content in FILES.items():
        path = files / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content.replace("{qid}", qid), encoding="utf-8")
    model = default_model_path(torch=True)  # a sentence-transformers folder (the [models] extra)
    tuned = root / "tuned" / model.name  # a fine-tuned copy: same folder name, same file sizes
    shutil.copytree(model, tuned)
    weights = tuned / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0xFF
    weights.write_bytes(bytes(data))
    other = root / "same-model-another-folder"
    shutil.copytree(model, other)
    store = root / "store"  # the catalogue's own copy: a case that locks it for writing must not meet
    shutil.copytree(demo_store, store)  # the session's demo engine, which holds the shared store open for reading
    return Env(store, model_cache, files, root / "home", root / "work", tuned, other, qid)


def _first_question_id() -> str:
    from core.evaluation.judged import load_question_set

    return load_question_set(DEMO_QUESTIONS)[0].question_id


@pytest.fixture(scope="session")
def reference(catalogue_env) -> tuple[str, str]:
    """The reference search's JSON output and the store's digest, before any case ran."""
    code, out, err, tb = run_cli(["search", "--store", str(catalogue_env.store), "--cache", str(catalogue_env.cache),
                                  "--user", "demo-ana", QUERY, "--json"])
    assert code == 0 and tb is None, err
    return out, digest(catalogue_env.store)


@pytest.fixture
def case_env(catalogue_env, tmp_path, monkeypatch) -> Env:
    """A fresh work folder and app home per case, and no default cache or presets of the machine."""
    env = Env(**{**catalogue_env.__dict__, "home": tmp_path / "home", "work": tmp_path / "work"})
    env.home.mkdir()
    env.work.mkdir()
    (env.work / "folder.toml").mkdir()
    monkeypatch.setenv("MEMSENSE_GUI_HOME", str(env.home))
    monkeypatch.setenv("MEMSENSE_CACHE", str(env.cache))
    monkeypatch.chdir(env.work)
    return env


def _forbid_embedding(monkeypatch) -> None:
    from core.recall.embedding import embedder as embed

    def refuse(self, texts, *args, **kwargs):
        raise AssertionError("slow work (embedding) ran before the cheap checks: " + repr(list(texts)[:1])[:80])

    monkeypatch.setattr(embed.Embedder, "encode", refuse)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case: Case, case_env: Env, reference, monkeypatch, request):
    TALLY["cases"] += 1
    argv = [_expand(a, case_env) for a in case.argv]
    with contextlib.ExitStack() as stack, monkeypatch.context() as mp:
        if case.setup:
            case.setup(case_env, stack, mp)
        if not case.may_embed:
            _forbid_embedding(mp)
        code, out, err, tb = run_cli(argv)
    after = run_cli(["search", "--store", str(case_env.store), "--cache", str(case_env.cache),
                     "--user", "demo-ana", QUERY, "--json"])[1]
    changed = after != reference[0] or digest(case_env.store) != reference[1]
    TALLY["tracebacks"] += tb is not None or "Traceback" in err
    TALLY["data_changed"] += changed
    assert tb is None, tb
    lines = [line for line in err.splitlines() if line.strip() and not PROGRESS.match(line)]
    assert code == case.code, f"exit {code}, not {case.code}; stderr: {err!r}"
    assert len(lines) == 1 and lines[0].startswith("memsense: error: "), f"stderr is not one error line: {err!r}"
    assert case.expect.lower() in lines[0].lower(), lines[0]
    assert "\x1b" not in err + out and "\x07" not in err + out, "raw terminal escapes printed"
    assert SECRET not in err + out, "a secret was printed"
    assert not changed, "the store or its search results changed"
    assert not list(case_env.work.glob("**/made")), "a missing folder was created"


# ---------------------------------------------------------------- hostile but valid: these must work

def _search(env: Env, *extra: str, store: Path | None = None) -> tuple[int, str, str, str | None]:
    return run_cli(["search", "--store", str(store or env.store), "--cache", str(env.cache), "--user", "demo-ana",
                    QUERY, "--json", *extra])


def test_the_same_model_in_a_folder_with_another_name_is_accepted(case_env, reference):
    code, out, err, tb = _search(case_env, "--model", str(case_env.other_folder_model))
    assert (code, tb, err) == (0, None, "")
    assert out == reference[0]


def test_a_store_from_before_content_keys_still_opens_after_its_model_is_checked(case_env, reference, tmp_path):
    """A store migrated from an older memsense records the old key (folder name and file sizes);
    it opens once one stored chunk re-embeds to its stored vector."""
    from core.recall.embedding.embedder import default_model_path
    from core.recall.embedding.model_identity import legacy_model_key
    from core.recall.embedded.store import DB

    old = tmp_path / "old-store"
    shutil.copytree(case_env.store, old)
    with contextlib.closing(sqlite3.connect(old / DB)) as db, db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'model_key'", (legacy_model_key(default_model_path()),))
    code, out, err, tb = _search(case_env, store=old)
    assert (code, tb, err) == (0, None, "")
    assert out == reference[0]


def test_terminal_escapes_in_dataset_text_are_shown_not_obeyed(case_env, tmp_path, monkeypatch):
    from core.recall.embedding import embedder as embed

    monkeypatch.setattr(embed.Embedder, "load", lambda self: setattr(self, "_model", _StubModel()))
    dataset = tmp_path / "escapes.jsonl"
    dataset.write_text(json.dumps({"user": "eve\x1b[31m", "session": 1, "time": "2024-01-01T00:00:00",
                                   "speaker": "Eve", "text": "hello \x1b]0;owned\x07 there \x9b2J"}) + "\n"
                       + json.dumps({"user": "eve\x1b[31m", "session": 1, "time": "2024-01-01T00:00:00",
                                     "speaker": "Bob", "text": "hi"}) + "\n")
    store, cache = tmp_path / "store", tmp_path / "cache"
    for argv in (["ingest", str(dataset), "--store", str(store), "--cache", str(cache)],
                 ["search", "--store", str(store), "--cache", str(cache), "--user", "eve\x1b[31m", "hello"],
                 ["search", "--store", str(store), "--cache", str(cache), "--user", "eve\x1b[31m", "hello", "--json"]):
        code, out, err, tb = run_cli(argv)
        assert (code, tb) == (0, None), err
        assert not any(ch in out + err for ch in "\x1b\x07\x9b"), (out + err)[:300]
    assert "\\x1b]0;owned" in run_cli(argv[:-1])[1]  # shown as text


def test_gold_sessions_missing_from_the_store_are_warned_about(case_env, tmp_path):
    def run(evidence: list[str]):
        questions = tmp_path / "questions.json"
        questions.write_text(json.dumps({"questions": [
            {"user": "demo-ana", "question": QUERY, "answer": "3", "category": 1, "evidence": evidence}]}))
        return run_cli(["eval", str(questions), "--store", str(case_env.store), "--cache", str(case_env.cache),
                        "--preset", "memsense", "--quiet"])

    code, out, err, tb = run(["D1:1", "D99:2"])
    assert (code, tb) == (0, None), err
    assert err.startswith("memsense: warning: 1 of 1 questions have gold sessions the store does not hold")
    assert "session 99 of demo-ana" in err and len(err.splitlines()) == 1
    code, out, err, tb = run(["D1:1", "D2:3"])
    assert (code, tb, err) == (0, None, "")  # sessions the store holds: no warning


def test_damage_to_one_user_leaves_the_others_searchable(case_env, monkeypatch):
    _damaged_copy("garbled")(case_env, None, monkeypatch)
    code, out, err, tb = run_cli(["search", "--store", str(case_env.work / "damaged-store"), "--cache",
                                  str(case_env.cache), "--user", "demo-mei", QUERY, "--json"])
    assert (code, tb, err) == (0, None, "")
    assert json.loads(out)["results"]

