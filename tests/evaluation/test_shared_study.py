"""A study shared by workers (`core.evaluation.shared_study`, issue 38) on SQLite and journal
storages, and the one-line failures of a study storage (`core.evaluation.study_storage`)."""
from __future__ import annotations

import socket
import sqlite3
import time

import optuna
import pytest

from core.errors import MemsenseError
from core.evaluation import study_storage
from core.evaluation.shared_study import tune_shared
from core.evaluation.study_storage import check_storage, open_storage, parse_storage
from core.evaluation.tune import _key
from tests.evaluation.test_parallel import case

SECRET = "s3cr3t-Pw"


def test_addresses_are_read_and_never_show_the_password(tmp_path):
    pg = parse_storage(f"postgresql://team:{SECRET}@db.example:5432/studies")
    assert (pg.kind, pg.url) == ("postgresql", f"postgresql+psycopg://team:{SECRET}@db.example:5432/studies")
    assert SECRET not in pg.shown and SECRET not in str(pg) and SECRET not in repr(pg) and "team" in pg.shown
    assert parse_storage("postgres://h/db").url == "postgresql+psycopg://h/db"
    lite = parse_storage(f"sqlite:///{tmp_path}/s.sqlite")
    assert (lite.kind, lite.path) == ("sqlite", tmp_path / "s.sqlite")
    journal = parse_storage(str(tmp_path / "study.journal"))
    assert (journal.kind, journal.path) == ("journal", tmp_path / "study.journal")
    for bad, words in ((f"mysql://u:{SECRET}@h/db", "mysql:// is not a study storage"), ("sqlite://", "names no file"),
                       ("  ", "is empty")):
        with pytest.raises(MemsenseError, match=words) as err:
            parse_storage(bad)
        assert SECRET not in str(err.value)


def _run(storage, trials, **kw):
    pools, questions = case(2, 4)
    train = [q for q in questions if q.user_id == "user0"]
    test = [q for q in questions if q.user_id == "user1"]
    return tune_shared(pools, train, test, trials=trials, storage=storage, study_name="s", sensitivity_points=0,
                       **kw)


def _complete(storage):
    study = optuna.load_study(study_name="s", storage=open_storage(storage, heartbeat=False))
    return {t.number: t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE}


@pytest.mark.parametrize("kind", [pytest.param("sqlite", marks=pytest.mark.slow), "journal"])  # SQLite: a commit a write
def test_workers_one_after_another_fill_one_study_and_choose_over_all_of_it(tmp_path, kind):
    storage = parse_storage(f"sqlite:///{tmp_path}/s.sqlite" if kind == "sqlite" else str(tmp_path / "s.journal"))
    first = _run(storage, 6)
    second = _run(storage, 11)  # joins: runs only what the study lacks
    done = _complete(storage)
    assert len(done) == 11 and len(first.trials) == 6
    assert sorted(t.number for t in second.trials) == sorted(done)
    assert second.start.stage == "start" and [t.stage for t in second.trials].count("start") == 1
    assert second.best == max(second.trials, key=_key)
    assert _run(storage, 11).trials == second.trials  # a full study: no trial run, the same report


def test_a_killed_workers_trial_is_failed_by_the_heartbeat_and_never_counted(tmp_path, monkeypatch):
    monkeypatch.setattr(study_storage, "HEARTBEAT_S", 1)
    monkeypatch.setattr(study_storage, "GRACE_S", 1)
    storage = parse_storage(f"sqlite:///{tmp_path}/s.sqlite")
    _run(storage, 3)
    backend = open_storage(storage)
    study = optuna.load_study(study_name="s", storage=backend)
    lost = study.ask()  # a worker's trial, then the worker is killed: one heartbeat, never told
    backend.record_heartbeat(lost._trial_id)  # type: ignore[attr-defined]
    time.sleep(2.2)
    result = _run(storage, 5)
    state = optuna.load_study(study_name="s", storage=open_storage(storage, heartbeat=False)).trials[lost.number].state
    assert state == optuna.trial.TrialState.FAIL
    assert lost.number not in {t.number for t in result.trials} and len(result.trials) == 5


def test_a_worker_of_another_metric_is_refused_in_one_line(tmp_path):
    storage = parse_storage(f"sqlite:///{tmp_path}/s.sqlite")
    _run(storage, 3)
    with pytest.raises(MemsenseError, match="made with another metric recall_all@4, not ndcg@4; join it") as err:
        _run(storage, 5, metric="ndcg@4")
    assert "\n" not in str(err.value)
    assert len(_complete(storage)) == 3  # nothing run, nothing lost


def test_a_database_of_a_newer_optuna_is_one_line_and_left_as_it_is(tmp_path):
    path = tmp_path / "s.sqlite"
    storage = parse_storage(f"sqlite:///{path}")
    _run(storage, 3)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE alembic_version SET version_num = 'v99.0.0'")
        db.execute("UPDATE version_info SET library_version = '99.0.0'")
    before = path.read_bytes()
    with pytest.raises(MemsenseError, match=r"set up by Optuna 99\.0\.0, which this memsense \(Optuna [0-9.]+\) "
                                            r"cannot read") as err:
        check_storage(storage)
    assert "\n" not in str(err.value)
    assert path.read_bytes() == before


def test_a_server_that_refuses_or_never_answers_is_one_line_without_the_password(monkeypatch):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    with pytest.raises(MemsenseError, match="the server cannot be reached") as err:
        check_storage(parse_storage(f"postgresql://team:{SECRET}@127.0.0.1:{closed}/studies"))
    assert SECRET not in str(err.value) and "postgresql://team:***@127.0.0.1" in str(err.value)

    monkeypatch.setattr(study_storage, "CONNECT_TIMEOUT_S", 2)  # libpq's least
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(1)  # accepts, never answers
    try:
        started = time.monotonic()
        with pytest.raises(MemsenseError, match="did not answer within") as err:
            check_storage(parse_storage(f"postgresql://team:{SECRET}@127.0.0.1:{silent.getsockname()[1]}/x"))
        assert time.monotonic() - started < 30 and SECRET not in str(err.value)
    finally:
        silent.close()
