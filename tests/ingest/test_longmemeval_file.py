"""A realistic LongMemEval file (tests/ingest/longmemeval_gen.py) end to end: loaded as one user
per question, chunked with its dates and odd text intact, and evaluated through `memsense ingest`
and `memsense eval` with each question's answer sessions as its gold sessions; abstention
questions are left out. Bad files give one clear line."""
from __future__ import annotations

import json

import pytest

from core.errors import MemsenseError
from core.evaluation.evaluate import category_name, judged_only
from core.ingest.chunking import build_chunks
from core.ingest.conversations import load_conversations
from core.ingest.longmemeval import QUESTION_TYPES
from core.ingest.questions import load_questions
from tests.fixtures import run_cli
from tests.ingest.longmemeval_gen import ODD_TEXT, SPECS, longmemeval_items, write_longmemeval


@pytest.fixture
def lme(tmp_path):
    return write_longmemeval(tmp_path / "longmemeval_s.json", seed=3)


def test_the_generated_file_is_shaped_like_the_published_ones(lme):
    items = json.loads(lme.read_text(encoding="utf-8"))
    assert {i["question_type"] for i in items} == set(QUESTION_TYPES)
    assert sum(i["question_id"].endswith("_abs") for i in items) == 2
    assert all(i["answer_session_ids"] for i in items)  # abstention questions still name sessions
    assert any([] in i["haystack_sessions"] for i in items)
    assert all(any(t["content"] == ODD_TEXT for s in i["haystack_sessions"] for t in s) for i in items)
    assert "😀" in lme.read_text(encoding="utf-8")  # written as UTF-8, not escaped
    assert longmemeval_items(3) == items and longmemeval_items(4) != items


def test_questions_map_to_the_answer_sessions_and_their_turns(lme):
    items = {i["question_id"]: i for i in json.loads(lme.read_text(encoding="utf-8"))}
    questions = load_questions(lme)
    assert [q.question_id for q in questions] == [s.question_id for s in SPECS]
    for q, spec in zip(questions, SPECS):
        item = items[q.question_id]
        assert q.user_id == q.question_id and category_name(q.category) == spec.question_type
        assert (q.text, q.answer) == (spec.question, spec.answer)
        if q.question_id.endswith("_abs"):  # no answer in the haystack: nothing to retrieve
            assert q.gold_sessions == () and q.gold_turns == ()
            continue
        positions = tuple(item["haystack_session_ids"].index(s) + 1 for s in item["answer_session_ids"])
        assert q.gold_sessions == positions and len(positions) == len(spec.facts)
        for turn_id, fact in zip(q.gold_turns, spec.facts):
            session, turn = (int(x) for x in turn_id[1:].split(":"))
            said = item["haystack_sessions"][session - 1][turn - 1]
            assert said["has_answer"] and said["role"] == spec.answer_side
            assert said["content"] == (fact.user if spec.answer_side == "user" else fact.assistant)
    assert [q.question_id for q in judged_only(questions)] == [s.question_id for s in SPECS[:6]]


def test_haystacks_chunk_with_dates_odd_text_and_the_empty_session_skipped(lme):
    items = json.loads(lme.read_text(encoding="utf-8"))
    conversations = load_conversations(lme)
    assert [c.user_id for c in conversations] == [i["question_id"] for i in items]
    chunks = build_chunks(conversations, mode="hybrid")
    for conv, item in zip(conversations, items):
        mine = [c for c in chunks if c.user_id == conv.user_id]
        sessions = {c.session_number for c in mine}
        filled = {n for n, turns in enumerate(item["haystack_sessions"], start=1) if turns}
        assert sessions == filled and 2 not in sessions  # session 2 is the empty one
        for s in conv.sessions:
            y, m, d = item["haystack_dates"][s.number - 1][:10].split("/")
            assert s.time.startswith(f"{y}-{m}-{d}T")
        text = "\n".join(c.user_text + "\n" + c.assistant_text for c in mine if c.kind == "session")
        assert "😀" in text and "שלום עולם" in text and "\u200b" in text
    gold = {q.question_id: q for q in load_questions(lme)}
    for spec in SPECS[:6]:  # each fact is in the gold sessions' chunks and nowhere else
        where = {c.session_number for c in chunks if c.user_id == spec.question_id and c.kind == "session"
                 and any(f.words in c.user_text + c.assistant_text for f in spec.facts)}
        assert where == set(gold[spec.question_id].gold_sessions)


@pytest.mark.slow
def test_ingest_and_eval_score_the_answer_sessions(capsys, lme, tmp_path, model_cache):
    store = tmp_path / "store"
    code, _, err = run_cli(capsys, "ingest", lme, "--store", store, "--cache", model_cache)
    assert code == 0, err
    code, out, err = run_cli(capsys, "eval", lme, "--store", store, "--cache", model_cache, "--preset", "bm25_only",
                             "--preset", "memsense", "--json", "--quiet")
    assert code == 0, err
    results = {r["preset"]: r for r in json.loads(out)}
    bm25 = results["bm25_only"]
    assert bm25["questions"] == 6  # the two abstention questions are left out
    assert {v["name"] for v in bm25["per_category"].values()} == set(QUESTION_TYPES)
    # every fact's words are only in its answer sessions, so BM25 over the question finds them
    assert bm25["recall_any@4"] == 1.0, bm25
    assert results["memsense"]["recall_any@4"] > 0


@pytest.mark.parametrize("edit, problem", [
    (lambda items: items[0].pop("haystack_dates"), "question 1 (", ),
    (lambda items: items[1]["haystack_sessions"][0].append({"role": "system", "content": "x"}), "turn"),
    (lambda items: items[2]["haystack_sessions"][3].append({"role": "user", "content": None}), "turn"),
    (lambda items: items[3].update(answer_session_ids=["answer_nowhere_9"]), "answer_nowhere_9"),
    (lambda items: items[4].update(question_id=items[5]["question_id"]), "appears twice"),
    (lambda items: items[0].update(haystack_sessions="not a list"), "same length"),
])
def test_bad_files_give_one_clear_line(tmp_path, edit, problem):
    items = longmemeval_items(1)
    edit(items)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    for load in (load_questions, load_conversations):
        with pytest.raises(MemsenseError) as exc:
            load(path)
        message = str(exc.value)
        assert problem in message and str(path) in message and "\n" not in message


def test_a_truncated_file_and_undecodable_bytes_say_so(capsys, tmp_path):
    path = write_longmemeval(tmp_path / "cut.json")
    path.write_bytes(path.read_bytes()[:5000])
    code, _, err = run_cli(capsys, "ingest", path, "--store", tmp_path / "store")
    error = err.split("\n")[-2]  # after the progress line
    assert code == 1 and error.startswith("memsense: error: ") and "cut.json" in error and "truncated" in error
    assert not (tmp_path / "store").exists()
    path.write_bytes(b'[{"question_id": "\xff\xfe"}]')
    with pytest.raises(MemsenseError) as exc:
        load_questions(path)
    assert "cut.json" in str(exc.value) and "\n" not in str(exc.value)
