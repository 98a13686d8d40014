"""Question files: LoCoMo `qa`, the project format, evidence ids (SPEC §8)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.errors import MemsenseError
from core.ingest import (
    load_questions,
    parse_evidence,
)
from tests.fixtures import (
    jsonl,
    tiny_locomo,
    write,
)

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "core" / "demo"
LOCOMO = REPO.parent / "shared" / "datasets" / "locomo" / "locomo-dev.json"


def test_locomo_questions_keep_categories_1_to_4_with_evidence(tmp_path):
    questions = load_questions(write(tmp_path, json.dumps(tiny_locomo()), "l.json"))
    assert [q.question_id for q in questions] == ["t-1:q0", "t-1:q3"]
    q0, q3 = questions
    assert (q0.answer, q0.category, q0.gold_sessions, q0.gold_turns) == ("2022", 2, (1,), ("D1:1",))
    assert q3.gold_sessions == (1, 2, 10)
    assert q3.gold_turns == ("D2:1", "D1:2", "D10:3")


def test_parse_evidence_is_lenient():
    assert parse_evidence(["D3:7"]) == ((3,), ("D3:7",))
    assert parse_evidence(["D 4:2", "D:11:26", "D10:3:5"]) == ((4, 10, 11), ("D4:2", "D11:26", "D10:3"))
    assert parse_evidence(["D8:6; D9:17"]) == ((8, 9), ("D8:6", "D9:17"))
    assert parse_evidence(["", "x", None, 3, "D:", "D3"]) == ((), ())


def test_project_question_formats(tmp_path):
    items = [
        {"user": "u", "question": "A?", "answer": "a", "category": 1, "evidence": ["D1:1", "D2:3"]},
        {"user": "v", "question": "B?", "answer": 3, "category": "4", "evidence": ["D5:1"]},
        {"user": "u", "question": "C?", "answer": "c", "category": 4, "evidence": ["D1:2"]},
        {"user": "u", "question": "D?", "answer": "d", "category": 5, "evidence": ["D1:2"]},
    ]
    as_json = load_questions(write(tmp_path, json.dumps({"questions": items}, indent=2), "q.json"))
    as_lines = load_questions(write(tmp_path, jsonl(*items), "q.jsonl"))
    assert as_json == as_lines
    assert [(q.question_id, q.category, q.gold_sessions) for q in as_json] == [
        ("u:q0", 1, (1, 2)), ("v:q0", 4, (5,)), ("u:q1", 4, (1,))
    ]
    assert as_json[1].answer == "3"


@pytest.mark.parametrize("text, expected", [
    ('{"questions": [{"user": "u", "question": "A?", "answer": "a", "category": 1}]}', "question 1: missing key 'evidence'"),
    ('{"questions": [{"user": "u", "question": "A?", "answer": "a", "category": 1, "evidence": "D1:1"}]}', "'evidence' must be a list"),
    ('{"questions": [{"user": "u", "question": "A?", "answer": "a", "category": "one", "evidence": []}]}', "'category' must be a whole number"),
    ('{"questions": [{"user": "u", "question": "", "answer": "a", "category": 1, "evidence": ["D1:1"]}]}', "'question' must be non-empty text"),
    ('{"items": []}', "has no 'questions' list"),
    ('{"questions": [', "not valid JSON"),
    ("", "the file is empty"),
])
def test_bad_question_files_raise_a_helpful_error(tmp_path, text, expected):
    with pytest.raises(MemsenseError, match=expected):
        load_questions(write(tmp_path, text, "q.json"))
