"""Runs a team shares in PostgreSQL (issue 38, item 3, `core.evaluation.shared_runs`): two users
keep runs in one database and each sees the other's, named by who made it; a read-only role lists
and compares but cannot write; runs of different question files are never compared silently."""
from __future__ import annotations

import json

import pytest

from core.config import Config
from core.errors import MemsenseError
from core.evaluation.run_keeping import keep_run
from core.evaluation.shared_runs import SharedHistory, open_history
from tests.conftest import _memsense_db
from tests.fixtures import run_cli

pytestmark = pytest.mark.slow  # starts PostgreSQL


@pytest.fixture(scope="module")
def team_db():
    """A database `team` with the runs tables; alice and bob may write them, reader may only read."""
    import psycopg

    (LocalPostgres,) = _memsense_db("LocalPostgres")
    server = LocalPostgres()
    try:
        with psycopg.connect(server.dsn(), autocommit=True) as conn:
            conn.execute("CREATE DATABASE team")
            for role in ("alice", "bob", "reader"):
                conn.execute(f"CREATE ROLE {role} LOGIN")
        SharedHistory(server.dsn("team"), made_by="admin").db.close()  # the tables, made by their owner
        with psycopg.connect(server.dsn("team"), autocommit=True) as conn:
            for role in ("alice", "bob"):
                conn.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}")
                conn.execute(f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {role}")
            conn.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader")
        yield lambda role: f"postgresql://{role}@127.0.0.1:{server.port}/team"
    finally:
        server.stop()


def _questions(tmp_path, name: str, extra: str = "") -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"questions": [], "note": extra}))
    return str(path)


def _keep(url: str, dataset: str, who: str, value: float) -> int:
    results = {"memsense": {f"q{i}": {"recall_all@4": value if i % 2 else 1.0} for i in range(6)}}
    return keep_run("/stores/demo", "eval", dataset, {"memsense": Config()}, results,
                    {"memsense": {"recall_all@4": value}}, model="test-model",
                    into=SharedHistory(url, made_by=who))


def test_two_users_share_runs_a_reader_lists_and_compares_but_never_writes(team_db, tmp_path, capsys, monkeypatch):
    dataset = _questions(tmp_path, "questions.json")
    a = _keep(team_db("alice"), dataset, "Alice (search team)", 0.5)
    b = _keep(team_db("bob"), dataset, "bob", 0.0)
    for role in ("alice", "bob", "reader"):
        with open_history(None, team_db(role), create=False) as history:
            runs = {r.id: r for r in history.runs()}
        assert runs[a].made_by == "Alice (search team)" and runs[b].made_by == "bob"
        assert runs[a].dataset_sha256 == runs[b].dataset_sha256 and len(runs[a].dataset_sha256) == 64
    code, out, err = run_cli(capsys, "runs", "list", "--runs-db", team_db("reader"))
    assert code == 0 and "by Alice (search team)" in out and " by bob " in out, err
    code, out, err = run_cli(capsys, "runs", "compare", "--runs-db", team_db("reader"), str(a), str(b))
    assert code == 0 and "6 questions every run scored" in out, err
    code, out, err = run_cli(capsys, "runs", "compare", "--runs-db", team_db("reader"), str(a), str(b), "--json")
    assert [f["mean"] for f in json.loads(out)["sides"]] == [0.75, 0.5]

    code, out, err = run_cli(capsys, "runs", "rename", "--runs-db", team_db("bob"), str(a), "baseline")
    assert code == 0, err
    code, out, err = run_cli(capsys, "runs", "list", "--runs-db", team_db("alice"))
    assert "“baseline” by Alice (search team)" in out

    before = run_cli(capsys, "runs", "list", "--runs-db", team_db("reader"), "--json")[1]
    for argv in (("runs", "rename", "--runs-db", team_db("reader"), str(b), "mine"),
                 ("runs", "delete", "--runs-db", team_db("reader"), str(b))):
        code, out, err = run_cli(capsys, *argv)
        assert code == 1 and err.count("\n") == 1 and "may only read there" in err, err
    with pytest.raises(MemsenseError, match="may only read there"):
        _keep(team_db("reader"), dataset, "reader", 0.1)
    assert run_cli(capsys, "runs", "list", "--runs-db", team_db("reader"), "--json")[1] == before  # nothing written

    other = _questions(tmp_path, "other.json", "another question file")
    c = _keep(team_db("bob"), other, "bob", 0.5)
    code, out, err = run_cli(capsys, "runs", "compare", "--runs-db", team_db("alice"), str(a), str(c))
    assert code == 1 and "ranked different question files" in err


def test_the_os_user_or_memsense_user_names_a_run(team_db, tmp_path, monkeypatch):
    import getpass

    dataset = _questions(tmp_path, "q.json")
    monkeypatch.delenv("MEMSENSE_USER", raising=False)
    mine = _keep(team_db("alice"), dataset, None, 0.2)  # type: ignore[arg-type]
    monkeypatch.setenv("MEMSENSE_USER", "ci-nightly")
    nightly = _keep(team_db("alice"), dataset, None, 0.2)  # type: ignore[arg-type]
    with open_history(None, team_db("alice"), create=False) as history:
        assert (history.run(mine).made_by, history.run(nightly).made_by) == (getpass.getuser(), "ci-nightly")


def test_a_runs_db_that_is_no_postgresql_or_has_no_runs_is_one_line(team_db, tmp_path, capsys):
    code, out, err = run_cli(capsys, "runs", "list", "--runs-db", f"sqlite:///{tmp_path}/x.sqlite")
    assert code == 1 and "is not a PostgreSQL address" in err
    code, out, err = run_cli(capsys, "runs", "list", "--runs-db", team_db("alice").replace("/team", "/postgres"))
    assert code == 1 and "no shared runs in" in err and err.count("\n") == 1


def test_history_reads_the_shared_runs_as_runs_does(team_db, tmp_path, capsys):
    """`memsense history --runs-db`: the same runs `memsense runs --runs-db` lists, compared and exported."""
    dataset = _questions(tmp_path, "history.json")
    a = _keep(team_db("alice"), dataset, "alice", 0.5)
    b = _keep(team_db("bob"), dataset, "bob", 0.0)
    code, out, err = run_cli(capsys, "history", "--runs-db", team_db("reader"), "--json")
    assert code == 0, err
    listed = json.loads(out)
    assert listed["runs"] == json.loads(run_cli(capsys, "runs", "list", "--runs-db", team_db("reader"), "--json")[1])["runs"]
    assert {a, b} <= {r["id"] for r in listed["runs"]}
    code, out, err = run_cli(capsys, "history", "--runs-db", team_db("reader"), "--compare", str(a), str(b), "--json")
    assert code == 0, err
    diff = json.loads(out)
    assert (diff["questions"], diff["wins"], diff["losses"]) == (6, 0, 3)  # bob's 0.0 against alice's 0.5 on q1, q3, q5
    code, out, err = run_cli(capsys, "history", "--runs-db", team_db("reader"), "--export", str(a), "--out",
                             str(tmp_path / "a.toml"))
    assert code == 0 and f"run {a}" in out and (tmp_path / "a.toml").exists(), err
