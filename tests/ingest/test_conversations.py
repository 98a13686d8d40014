"""Conversation files (LoCoMo JSON, JSON Lines), bad input, the demo and LoCoMo dev data."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.errors import MemsenseError
from core.ingest import (
    MAX_SESSION_CHARS,
    Message,
    build_chunks,
    load_conversations,
    load_questions,
)
from core.ingest.locomo import locomo_samples
from tests.fixtures import (
    DATE,
    HEADER,
    jsonl,
    kinds,
    row,
    tiny_locomo,
    write,
)

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "core" / "demo"
LOCOMO = REPO.parent / "shared" / "datasets" / "locomo" / "locomo-dev.json"


# ---------------------------------------------------------------- JSON Lines


def test_jsonl_groups_users_sorts_sessions_and_numbers_messages(tmp_path):
    path = write(tmp_path, jsonl(
        row("Ann", "late", session=2, time="9 May, 2023"),
        row("Ann", "hello", img_url="http://a/1.jpg", caption="a cat"),
        row("Bob", "hi", id="X7"),
        row("Cy", "yo", user="v", img_url=["http://a/2.jpg", "http://a/3.jpg"]),
    ) + "\n")
    u, v = load_conversations(path)
    assert (u.user_id, u.name, u.speakers, u.second_speaker) == ("u", "u", ("Ann", "Bob"), "Bob")
    assert [s.number for s in u.sessions] == [1, 2]
    first = u.sessions[0]
    assert (first.date_time, first.time) == ("2024-03-14T18:20:00", "2024-03-14T18:20:00")
    assert first.messages == (
        Message("Ann", "hello", "D1:1", ("http://a/1.jpg",), "a cat"),
        Message("Bob", "hi", "X7"),
    )
    assert u.sessions[1].time == "2023-05-09T00:00:00"
    assert v.sessions[0].messages[0].img_urls == ("http://a/2.jpg", "http://a/3.jpg")
    assert v.second_speaker == ""


def test_jsonl_second_speaker_is_the_assistant_side(tmp_path):
    path = write(tmp_path, jsonl(row("Ann", "a"), row("Bob", "b"), row("Ann", "c")))
    [session_chunk] = build_chunks(load_conversations(path), mode="session", enrich=False)
    assert session_chunk.assistant_text == "Bob: b"
    assert session_chunk.user_text.startswith("[group chat conversation: 2024-03-14T18:20:00]")


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("text, expected", [
    ("", "the file is empty"),
    ("  \n\n", "the file is empty"),
    ('[{"sample_id": "c1", "conversation": {"speaker_a": "A"', r"not valid JSON at line 1 column \d+ .*truncated file\?"),
    (jsonl(row()) + '{"user": "u", "session": 1, "ti', r"not valid JSON at line 2 column \d+"),
    (jsonl(row(), {"user": "u", "session": 1, "time": "", "text": "x"}), "line 2: missing key 'speaker'"),
    (jsonl(row(text=42)), "line 1: 'text' must be text, got a number"),
    (jsonl(row(speaker="")), "line 1: 'speaker' must be non-empty text"),
    (jsonl(row(session="two")), "line 1: 'session' must be a whole number >= 1"),
    (jsonl(row(session=0)), "'session' must be a whole number >= 1"),
    (jsonl(row(), row(time="other")), "line 2: session 1 has time 'other' here but '2024-03-14T18:20:00' on line 1"),
    (jsonl(row(img_url=3)), "'img_url' must be a URL or a list of URLs"),
    (jsonl(row(caption=["x"])), "'caption' must be text"),
    (jsonl(row(id=5)), "'id' must be non-empty text"),
    ("[1, 2]\n", "not LoCoMo samples"),
    ("[1, 2]\n[3]\n", "not valid JSON at line 2"),
    ('{\n  "user": "u"\n}\n', "is one JSON object, not JSON Lines"),
    ('{\n  "questions": []\n}\n', "is a question file, not a conversation file"),
    ('{"questions": []}', "is a question file, not a conversation file"),
    ('"just text"\n', "line 1: expected a JSON object"),
    ('[{"conversation": {}}]', "sample 1: missing key 'sample_id'"),
    ('[{"sample_id": "c", "conversation": {"speaker_a": "A"}}]', "sample c: missing key 'speaker_b'"),
    ('[{"sample_id": "c", "conversation": {"speaker_a": "A", "speaker_b": "B"}}]', "sample c: has no session_N lists"),
    ('[{"sample_id": "c", "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1": []}}]',
     "session_1: missing or non-text 'session_1_date_time'"),
    ('[{"sample_id": "c", "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1_date_time": "x",'
     ' "session_1": [{"speaker": "A"}]}}]', "sample c, session_1, message 1: missing key 'text'"),
])
def test_bad_conversation_files_raise_a_helpful_error(tmp_path, text, expected):
    path = write(tmp_path, text)
    with pytest.raises(MemsenseError, match=expected) as info:
        load_conversations(path)
    assert str(path) in str(info.value)


def test_missing_folder_and_non_utf8_files_are_user_errors(tmp_path):
    with pytest.raises(MemsenseError, match="does not exist"):
        load_conversations(tmp_path / "nope.jsonl")
    with pytest.raises(MemsenseError, match="is a folder"):
        load_conversations(tmp_path)
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(b'{"user": "caf\xe9"}\n')
    with pytest.raises(MemsenseError, match="not UTF-8"):
        load_conversations(bad)


def test_duplicate_locomo_users_are_rejected(tmp_path):
    sample = {"sample_id": "c", "conversation": {"speaker_a": "A", "speaker_b": "B",
                                                 "session_1_date_time": DATE, "session_1": []}}
    with pytest.raises(MemsenseError, match="user 'c' appears twice"):
        load_conversations(write(tmp_path, json.dumps([sample, sample]), "x.json"))


def test_every_truncation_of_a_valid_file_loads_or_raises_memsense_error(tmp_path):
    text = (DEMO / "demo-conversations.jsonl").read_text(encoding="utf-8")[:6000]
    for cut in range(0, len(text), 97):
        path = write(tmp_path, text[:cut])
        try:
            load_conversations(path)
        except MemsenseError:
            pass


# ---------------------------------------------------------------- LoCoMo-shaped input (hand-made)


def test_locomo_samples_become_conversations(tmp_path):
    [c] = load_conversations(write(tmp_path, json.dumps(tiny_locomo()), "l.json"))
    assert (c.user_id, c.speakers, c.second_speaker) == ("t-1", ("Ann", "Bob"), "Bob")
    assert [(s.number, s.date_time, s.time) for s in c.sessions] == [
        (1, DATE, "2023-05-08T13:56:00"), (2, "7:00 pm on 9 May, 2023", "2023-05-09T19:00:00")
    ]
    assert c.sessions[0].messages[0] == Message("Ann", "hi", "D1:1", ("http://a/1.jpg",), "a photo of a dog")
    assert c.sessions[0].observation == (("Ann", "Ann has a dog."),)
    assert c.sessions[0].event_summary == (("Ann", "Ann adopts a dog."),)
    assert c.sessions[1].observation == ()
    assert len(c.qa) == 5
    [session_chunk] = build_chunks([c], mode="session", enrich=False)[:1]
    assert session_chunk.user_text == (
        f"{HEADER}\n\nAnn: hi\nhttp://a/1.jpg: a photo of a dog\n\nBob: hey\n(a photo)"
    )


@pytest.mark.parametrize("source", ["tiny LoCoMo", "demo"])
def test_conversations_written_as_locomo_read_back_the_same(tmp_path, source):
    path = (write(tmp_path, json.dumps(tiny_locomo()), "in.json") if source == "tiny LoCoMo"
            else DEMO / "demo-conversations.jsonl")
    before = load_conversations(path)
    after = load_conversations(write(tmp_path, json.dumps(locomo_samples(before)), "out.json"))
    assert [(c.user_id, c.speakers, c.sessions) for c in after] == [(c.user_id, c.speakers, c.sessions) for c in before]
    assert any(s.observation for c in before for s in c.sessions) == (source == "tiny LoCoMo")
    assert [c.content for c in build_chunks(after, mode="hybrid")] == [c.content for c in build_chunks(before, mode="hybrid")]


# ---------------------------------------------------------------- demo data


def test_demo_data_loads_and_is_shaped_as_promised():
    assert (DEMO / "demo-conversations.jsonl").stat().st_size + (DEMO / "demo-questions.json").stat().st_size < 150_000
    conversations = load_conversations(DEMO / "demo-conversations.jsonl")
    assert len(conversations) == 3
    for c in conversations:
        assert c.user_id == f"demo-{c.speakers[0].lower()}"  # the user speaks first
        assert 5 <= len(c.sessions) <= 7
        assert all(8 <= len(s.messages) <= 20 for s in c.sessions)
        assert all(s.time for s in c.sessions)
        assert [s.time for s in c.sessions] == sorted(s.time for s in c.sessions)
    chunks = build_chunks(conversations)
    assert any(c.kind == "session" and c.order > 0 for c in chunks)  # a session over 4,000 chars


def test_demo_questions_point_at_existing_messages():
    conversations = {c.user_id: c for c in load_conversations(DEMO / "demo-conversations.jsonl")}
    questions = load_questions(DEMO / "demo-questions.json")
    for user, c in conversations.items():
        mine = [q for q in questions if q.user_id == user]
        assert 8 <= len(mine) <= 12
        assert sum(len(q.gold_sessions) > 1 for q in mine) >= 2  # "how many / list all" questions
        ids = {(s.number, m.dia_id) for s in c.sessions for m in s.messages}
        for q in mine:
            assert {(int(t[1:].split(":")[0]), t) for t in q.gold_turns} <= ids, q.question_id


# ---------------------------------------------------------------- LoCoMo dev (../shared)

needs_locomo = pytest.mark.skipif(not LOCOMO.exists(), reason=f"LoCoMo dev file not found at {LOCOMO}")


@pytest.mark.shared
@needs_locomo
def test_locomo_dev_gives_161_session_and_1414_turn_chunks():
    chunks = build_chunks(load_conversations(LOCOMO), enrich=False)
    assert len(kinds(chunks, "session")) == 161
    assert len(kinds(chunks, "turn")) == 1414
    assert [c.memory_id for c in chunks] == sorted(c.memory_id for c in chunks)
    assert len({c.memory_id for c in chunks}) == len(chunks)
    for c in kinds(chunks, "session"):
        assert len(c.user_text) <= MAX_SESSION_CHARS or "\n\n" not in c.user_text


@pytest.mark.shared
@needs_locomo
def test_locomo_dev_questions_match_a_naive_filter():
    raw = json.loads(LOCOMO.read_text(encoding="utf-8"))
    expected = [
        f"{s['sample_id']}:q{i}" for s in raw for i, q in enumerate(s["qa"])
        if q["category"] in (1, 2, 3, 4) and q.get("evidence")
    ]
    questions = load_questions(LOCOMO)
    assert [q.question_id for q in questions] == expected
    assert all(q.gold_sessions and isinstance(q.answer, str) for q in questions)
