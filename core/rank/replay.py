"""Replay Memsense-format candidate rows (a pool logged by the service) through the final
score and MMR stages (SPEC §7): `{name, top_k, options{alpha, lambda, duplicateThreshold}, rows}`.

A case is read in bulk: every field of every row is checked by a few C-level passes (type sets,
one array per column) and the embedding strings of a case are read by one JSON parse (simdjson:
correctly rounded, as `float()`). Whenever a bulk check fails, the row-by-row reader runs
instead: it gives the same values and names the first bad row and the problem.
"""
from __future__ import annotations

import itertools
import json
import math
import re
import threading
import warnings
from dataclasses import replace
from typing import Any, Callable, Sequence, TypeGuard

import numpy as np
import simdjson

from core.rank import mmr
from core.config import Config
from core.errors import MemsenseError
from core.rank.score import ONE, ZERO, clamp01, final_score, round6
from core.records import DEFAULT_MEMORY_SCORE

OPTION_FIELDS = {"alpha": "alpha", "lambda": "mmr_lambda", "duplicateThreshold": "duplicate_threshold"}
NUMBERS = (float, int)  # exact types: bool is refused everywhere a number is asked for


def _finite(x: float | int) -> bool:
    try:
        return math.isfinite(x)
    except OverflowError:  # an integer too large for a float
        return False


def _embedding(value: Any, where: str) -> list[float] | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise MemsenseError(f"{where}: embedding string is not a JSON list of numbers") from None
    if not isinstance(value, list) or not all(_is_number(x) for x in value):
        raise MemsenseError(f"{where}: embedding must be a list of numbers, a \"[..]\" string or null")
    bad = next((i for i, x in enumerate(value) if not _finite(x)), None)
    if bad is not None:
        raise MemsenseError(f"{where}: embedding[{bad}] is {value[bad]!r:.40}; every element must be a finite number")
    return [float(x) for x in value]


NUMBER_TEXT = re.compile(r"[-+0-9.eE,\s]*")
"""What the second reader takes: digits, signs, points, exponents, commas, spaces (so also `.5`,
`1.`, `+1`, which JSON refuses). Anything else (NaN, Infinity, quotes, brackets) goes to the
exact per-row path and its message."""
EMPTY_FIELD = re.compile(r"(?:^|,)\s*(?:,|$)")
"""A comma with no number before or after it (`[1, ]`, `[1,,2]`, `[ ,1]`): numpy reads the gap as
-1, so such a string goes to the per-row path, which names it."""


def case_vectors(values: list[Any], where: Callable[[int], str]) -> tuple[np.ndarray, np.ndarray]:
    """Every row's embedding as unit rows (zero-padded to the widest) and their dimensions."""
    out, dims = embedding_rows(values, where)
    norms = np.sqrt(np.einsum("ij,ij->i", out, out))
    if np.count_nonzero(norms) == len(norms):  # `all`, by a C function (`norms.all()` goes through Python)
        out /= norms[:, None]
    else:
        dims[norms == 0] = 0
        out[norms > 0] /= norms[norms > 0, None]
    return out, dims


def embedding_rows(values: list[Any], where: Callable[[int], str]) -> tuple[np.ndarray, np.ndarray]:
    """Every row's embedding as it was given, zero-padded to the widest (n, max(d, 1)), and each
    row's dimension (0 for null); raises MemsenseError naming the first bad row (`where(i)`).

    Memsense logs embeddings as `"[..]"` strings (pgvector's text) or lists. The usual case, every
    row a string of one dimension, is one JSON parse into one matrix. Otherwise strings are read
    together, lists by one type scan each, and whatever these readers cannot vouch for is read
    row by row by `_embedding`, which names the row and the problem.
    """
    out = _text_block(values)
    if out is None:
        return _padded(values, where)
    dims = np.empty(len(values), dtype=np.int32)
    dims.fill(out.shape[1])  # `np.full` is a Python function, about 1 us
    return (out if out.shape[1] else np.zeros((len(values), 1))), dims


def _text_block(values: list[Any]) -> np.ndarray | None:
    """The (n, d) matrix when every value is a `"[..]"` string of d numbers; else None."""
    if not values or set(map(type, values)) != {str}:
        return None
    read = _json_texts(values)
    if read is None or read[1].count(read[1][0]) != len(values):
        return None
    return read[0].reshape(len(values), -1)


def _json_texts(texts: list[str]) -> tuple[np.ndarray, list[int]] | None:
    """Every number of the `"[..]"` strings in one array, and how many each string holds, by one
    JSON parse (simdjson: correctly rounded, into a buffer of doubles, no Python float per
    number); None when that parse cannot vouch for every string, so a slower reader decides.

    Each string's one `[` must be its first character (`str.rfind`, a memrchr: `str.count`
    would cost more than the parse). The text of them all, joined by commas into one array,
    must parse, and that array must hold as many elements as there are strings, each an array
    (`len` refuses a number, the buffer a string or an object). Then the n arrays inside are
    opened by the n strings' `[`, one each, in order, and none holds another; each closes
    within its own string (else the next string's `[` would open an array inside it), and what
    follows its `]` there can only be blanks (a comma and a value would be one more element,
    another `]` would close the outer array early): the elements are the strings, one flat list
    each, and each string's count is its array's length. The buffer refuses any element that
    is not a number (true, null, "1"), and JSON has no NaN or infinity while simdjson refuses a
    number past the largest double: every value read is finite. An empty list sends the case
    to the slower reader. (A `-0` is read as 0: the sign of a zero changes no cosine.)
    """
    if not texts or list(map(str.rfind, texts, itertools.repeat("["))).count(0) != len(texts):
        return None
    parts = texts.copy()  # the brackets on the first and last string: the join is the one copy of the text
    parts[0] = "[" + parts[0]
    parts[-1] = parts[-1] + "]"
    text = ",".join(parts)
    parser = _parser(len(text))
    try:
        doc: Any = parser.parse(text)  # read as UTF-8 (an ASCII text as it is, uncopied)
        try:
            counts = list(map(len, doc))  # a number among the elements is refused here, a string below
            flat = np.frombuffer(doc.as_buffer(of_type="d"), dtype=np.float64)
        finally:
            del doc  # the parser is reused: no proxy of this document may outlive the read
    except (ValueError, TypeError, RuntimeError):  # NaN, "1 2", true, 1e999, 2**64, a lone surrogate
        _PARSER.__dict__.pop("parser", None)  # whatever state it is left in, the next case gets a new one
        return None
    ok = len(counts) == len(texts) and min(counts, default=0) > 0 and len(flat) == sum(counts)
    return (flat, counts) if ok else None


_PARSER = threading.local()
PARSER_KEEP_BYTES = 4 * 2 ** 20
"""Each thread keeps one simdjson parser for documents up to this size (a 512-row pool of
384-dimensional vectors is about 2 MB; 4 MB, about 1,100 such rows): a new parser per case maps
its buffers afresh, and the page faults of that cost more than the parse itself. A kept parser
holds the memory its largest document needed (a few times that document: about 6 MB for the
512-row pool), so a larger case gets a parser of its own, freed with it."""


def _parser(size: int) -> simdjson.Parser:
    if size > PARSER_KEEP_BYTES:
        return simdjson.Parser()  # a rare huge case: its buffers are freed with it
    parser = getattr(_PARSER, "parser", None)
    if parser is None:
        parser = _PARSER.parser = simdjson.Parser()
    return parser


def _padded(values: list[Any], where: Callable[[int], str]) -> tuple[np.ndarray, np.ndarray]:
    vectors: list[np.ndarray | None] = [None] * len(values)
    texts = []
    for i, v in enumerate(values):
        if isinstance(v, str):
            texts.append(i)
        elif isinstance(v, list) and set(map(type, v)) <= {int, float}:
            try:
                vectors[i] = np.array(v, dtype=np.float64)
            except OverflowError:  # an integer too large for a float: named below
                vectors[i] = np.array(_embedding(v, where(i)))
        elif v is not None:
            vectors[i] = np.array(_embedding(v, where(i)))  # raises with the reason
    if texts:
        strings = [values[i] for i in texts]
        read = _json_texts(strings)
        rows = np.split(read[0], np.cumsum(read[1])[:-1]) if read is not None else _parse_texts(strings)
        for i, vec in zip(texts, rows):
            vectors[i] = vec if vec is not None else np.array(_embedding(values[i], where(i)))
    for i, vec in enumerate(vectors):
        if vec is not None and not np.isfinite(vec).all():
            _embedding(values[i], where(i))  # raises: names the element that is not finite
    dims = np.array([0 if v is None else len(v) for v in vectors], dtype=np.int32)
    out = np.zeros((len(values), max(int(dims.max(initial=0)), 1)))
    for i, vec in enumerate(vectors):
        if vec is not None and len(vec):
            out[i, : len(vec)] = vec
    return out, dims


def _parse_texts(texts: list[str]) -> Sequence[np.ndarray | None]:
    """`"[..]"` strings outside JSON's grammar (`.5`, `1.`, spaces) parsed in one pass; None for
    each string this reader cannot vouch for."""
    inner = [t.strip() for t in texts]
    if not all(t[:1] == "[" and t[-1:] == "]" for t in inner):
        return [None] * len(texts)
    inner = [t[1:-1] for t in inner]
    counts = [t.count(",") + 1 if t.strip() else 0 for t in inner]
    joined = ",".join(t for t, n in zip(inner, counts) if n)
    if not NUMBER_TEXT.fullmatch(joined) or EMPTY_FIELD.search(joined):
        return [None] * len(texts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # a short read is caught by the count below
        try:
            flat = np.fromstring(joined, dtype=np.float64, sep=",") if joined else np.zeros(0)
        except ValueError:  # "1 2", "1,,2", "--1": numpy 2 refuses unread text; the row reader names it
            return [None] * len(texts)
    if len(flat) != sum(counts):
        return [None] * len(texts)
    return np.split(flat, np.cumsum(counts)[:-1])


def _is_number(x: Any) -> TypeGuard[int | float]:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _names(value: Any, field: str, where: str) -> tuple[str, ...]:
    """A list of strings (tags, routes); null or absent is empty. A bare string is refused,
    not split into its characters."""
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise MemsenseError(f"{where}: {field} must be a list of strings such as [\"music\"] (or null), got {value!r:.60}")
    return tuple(value)


def _row(row: Any, where: str) -> tuple[str, float, Any, tuple[str, ...], tuple[str, ...]]:
    """(memory_id, rrf_score, score, tags, routes) of one row, each checked."""
    if not isinstance(row, dict) or "memory_id" not in row or "rrf_score" not in row:
        raise MemsenseError(f"{where}: needs memory_id and rrf_score")
    mid = row["memory_id"]
    if not (isinstance(mid, str) and mid.strip()) and not (_is_number(mid) and (isinstance(mid, int) or mid.is_integer())):
        raise MemsenseError(f"{where}: memory_id must be non-empty text, got {mid!r:.60}")
    rrf = row["rrf_score"]
    if not _is_number(rrf) or not _finite(rrf):
        raise MemsenseError(f"{where}: rrf_score must be a finite number, got {rrf!r:.60}")
    score = row.get("score")
    if _is_number(score) and not _finite(score):
        raise MemsenseError(f"{where}: score must be a finite number or null, got {score!r:.60}")
    return str(mid), float(rrf), score, _names(row.get("tags"), "tags", where), _names(row.get("routes"), "routes", where)


Columns = tuple[list[str], list[float], list[Any], list[tuple[str, ...]], list[tuple[str, ...]]]
"""A case's rows as columns: memory_id (as text), rrf_score, score, tags, routes."""


def case_rows(raw: list[Any], name: Any) -> Columns:
    """Every row checked: in bulk when all is well, else row by row to name the first problem."""
    return _bulk_rows(raw) or _rows_one_by_one(raw, name)


def _rows_one_by_one(raw: list[Any], name: Any) -> Columns:
    seen: set[str] = set()
    out: Columns = ([], [], [], [], [])
    for n, row in enumerate(raw):
        where = f"case {name!r} row {n}"
        mid, rrf, score, tags, routes = _row(row, where)
        if mid in seen:
            raise MemsenseError(f"{where}: memory_id {mid!r} appears twice in the case; a pool holds each memory once")
        seen.add(mid)
        out[0].append(mid)
        out[1].append(rrf)
        out[2].append(score)
        out[3].append(tags)
        out[4].append(routes)
    return out


def _bulk_rows(raw: list[Any]) -> Columns | None:
    """The columns when every check passes, by type sets and arrays; None to go row by row."""
    if not raw or set(map(type, raw)) != {dict}:
        return None
    mids = _column(raw, "memory_id")
    kinds = set(map(type, mids))
    if kinds == {str}:
        ids, texts = mids, mids
    elif kinds <= {str, int}:
        ids, texts = [m if type(m) is str else str(m) for m in mids], [m for m in mids if type(m) is str]
    else:
        return None
    if not all(map(str.strip, texts)) or len(set(ids)) != len(ids):
        return None
    rrf, scores = _column(raw, "rrf_score"), _column(raw, "score")
    score_kinds = set(map(type, scores))
    if any(issubclass(k, NUMBERS) and k not in (float, int, bool) for k in score_kinds):
        return None  # a subclass of int or float (numpy's float64): the row reader decides
    numeric = scores if score_kinds <= {float, int} else [s for s in scores if type(s) in NUMBERS]
    rrf_kinds = set(map(type, rrf))
    if not rrf_kinds <= {float, int} or not _all_finite(rrf) or not _all_finite(numeric):
        return None
    tags, routes = _name_columns(_column(raw, "tags")), _name_columns(_column(raw, "routes"))
    if tags is None or routes is None:
        return None
    return ids, rrf if rrf_kinds == {float} else list(map(float, rrf)), scores, tags, routes


def _column(rows: list[dict], field: str) -> list[Any]:
    """`row.get(field)` of every row (one C-level pass)."""
    return list(map(dict.get, rows, itertools.repeat(field)))


def _all_finite(numbers: list[float | int]) -> bool:
    """Whether every number is a finite double (an integer too large for one is not), by their
    exact sum (`math.fsum` reads each as a double); numbers whose sum overflows go to the row
    reader, which decides."""
    try:
        return math.isfinite(math.fsum(numbers))
    except (OverflowError, ValueError):  # an integer past the doubles, a partial sum past them, inf - inf
        return False


def _name_columns(values: list[Any]) -> list[tuple[str, ...]] | None:
    kinds = set(map(type, values))
    if not kinds <= {list, type(None)}:
        return None
    try:
        "".join(itertools.chain.from_iterable(filter(None, values)))  # refuses any element that is not text
    except TypeError:
        return None
    return list(map(tuple, values)) if kinds == {list} else [() if v is None else tuple(v) for v in values]


def final_scores(rrf: list[float], scores: list[Any], alpha: float) -> list[float]:
    """`final_score` of every row; one array pass when the memory scores are numbers or null."""
    kinds = set(map(type, scores))
    if not kinds <= {float, int, type(None)}:
        return [final_score(r, s, alpha) for r, s in zip(rrf, scores)]
    memory = np.array(scores if type(None) not in kinds else [DEFAULT_MEMORY_SCORE if s is None else s for s in scores],
                      dtype=np.float64)
    np.minimum(np.maximum(memory, ZERO, out=memory), ONE, out=memory)  # clamp01 of a finite number
    memory += ZERO  # no -0.0
    return round6(np.array(rrf, dtype=np.float64) + alpha * memory).tolist()


def score_order(final: list[float], ids: list[str]) -> list[int]:
    """Row indices by final score descending, ties by memory id: `sorted` by `(-final, id)`, with
    numpy's stable sort on the scores and Python's order of the ids only within runs of equal scores."""
    scores = np.array(final, dtype=np.float64)
    order = np.argsort(-scores, kind="stable")
    ranked = scores[order]
    tied = (ranked[1:] == ranked[:-1]).nonzero()[0]
    order = order.tolist()
    if len(tied):
        starts = tied[np.r_[True, np.diff(tied) > 1]].tolist()  # the first row of each run of ties
        for start in starts:
            end = start + 1
            while end < len(order) and ranked[end] == ranked[start]:
                end += 1
            order[start:end] = sorted(order[start:end], key=ids.__getitem__)
    return order


DEFAULTS = Config()
_CONFIGS: dict[tuple, tuple[Config | None, Config]] = {}
"""Configs of cases already seen, by (base, top_k, options) with each value's type: a replay of
thousands of cases of a few settings validates each setting once."""


def case_config(case: dict[str, Any], base: Config | None = None) -> Config:
    options = case.get("options") or {}
    top_k = case["top_k"] if "top_k" in case else (base or DEFAULTS).top_k
    key = None
    if isinstance(options, dict):
        key = (id(base), type(top_k), top_k, *((k, type(v), v) for k, v in sorted(options.items(), key=str)))
        try:
            hit = _CONFIGS.get(key)
        except TypeError:  # an unhashable value: checked below, never cached
            hit, key = None, None
        if hit is not None and hit[0] is base:
            return hit[1]
    cfg = _make_config(case, options, top_k, base)
    if key is not None:
        if len(_CONFIGS) > 256:
            _CONFIGS.clear()
        _CONFIGS[key] = (base, cfg)
    return cfg


def _make_config(case: dict[str, Any], options: Any, top_k: Any, base: Config | None) -> Config:
    if not isinstance(options, dict):
        raise MemsenseError(f"case {case.get('name')!r}: options must be an object")
    unknown = sorted(set(options) - set(OPTION_FIELDS))
    if unknown:
        raise MemsenseError(f"case {case.get('name')!r}: unknown option(s) {', '.join(unknown)}; "
                            f"known: {', '.join(OPTION_FIELDS)}")
    changes = {OPTION_FIELDS[k]: v for k, v in options.items()}
    return replace(base or DEFAULTS, top_k=top_k, **changes)


def replay_case(case: dict[str, Any], base: Config | None = None) -> dict[str, Any]:
    """Re-rank one case; returns `{name, results: [{memory_id, final_score, explain}]}`."""
    if not isinstance(case, dict) or not isinstance(case.get("rows"), list):
        raise MemsenseError("a case is an object with a 'rows' list (and optional name, top_k, options)")
    name = case.get("name", "")
    if not isinstance(name, (str, int)) or isinstance(name, bool):
        raise MemsenseError(f"case name must be text, got {name!r:.60}")
    try:
        cfg = case_config(case, base)
    except MemsenseError as exc:
        raise MemsenseError(f"case {name!r}: {exc}") from None
    raw = case["rows"]
    ids, rrf, scores, tags, routes = case_rows(raw, name)
    final = final_scores(rrf, scores, cfg.alpha)
    order = score_order(final, ids)
    unit, dims = case_vectors(_column(list(map(raw.__getitem__, order)), "embedding"),
                              lambda k: f"case {name!r} row {order[k]}")
    sel = mmr.select(np.array(list(map(final.__getitem__, order))), unit, dims,
                     mmr.tag_matrix(list(map(tags.__getitem__, order))),
                     top_k=cfg.top_k, mmr_lambda=cfg.mmr_lambda, duplicate_threshold=cfg.duplicate_threshold,
                     tag_weight=cfg.tag_weight, fallback_fill=cfg.fallback_fill)
    return {"name": name, "results": _results(sel, order, ids, final, raw, routes, cfg)}


def _results(sel: mmr.Selection, order: list[int], ids: list[str], final: list[float], raw: list[dict],
             routes: list[tuple[str, ...]], cfg: Config) -> list[dict[str, Any]]:
    """The picks as `{memory_id, final_score, rrf_score, routes, explain}` records (MMR's rows
    are positions in final-score `order`)."""
    def id_of(r: int | None) -> str | None:
        return None if r is None else ids[order[r]]

    alpha, mmr_lambda, threshold = cfg.alpha, cfg.mmr_lambda, cfg.duplicate_threshold
    out = []
    for step, rank in zip(sel.steps, sel.selected_rank):
        i = order[step.row]
        row, row_routes = raw[i], routes[i]
        rrf = row["rrf_score"]
        out.append({
            "memory_id": ids[i],
            "final_score": final[i],
            "rrf_score": rrf,
            "routes": list(row_routes),
            "explain": {
                "rrf_score": rrf,
                "memory_score": clamp01(row.get("score")),
                "alpha": alpha,
                "routes": list(row_routes),
                "diversity": {"lambda": mmr_lambda, "duplicate_threshold": threshold, "selected_rank": rank},
                "mmr": mmr.step_explain(step, id_of),
            },
        })
    return out


def replay(data: Any, base: Config | None = None) -> list[dict[str, Any]]:
    """A case object or a list of them."""
    cases = data if isinstance(data, list) else [data]
    return [replay_case(c, base) for c in cases]
