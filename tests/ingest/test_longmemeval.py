"""LongMemEval files (SPEC §11): each question its own user, gold sessions from answer_session_ids."""
from __future__ import annotations

import json

import pytest

from core.errors import MemsenseError
from core.evaluation.evaluate import category_name, judged_only
from core.ingest.chunking import build_chunks
from core.ingest.conversations import load_conversations
from core.ingest.longmemeval import iso_date
from core.ingest.questions import load_questions


def item(qid: str, qtype: str, answer_sessions: list[str]) -> dict:
    return {
        "question_id": qid, "question_type": qtype, "question": "Which two cities did I visit in spring?",
        "answer": "Lisbon and Ghent", "question_date": "2024/06/01 (Sat) 10:00",
        "haystack_session_ids": ["s_a", "s_b", "s_c"],
        "haystack_dates": ["2024/03/02 (Sat) 09:15", "2024/04/10 (Wed) 18:40", "2024/05/21 (Tue) 07:05"],
        "haystack_sessions": [
            [{"role": "user", "content": "I just got back from Lisbon, the trams were great.", "has_answer": True},
             {"role": "assistant", "content": "Lisbon's trams are famous. Which line did you ride?"}],
            [{"role": "user", "content": "Can you suggest a bread recipe?"},
             {"role": "assistant", "content": "Try a simple no-knead loaf."}],
            [{"role": "user", "content": "Ghent was lovely last weekend.", "has_answer": True},
             {"role": "assistant", "content": "The canals there are beautiful."}],
        ],
        "answer_session_ids": answer_sessions,
    }


@pytest.fixture
def lme_file(tmp_path):
    path = tmp_path / "longmemeval_s.json"
    path.write_text(json.dumps([item("q1", "multi-session", ["s_a", "s_c"]),
                                item("q2_abs", "temporal-reasoning", [])]))
    return path


def test_questions_have_gold_sessions_turns_and_type(lme_file):
    q1, q2 = load_questions(lme_file)
    assert (q1.user_id, q1.gold_sessions, q1.gold_turns) == ("q1", (1, 3), ("D1:1", "D3:1"))
    assert category_name(q1.category) == "multi-session" and q1.answer == "Lisbon and Ghent"
    assert q2.gold_sessions == () and judged_only([q1, q2]) == [q1]


def test_each_question_is_its_own_users_conversation(lme_file):
    convs = load_conversations(lme_file)
    assert [c.user_id for c in convs] == ["q1", "q2_abs"]
    s1 = convs[0].sessions[0]
    assert s1.time == "2024-03-02T09:15:00" and [m.dia_id for m in s1.messages] == ["D1:1", "D1:2"]
    chunks = build_chunks(convs[:1])
    sessions = [c for c in chunks if c.kind == "session"]
    assert [c.session_number for c in sessions] == [1, 2, 3]
    assert "Lisbon" in sessions[0].user_text and "trams" in sessions[0].assistant_text


def test_bad_items_name_the_problem(tmp_path):
    bad = item("q9", "multi-session", ["s_a"])
    bad["question_type"] = "guessing"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([bad]))
    with pytest.raises(MemsenseError, match="question q9: unknown question_type 'guessing'"):
        load_questions(path)
    bad = item("q8", "multi-session", ["s_a"])
    bad["haystack_dates"] = bad["haystack_dates"][:2]
    path.write_text(json.dumps([bad]))
    with pytest.raises(MemsenseError, match="same length"):
        load_conversations(path)


@pytest.mark.parametrize("text,iso", [("2023/05/20 (Sat) 02:21", "2023-05-20T02:21:00"),
                                      ("2023/05/20", "2023-05-20T00:00:00"), ("someday", ""),
                                      ("2023/13/01 (Mon) 10:00", "")])
def test_iso_date(text, iso):
    assert iso_date(text) == iso
