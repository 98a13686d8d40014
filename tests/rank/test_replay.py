"""Replay's bulk readers against its row-by-row readers: the same values, the same first error.

The bulk paths (one JSON parse of a case's embedding strings, type sets over columns, one array
pass for final scores) exist for speed only, so each is checked here against the plain per-row
reading it replaces, on generated rows in every accepted form.
"""
from __future__ import annotations

import json
import re
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.config import Config
from core.errors import MemsenseError
from core.rank import replay as replay_module
from core.rank.replay import (_embedding, _rows_one_by_one, case_rows, embedding_rows, final_scores, replay_case,
                              score_order)
from core.rank.score import final_score

finite = st.floats(-1e300, 1e300)  # a value a 9-digit format cannot round past the largest float
FORMATS = [repr, lambda x: f"{x:.17g}", lambda x: f"{x:.6g}", lambda x: f"{x:.9e}", lambda x: f"{x:.3f}"]


def text(values, fmt, spaced: bool) -> str:
    sep = ", " if spaced else ","
    inner = sep.join(fmt(v) for v in values)
    return f" [ {inner} ] " if spaced else f"[{inner}]"


def reference(values, where=lambda i: f"row {i}") -> tuple[np.ndarray, np.ndarray]:
    """Each row through `_embedding` alone, zero-padded: what the bulk readers must equal."""
    rows = [_embedding(v, where(i)) for i, v in enumerate(values)]
    dims = np.array([0 if r is None else len(r) for r in rows], dtype=np.int32)
    out = np.zeros((len(rows), max(int(dims.max(initial=0)), 1)))
    for i, r in enumerate(rows):
        if r:
            out[i, : len(r)] = r
    return out, dims


@st.composite
def embedding_values(draw):
    """A case's embeddings: usually strings of one dimension (the bulk path), else any mix."""
    n = draw(st.integers(1, 12))
    dim = draw(st.integers(0, 6))
    uniform = draw(st.booleans())
    out = []
    for _ in range(n):
        d = dim if uniform else draw(st.integers(0, 6))
        values = draw(st.lists(finite, min_size=d, max_size=d))
        kind = "text" if uniform else draw(st.sampled_from(["text", "list", "ints", "null"]))
        if kind == "text":
            out.append(text(values, draw(st.sampled_from(FORMATS)), draw(st.booleans())))
        elif kind == "list":
            out.append(values)
        elif kind == "ints":
            out.append([int(v) % 1000 for v in values])
        else:
            out.append(None)
    return out


@settings(max_examples=150, deadline=None)
@given(values=embedding_values())
def test_embedding_rows_equal_the_row_reader(values):
    got, dims = embedding_rows(values, str)
    want, want_dims = reference(values)
    assert np.array_equal(got, want) and np.array_equal(dims, want_dims)


@settings(max_examples=100, deadline=None)
@given(values=st.lists(finite, min_size=1, max_size=40), fmt=st.sampled_from(FORMATS))
def test_strings_read_exactly_as_float_does(values, fmt):
    """Correct rounding: every string reads as Python's float() of it, bit for bit."""
    strings = [fmt(v) for v in values]
    got, _ = embedding_rows(["[" + ",".join(strings) + "]"] * 3, str)
    assert got.tolist() == [[float(s) for s in strings]] * 3


@pytest.mark.parametrize("bad, message", [
    ("[1 2]", "embedding string is not a JSON list of numbers"),
    ("[1,,2]", "embedding string is not a JSON list of numbers"),
    ("[--1, 2]", "embedding string is not a JSON list of numbers"),
    ("[1e, 2]", "embedding string is not a JSON list of numbers"),
    ("[[1, 2]]", "embedding must be a list of numbers"),
    ("[1, 2] [3]", "embedding string is not a JSON list of numbers"),
    ("[true, 1]", "embedding must be a list of numbers"),
    ('["1", 2]', "embedding must be a list of numbers"),
    ("[1, NaN]", "embedding[1] is nan"),
    ("[1e999, 0]", "embedding[0] is inf"),
    ([1, 10 ** 400], "embedding[1] is 1000000000"),
])
def test_a_bad_string_among_good_ones_is_named(bad, message):
    """One bad embedding in a case of good strings: the row is named, never a crash (numpy 2 raised
    ValueError on '1 2' before)."""
    values = ["[0.5, 0.25]"] * 30
    values[17] = bad
    with pytest.raises(MemsenseError, match=re.escape(f"row 17: {message}")):
        embedding_rows(values, lambda i: f"row {i}")


@pytest.mark.parametrize("values", [
    ["[1],[2]", "[3]"], ["[1]]", "[[2]"], ["[1],2]", "[3]"], ["[1], 2]", "[3]"], ['[1],"]', '[2]"]'],
    ["[1],[2]", "[[3]", "[4]]"], ["[1, 2]", "[3]", "[]"], ["[]", "[]"], ['[1], {"a": 1}]', "[2]"],
    ["[1,2]", "[3,4]]"], ["[1, 2]", "[3, [4]]"], ["[1]", "[2] "], ["[1.5e3]", "[-0, 2]"], ["[1]", "[\u00e9]"],
])
def test_strings_that_join_into_valid_json_are_still_read_one_by_one(values):
    """The joined parse must not let one string's text run into the next: strings that hold a
    second list, close early, or leave text between lists read as the row reader reads each
    (the same values or the same first error)."""
    try:
        want = reference(values)
    except MemsenseError as exc:
        with pytest.raises(MemsenseError, match=re.escape(str(exc))):
            embedding_rows(values, lambda i: f"row {i}")
        return
    got, dims = embedding_rows(values, lambda i: f"row {i}")
    assert np.array_equal(got, want[0]) and np.array_equal(dims, want[1])


ids = st.one_of(st.text(min_size=1, max_size=4).filter(str.strip), st.integers(-5, 10 ** 20))
scores = st.one_of(st.none(), finite, st.integers(-3, 3), st.booleans(), st.text(max_size=3))
names = st.one_of(st.none(), st.lists(st.text(max_size=3), max_size=3))


@st.composite
def rows(draw):
    mids = draw(st.lists(ids, min_size=1, max_size=10, unique_by=str))
    out = []
    for mid in mids:
        row = {"memory_id": mid, "rrf_score": draw(st.one_of(finite, st.integers(-10, 10)))}
        for field, strategy in (("score", scores), ("tags", names), ("routes", names)):
            if draw(st.booleans()):
                row[field] = draw(strategy)
        out.append(row)
    return out


@settings(max_examples=150, deadline=None)
@given(raw=rows())
def test_bulk_rows_equal_the_row_reader(raw):
    assert case_rows(raw, "c") == _rows_one_by_one(raw, "c")


@settings(max_examples=100, deadline=None)
@given(raw=rows(), spoil=st.sampled_from([
    ("memory_id", ""), ("memory_id", None), ("memory_id", 1.5), ("rrf_score", float("nan")), ("rrf_score", True),
    ("rrf_score", 10 ** 400), ("score", float("inf")), ("score", -(10 ** 400)), ("tags", "a"), ("routes", [1]),
    ("memory_id", "dup")]), at=st.integers(0, 9))
def test_bulk_rows_fail_as_the_row_reader(raw, spoil, at):
    field, value = spoil
    raw[at % len(raw)][field] = value
    if value == "dup":
        raw.append(dict(raw[at % len(raw)]))
    with pytest.raises(MemsenseError) as want:
        _rows_one_by_one(raw, "c")
    with pytest.raises(MemsenseError, match=re.escape(str(want.value))):
        case_rows(raw, "c")


@settings(max_examples=150, deadline=None)
@given(pairs=st.lists(st.tuples(finite.filter(lambda x: abs(x) < 1e12), scores), min_size=1, max_size=20),
       alpha=st.floats(0, 5))
def test_final_scores_equal_final_score(pairs, alpha):
    rrf = [float(r) for r, _ in pairs]
    memory = [s for _, s in pairs]
    want = [final_score(r, s, alpha) for r, s in pairs]
    assert json.dumps(final_scores(rrf, memory, alpha)) == json.dumps(want)  # -0.0 and 0.0 told apart


def test_a_cached_setting_still_checks_each_case():
    rows_ = [{"memory_id": "a", "rrf_score": 0.1}]
    assert replay_case({"rows": rows_, "options": {"alpha": 1}})["results"][0]["final_score"] == 0.6
    with pytest.raises(MemsenseError, match="alpha"):
        replay_case({"rows": rows_, "options": {"alpha": True}})  # equal to 1 as a key, refused as a value
    base = Config(alpha=0.5)
    assert replay_case({"rows": rows_}, base)["results"][0]["final_score"] == 0.35
    assert replay_case({"rows": rows_})["results"][0]["final_score"] == 0.15


# -- the whole case: fast paths against the plain ones ------------------------------------------------------
TAG_NAMES = ["music", "pets", "work", "food"]


def random_case(seed: int, rows: int | None = None) -> dict:
    """A Memsense pool with what makes re-ranking hard: tied scores, near-duplicate vectors, tags,
    null scores; on some seeds null embeddings, zero vectors, vectors of another width, lists,
    numeric ids."""
    rng = np.random.default_rng(seed)
    n, d = rows or int(rng.integers(1, 80)), int(rng.choice([3, 16, 384]))
    base = rng.normal(size=(4, d))
    out = []
    for i in range(n):
        v = base[rng.integers(4)] + rng.normal(size=d) * rng.choice([0.0, 1e-3, 0.1]) if rng.random() < 0.3 \
            else rng.normal(size=d)
        emb = "[" + ",".join(f"{x:.6g}" for x in v) + "]"
        odd = rng.random() < 0.1
        if odd and seed % 5 == 1:
            emb = None
        elif odd and seed % 5 == 2:
            emb = "[" + ",".join(["0"] * d) + "]"
        elif odd and seed % 5 == 3:
            emb = v[: max(d - 1, 1)].tolist()
        out.append({"memory_id": f"m{int(rng.integers(1000))}-{i}" if seed % 4 else int(rng.integers(1000)) * 1000 + i,
                    "rrf_score": float(rng.choice([0.1, 0.05, 0.2])) if seed % 3 == 0 else float(rng.random() * 0.3),
                    "score": None if rng.random() < 0.2 else float(rng.choice([0.5, rng.random(), 1.5, -0.2])),
                    "embedding": emb, "routes": ["lexical", "vec_full"][: int(rng.integers(0, 3))],
                    "tags": rng.choice(TAG_NAMES, size=int(rng.integers(0, 3)), replace=False).tolist() if seed % 7 else []})
    options = {"lambda": float(rng.random()), "duplicateThreshold": float(rng.uniform(0.3, 1.0)),
               "alpha": float(rng.random())} if seed % 2 else {}
    return {"name": f"case-{seed}", "top_k": int(rng.integers(1, 40)), "options": options, "rows": out}


def plain_paths(monkeypatch) -> None:
    """Every bulk reader off: rows one by one, each embedding by the row reader, each final score
    by `final_score`, the order by `sorted`."""
    monkeypatch.setattr(replay_module, "_bulk_rows", lambda raw: None)
    monkeypatch.setattr(replay_module, "_json_texts", lambda texts: None)
    monkeypatch.setattr(replay_module, "_parse_texts", lambda texts: [None] * len(texts))
    monkeypatch.setattr(replay_module, "final_scores",
                        lambda rrf, scores, alpha: [final_score(r, s, alpha) for r, s in zip(rrf, scores)])
    monkeypatch.setattr(replay_module, "score_order",
                        lambda final, ids: sorted(range(len(final)), key=lambda i: (-final[i], ids[i])))


def test_fast_replay_equals_the_plain_paths(monkeypatch):
    cases = [random_case(seed) for seed in range(80)]
    fast = [json.dumps(replay_case(case)) for case in cases]
    plain_paths(monkeypatch)
    assert [json.dumps(replay_case(case)) for case in cases] == fast  # every value, bit for bit


@settings(max_examples=150, deadline=None)
@given(final=st.lists(st.sampled_from([0.3, 0.2, 0.2000001, 0.0, -0.0, -0.1]), min_size=0, max_size=30),
       data=st.data())
def test_score_order_is_sorted_by_score_then_id(final, data):
    ids = data.draw(st.lists(st.text(max_size=3), min_size=len(final), max_size=len(final), unique=True))
    assert score_order(final, ids) == sorted(range(len(final)), key=lambda i: (-final[i], ids[i]))


def test_a_bad_embedding_in_a_deep_pool_is_one_line_naming_its_row():
    for bad, message in (("[1, NaN]", "embedding[1] is nan"), ("[1,,2]", "embedding string is not a JSON list"),
                         ([0.5, float("inf")], "embedding[1] is inf")):
        case = random_case(11, rows=512)
        case["rows"][300]["embedding"] = bad
        with pytest.raises(MemsenseError) as err:
            replay_case(case)
        assert "\n" not in str(err.value) and re.search(r"case 'case-11' row 300: " + re.escape(message), str(err.value))


def test_the_kept_parser_survives_bad_cases_and_threads(monkeypatch):
    """The embedding parser is kept per thread: a case that fails to parse leaves the next one
    right, threads re-ranking at once get what one thread gets, and a case too large to keep a
    parser for gets the same from a parser of its own."""
    cases = [random_case(seed, rows=64) for seed in (0, 4, 8, 12)]
    want = [json.dumps(replay_case(case)) for case in cases]
    with monkeypatch.context() as patch:
        patch.setattr(replay_module, "PARSER_KEEP_BYTES", 0)
        assert [json.dumps(replay_case(case)) for case in cases] == want
    bad = random_case(0, rows=64)
    bad["rows"][5]["embedding"] = "[1, NaN, 2]"
    for case, expected in zip(cases, want):
        with pytest.raises(MemsenseError, match="row 5"):
            replay_case(bad)
        assert json.dumps(replay_case(case)) == expected
    got: dict[int, list[str]] = {}

    def work(k: int) -> None:
        got[k] = [json.dumps(replay_case(case)) for case in cases * 5]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(got[k] == want * 5 for k in range(4))


@pytest.mark.parametrize("bad", ["[1, ]", "[1,2, ]", "[ ,1]", "[1, ,2]", "[.5, ]"])
def test_a_missing_number_between_commas_is_named_not_read_as_minus_one(bad):
    """A gap between commas is refused as the row reader refuses it (numpy's text reader gave -1
    for it, silently)."""
    values = ["[0.5, 1]"] * 5
    values[3] = bad  # outside JSON's grammar: read by the second reader, whose numbers numpy reads
    with pytest.raises(MemsenseError, match=re.escape("row 3: embedding string is not a JSON list of numbers")):
        embedding_rows(values, lambda i: f"row {i}")


TOKENS = ["[", "]", ",", " ", "1", "2.5", "-0", ".5", "01", '"', "{", "}", ":", "true", "null", "NaN", "1e999", "\n",
          "[]", "],[", "0"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.lists(st.sampled_from(TOKENS), max_size=6),
                          st.sampled_from(["]", "] ", "", "]]", "],", " ]"])), min_size=1, max_size=4))
def test_strings_of_json_tokens_read_as_the_row_reader_or_the_lenient_reader(parts):
    """Whatever text the strings hold (brackets, commas, quotes, objects, gaps, text after the list),
    the bulk readers give the row reader's values or its first error, or, for numbers outside
    JSON's grammar (`.5`, `01`), each number as `float` reads it: never other values."""
    values = ["[" + "".join(body) + end for body, end in parts]
    try:
        want = reference(values)
    except MemsenseError as exc:
        try:
            got, dims = embedding_rows(values, lambda i: f"row {i}")
        except MemsenseError as again:
            assert str(again) == str(exc)
            return
        lenient = [[float(x) for x in v.strip()[1:-1].split(",")] if v.strip()[1:-1].strip() else [] for v in values]
        assert dims.tolist() == [len(r) for r in lenient]
        assert [x for row, d in zip(got.tolist(), dims.tolist()) for x in row[:d]] == [x for r in lenient for x in r]
        return
    got, dims = embedding_rows(values, lambda i: f"row {i}")
    assert np.array_equal(got, want[0]) and np.array_equal(dims, want[1])


def test_integers_past_the_doubles_are_named_even_when_their_sum_is_small():
    raw = [{"memory_id": f"m{i}", "rrf_score": x} for i, x in enumerate([10 ** 400, -(10 ** 400), 1.0])]
    with pytest.raises(MemsenseError, match=re.escape("case 'c' row 0: rrf_score must be a finite number")):
        case_rows(raw, "c")
    raw = [{"memory_id": f"m{i}", "rrf_score": 0.1, "score": x} for i, x in enumerate([10 ** 400, -(10 ** 400)])]
    with pytest.raises(MemsenseError, match=re.escape("case 'c' row 0: score must be a finite number or null")):
        case_rows(raw, "c")
