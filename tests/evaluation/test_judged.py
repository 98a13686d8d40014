"""Judged question sets, TREC qrels in and out, runs, and clear messages for bad files."""
from __future__ import annotations

import json

import pytest

from core.errors import MemsenseError
from core.evaluation.judged import (JudgedSet, apply_qrels, load_judged, load_question_set, parse_docid, qrels_lines,
                         read_qrels, run_lines, session_docid, session_qrels, write_qrels)
from core.records import Question

from tests.fixtures import shared_file

Q1 = Question("conv-1:q0", "conv-1", "When did Ana get bees?", "May 2023", 2, (3,), ("D3:7",))
Q2 = Question("conv-1:q1", "conv-1", "What does Ana keep?", "bees", 1, (3, 5), ("D3:7", "D5:1"))
Q3 = Question("conv-2:q0", "conv-2", "Where does Ben live?", "Oslo", 4, (1,), ("D1:2",))


def test_docids_and_session_grades():
    assert session_docid("conv-1", 3) == "conv-1:S003"
    assert parse_docid("conv-1:S003") == ("conv-1", 3, "session")
    assert parse_docid("conv-1:S003:T007") == ("conv-1", 3, "memory")
    assert parse_docid("nonsense") is None
    q = Question("u:q0", "u", "?", "", 1, (3, 5), relevance={"u:S003:P00": 0, "u:S003:T001": 2, "u:S008:T000": 3,
                                                             "u:S005": 2})
    # gold sessions grade 1; a judged memory's best grade sets its session; a session grade wins
    assert session_qrels(q) == {3: 2, 5: 2, 8: 3}


def test_judged_set_marks_saves_and_reloads(tmp_path):
    js = JudgedSet([Q1, Q2, Q3])
    js.set_grade("conv-1:q0", "conv-1:S003:P00", 3)
    js.set_grade("conv-1:q0", "conv-1:S004:T002", 0)
    made = js.add_question("conv-2", "Does Ben like skiing?")
    js.set_grade(made.question_id, "conv-2:S002", 2)
    path = js.save(tmp_path / "judged.json")
    again = JudgedSet.open(path)
    assert again.grade("conv-1:q0", "conv-1:S003:P00") == 3
    assert again.get(made.question_id).text == "Does Ben like skiing?"
    assert made.question_id == "conv-2:m1"
    assert load_question_set(path) == again.questions
    assert again.find("conv-2", " Does Ben like skiing? ") == again.get(made.question_id)
    assert again.find("conv-1", "Does Ben like skiing?") is None
    again.set_grade("conv-1:q0", "conv-1:S003:P00", None)
    assert again.grade("conv-1:q0", "conv-1:S003:P00") is None


def test_marking_rejects_bad_grades_and_other_users_documents():
    js = JudgedSet([Q1])
    with pytest.raises(MemsenseError, match="outside 0-3"):
        js.set_grade("conv-1:q0", "conv-1:S003:P00", 4)
    with pytest.raises(MemsenseError, match="belongs to user 'conv-2'"):
        js.set_grade("conv-1:q0", "conv-2:S003:P00", 1)
    with pytest.raises(MemsenseError, match="no question"):
        js.set_grade("nope", "conv-1:S003:P00", 1)


def test_qrels_round_trip(tmp_path):
    q = Question("conv-1:q0", "conv-1", "?", "", 2, (3,), relevance={"conv-1:S003:T001": 2, "conv-1:S004:P00": 0})
    assert qrels_lines([q, Q2]) == ["conv-1:q0 0 conv-1:S003 2", "conv-1:q0 0 conv-1:S004 0",
                                    "conv-1:q1 0 conv-1:S003 1", "conv-1:q1 0 conv-1:S005 1"]
    assert qrels_lines([q], "memory") == ["conv-1:q0 0 conv-1:S003:T001 2", "conv-1:q0 0 conv-1:S004:P00 0"]
    path = tmp_path / "q.qrels"
    assert write_qrels([Q1, Q2, Q3], path) == 4
    qrels = read_qrels(path, [Q1, Q2, Q3])
    assert qrels == {"conv-1:q0": {"conv-1:S003": 1}, "conv-1:q1": {"conv-1:S003": 1, "conv-1:S005": 1},
                     "conv-2:q0": {"conv-2:S001": 1}}
    fresh = [Question(x.question_id, x.user_id, x.text, x.answer, x.category, ()) for x in (Q1, Q2, Q3)]
    assert [x.gold_sessions for x in apply_qrels(fresh, qrels)] == [(3,), (3, 5), (1,)]


@pytest.mark.parametrize("line, message", [
    ("conv-1:q0 0 conv-1:S003", "line 2: expected 4 columns, found 3"),
    ("conv-1:q0 0 conv-1:S003 1 extra", "expected 4 columns, found 5"),
    ("conv-9:q0 0 conv-9:S003 1", "line 2: unknown question id 'conv-9:q0'"),
    ("conv-1:q0 0 conv-1:S003 7", "line 2: grade 7 is outside 0-3"),
    ("conv-1:q0 0 conv-1:S003 -1", "grade -1 is outside 0-3"),
    ("conv-1:q0 0 conv-1:S003 high", "outside 0-3"),
    ("conv-1:q0 0 D3:7 1", "is not a session id"),
    ("conv-1:q0 0 conv-2:S001 1", "belongs to user 'conv-2'"),
    ("conv-1:q0 0 conv-1:S001 1", "line 2: conv-1:q0 conv-1:S001 is judged twice (first on line 1)"),
])
def test_bad_qrels_name_file_line_and_fix(tmp_path, line, message):
    path = tmp_path / "bad.qrels"
    path.write_text("conv-1:q0 0 conv-1:S001 1\n" + line + "\n")
    with pytest.raises(MemsenseError) as err:
        read_qrels(path, [Q1, Q2, Q3])
    assert str(path) in str(err.value) and message in str(err.value)


def test_qrels_unknown_documents_against_the_store(tmp_path):
    path = tmp_path / "q.qrels"
    path.write_text("# comment\n\nconv-1:q0 0 conv-1:S099:P00 1\n")
    with pytest.raises(MemsenseError, match="line 3: unknown document 'conv-1:S099:P00'"):
        read_qrels(path, [Q1], known={"conv-1": {"conv-1:S003", "conv-1:S003:P00"}})


def test_bad_judged_files(tmp_path):
    path = tmp_path / "j.json"
    good = {"format": "memsense-judged-questions", "version": 1, "questions": [
        {"id": "u:q0", "user": "u", "question": "why?", "category": 1, "gold_sessions": [2], "relevance": {}}]}
    cases = [
        ({**good, "questions": good["questions"] * 2}, "id 'u:q0' appears twice"),
        ({**good, "questions": [{**good["questions"][0], "relevance": {"u:S002:P00": 5}}]}, "grade 5 is outside 0-3"),
        ({**good, "questions": [{**good["questions"][0], "relevance": {"x": 1}}]}, "is not a session id"),
        ({**good, "questions": [{**good["questions"][0], "gold_sessions": ["2"]}]}, "gold_sessions"),
        ({**good, "questions": [{"user": "u", "question": "?"}]}, "'id' must be non-empty"),
        ({**good, "version": 9}, "version 9 is not supported"),
    ]
    for data, message in cases:
        path.write_text(json.dumps(data))
        with pytest.raises(MemsenseError, match=message):
            load_judged(path)
    path.write_text('{"format": "memsense-judged-questions", "questions": [')
    with pytest.raises(MemsenseError, match="line 1: not valid JSON"):
        load_judged(path)


def test_run_lines():
    lines = run_lines({"conv-1:q0": [("conv-1:S003", 0.5), ("conv-1:S003", 0.4), ("conv-1:S001", 0.3)]}, "my preset")
    assert lines == ["conv-1:q0 Q0 conv-1:S003 1 0.500000 my_preset", "conv-1:q0 Q0 conv-1:S001 2 0.300000 my_preset"]
    # MMR order need not fall in final score: the written scores still fall with rank
    lines = run_lines({"q": [("a", 0.4), ("b", 0.45), ("c", 0.1)]}, "t")
    assert [float(x.split()[4]) for x in lines] == [0.4, 0.399999, 0.1]


def test_locomo_questions_export_as_qrels(tmp_path):
    path = shared_file("datasets", "locomo", "locomo-dev.json")
    questions = load_question_set(path)
    out = tmp_path / "locomo.qrels"
    n = write_qrels(questions, out)
    assert n == sum(len(q.gold_sessions) for q in questions)
    back = apply_qrels(questions, read_qrels(out, questions))
    assert [q.gold_sessions for q in back] == [q.gold_sessions for q in questions]
