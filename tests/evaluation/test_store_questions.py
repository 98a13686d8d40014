"""Question sets belong to stores: attached beside the store, newest first, refused when about other users."""
from __future__ import annotations

import json

import pytest

from core.errors import MemsenseError
from core.evaluation.store_questions import attach, attach_dataset, attached, attachments_path, check_belongs
from core.recall.engine import DEMO_DATASET, DEMO_QUESTIONS


def test_attach_keeps_the_newest_first_beside_the_store_and_forgets_missing_files(tmp_path):
    store = tmp_path / "stores" / "demo"
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for p in (a, b):
        p.write_text("[]", encoding="utf-8")
    assert attached(store) == []
    attach(store, a)
    attach(store, b)
    attach(store, a)
    assert attachments_path(store) == tmp_path / "stores" / "demo.questions.json"
    assert attached(store) == [a.resolve(), b.resolve()]
    b.unlink()
    assert attached(store) == [a.resolve()]
    attachments_path(store).write_text("{not json", encoding="utf-8")
    assert attached(store) == []  # a damaged list is only a lost memory of choices
    assert not (tmp_path / "stores" / "demo").exists()  # the store itself is never touched


def test_a_file_about_none_of_the_store_users_is_refused_in_one_line():
    demo_users = {"demo-ana", "demo-ben", "demo-cy"}
    assert check_belongs(DEMO_QUESTIONS, sorted(demo_users)) <= demo_users
    with pytest.raises(MemsenseError, match="about users this store does not hold") as err:
        check_belongs(DEMO_QUESTIONS, ["conv-26", "conv-30"])
    assert "\n" not in str(err.value)


def test_ingesting_a_dataset_with_questions_attaches_it(tmp_path):
    store = tmp_path / "locomo"
    assert attach_dataset(store, DEMO_QUESTIONS) > 0 and attached(store) == [DEMO_QUESTIONS.resolve()]
    plain = tmp_path / "plain.jsonl"
    plain.write_text(json.dumps({"user": "u", "session": 1, "role": "user", "text": "hi"}) + "\n", encoding="utf-8")
    other = tmp_path / "other"
    assert attach_dataset(other, plain) == 0 and attached(other) == []
    assert DEMO_DATASET.exists()
