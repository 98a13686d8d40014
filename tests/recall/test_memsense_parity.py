"""Production parity, checked against Memsense's own JavaScript run by node at test time.

The functions come from the Memsense source (a git mirror, read with `git show`; nothing of it is
in this repository), are written to a temporary folder and imported by node 20:
- `embedText` of src/server/embedding/client.js, with its `bge_http` provider pointed at a
  loopback endpoint that records what it is sent: the query cut at 6,000 UTF-16 units by
  `slice`, an emoji straddling the cut left as its high surrogate. Our `EndpointEmbedder`
  must send the very same string to the same endpoint.
- `hybridRerank` of src/server/retrieval/rerank.js on rows whose final score is an exact
  rounding tie (`toFixed` goes away from zero where Python's `round` goes to even).
- `String.prototype.trim` and `Number.prototype.toFixed` themselves.
The whole Memsense service (tests against it need npm and a database) is not started here.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from core.rank.replay import replay
from core.rank.score import js_round, to_fixed
from core.recall.embedding.endpoint import EndpointEmbedder
from core.recall.query_text import JS_WHITESPACE, MAX_CHARS, js_trim, memsense_cut
from tests.memsense_db import EmbeddingEndpoint

MIRROR = Path(os.environ.get("MEMSENSE_GIT_DIR", "/work/.mirror/OpenSenseNova+MemSense/repo"))
SOURCES = ("src/server/embedding/client.js", "src/server/config.js", "src/server/retrieval/rerank.js")


@pytest.fixture(scope="module")
def memsense_js(tmp_path_factory) -> Path:
    """Memsense's own modules in a temporary folder, or a skip saying what is missing."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    if not MIRROR.is_dir():
        pytest.skip(f"no Memsense git mirror at {MIRROR} (set MEMSENSE_GIT_DIR)")
    root = tmp_path_factory.mktemp("memsense-js")
    for name in SOURCES:
        text = subprocess.run(["git", "--git-dir", str(MIRROR), "show", f"HEAD:{name}"], check=True,
                              capture_output=True, text=True, timeout=60).stdout
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    (root / "package.json").write_text('{"type": "module"}\n')
    return root


def node(root: Path, script: str, data, env: dict[str, str] | None = None):
    """Run an ES module `script` in `root` with `data` as JSON on stdin; its stdout as JSON."""
    done = subprocess.run(["node", "--input-type=module", "-e", script], cwd=root, input=json.dumps(data),
                          capture_output=True, text=True, timeout=60, env={**os.environ, **(env or {})},
                          check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else None


STRADDLE = "a" * (MAX_CHARS - 1) + "\U0001F600" + " tail"  # the emoji's two units are the 6,000th and 6,001st
QUERIES = [
    STRADDLE,
    "\U0001F600" * (MAX_CHARS // 2 + 7),  # 6,014 units: the cut lands between two emoji
    "x" * MAX_CHARS + "\U0001F600",
    "短い質問 " * 1300 + "\U0001F680 rocket",
    "When did Ana run her first marathon?",
]


def test_the_query_is_cut_as_memsense_cuts_it(memsense_js):
    sent: list[str] = []
    endpoint = EmbeddingEndpoint(lambda text: sent.append(text) or [1.0, 0.0])
    try:
        node(memsense_js, "import fs from 'node:fs';"
                          "const { embedText } = await import('./src/server/embedding/client.js');"
                          "for (const q of JSON.parse(fs.readFileSync(0, 'utf8'))) await embedText(q);",
             QUERIES, {"MEMSENSE_EMBEDDING_PROVIDER": "bge_http", "MEMSENSE_BGE_ENDPOINT": endpoint.url + "/embed",
                       "MEMSENSE_BGE_MODEL": "m", "MEMSENSE_EMBEDDING_MAX_CHARS": str(MAX_CHARS)})
        memsense, sent[:] = list(sent), []
        ours = EndpointEmbedder(endpoint.url + "/embed", "m")
        for q in QUERIES:
            ours.embed(q)
    finally:
        endpoint.close()
    assert sent == memsense
    assert memsense[0].endswith("\ud83d") and memsense[0] != STRADDLE[:MAX_CHARS]  # half an emoji, as JS slices
    assert memsense == [memsense_cut(q) for q in QUERIES]


def test_trim_is_javascripts(memsense_js):
    texts = [JS_WHITESPACE + "q" + JS_WHITESPACE, "\x1c q \x1f", "\ufeffq\u3000", "\x85q"]
    assert node(memsense_js, "import fs from 'node:fs';"
                             "console.log(JSON.stringify(JSON.parse(fs.readFileSync(0, 'utf8')).map((s) => s.trim())));",
                texts) == [js_trim(t) for t in texts]


def test_scores_are_rounded_as_tofixed_rounds_them(memsense_js):
    rng = np.random.default_rng(7)
    ties = [k / 128 for k in range(1, 40, 2)] + [k / 32 for k in range(1, 9, 2)]  # exact halves at 6 and 4 decimals
    values = ties + [-t for t in ties] + rng.uniform(-1, 1, 300).tolist() + [0.1234565, 2.5e-7, 0.0, 1.0]
    expected = node(memsense_js, "import fs from 'node:fs';"
                                 "const v = JSON.parse(fs.readFileSync(0, 'utf8'));"
                                 "console.log(JSON.stringify(v.map((x) => [x.toFixed(6), x.toFixed(4),"
                                 " Number(x.toFixed(6))])));", values)
    assert [[to_fixed(v, 6), to_fixed(v, 4), js_round(v, 6)] for v in values] == expected
    assert to_fixed(0.0078125, 6) == "0.007813" != f"{0.0078125:.6f}"  # where Python's own rounding differs


def test_final_scores_on_rounding_ties_are_memsenses(memsense_js):
    rows = [{"memory_id": f"m{i}", "rrf_score": rrf, "score": 0, "embedding": [float(j == i) for j in range(4)]}
            for i, rrf in enumerate([3 / 128, 1 / 128, 5 / 128, 0.0123])]
    theirs = node(memsense_js, "import fs from 'node:fs';"
                               "const { hybridRerank } = await import('./src/server/retrieval/rerank.js');"
                               "const rows = JSON.parse(fs.readFileSync(0, 'utf8'));"
                               "console.log(JSON.stringify(hybridRerank(rows, 4).map((r) => [r.memory_id, r.final_score])));",
                  rows)
    ours = replay({"rows": rows, "top_k": 4}, None)
    assert [[r["memory_id"], r["final_score"]] for r in ours[0]["results"]] == theirs
    assert dict(theirs)["m1"] == 0.007813  # toFixed(6) of the tie 1/128 (Python's round gives 0.007812)
