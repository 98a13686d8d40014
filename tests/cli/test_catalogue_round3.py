"""Issue 39, round 3 of the bad-input catalogue: Ctrl+C during eval's and impact's recall, question
files with users or evidence not in the store and duplicated ids, tuning studies resumed with
another knob set or holding text where a number goes, and hostile probes of the newer commands.

The cases reuse the catalogue's runner and checks (`tests/cli/test_bad_input_catalogue.py`): one
`memsense: error:` line, the exit code, no traceback, the store unchanged, no secret printed,
nothing written outside the work folder.
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
from typing import Callable

import pytest

from tests.cli.conftest import TALLY, digest
from tests.cli import test_bad_input_catalogue as catalogue
from tests.cli.test_bad_input_catalogue import DEMO_QUESTIONS, PROGRESS, C, Case, Env, run_cli

catalogue_env, reference, case_env = catalogue.catalogue_env, catalogue.reference, catalogue.case_env  # its fixtures

S = ("--store", "{store}", "--cache", "{cache}")


def _questions(env: Env, name: str, questions: list[dict]) -> str:
    path = env.work / name
    path.write_text(json.dumps({"questions": questions}), encoding="utf-8")
    return str(path)


def _demo_questions() -> list[dict]:
    return json.loads(DEMO_QUESTIONS.read_text(encoding="utf-8"))["questions"]


def _lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.strip() and not PROGRESS.match(line)]


# ---------------------------------------------------------------- class 2: Ctrl+C during the recall stage

def _ctrl_c_at(mp, module, stage: str, at: int, times: int = 1) -> None:
    """Ctrl+C (SIGINT, `times` over) arrives when the progress of `stage` reaches `at`."""
    def progress(args):
        def show(done: int, total: int, name: str) -> None:
            if done == at and name.startswith(stage):
                for _ in range(times):
                    os.kill(os.getpid(), signal.SIGINT)
        return show

    mp.setattr(module, "progress", progress)


def test_ctrl_c_during_evals_recall_prints_the_part_done_labelled_as_a_part(case_env, reference, monkeypatch):
    from core.cli import workspace as evaluation  # eval's recall: `core.cli.workspace.recall_until_ctrl_c`

    TALLY["cases"] += 1
    total = len(_demo_questions())
    argv = ["eval", str(DEMO_QUESTIONS), "--store", str(case_env.store), "--cache", str(case_env.cache),
            "--preset", "memsense"]
    history = case_env.store.parent / f"{case_env.store.name}.history.sqlite"
    before = history.read_bytes() if history.exists() else None
    with monkeypatch.context() as mp:
        _ctrl_c_at(mp, evaluation, "recall", 5)
        code, out, err, tb = run_cli(argv)
        _ctrl_c_at(mp, evaluation, "recall", 5)
        jcode, jout, jerr, jtb = run_cli([*argv, "--json"])
    assert (tb, jtb) == (None, None), tb or jtb
    assert code == 0, err
    lines = _lines(err)
    assert len(lines) == 1 and lines[0].startswith(f"memsense: warning: stopped by Ctrl+C after 6 of {total} "), err
    assert "not kept in the history" in lines[0]
    assert out.splitlines()[0] == f"stopped by Ctrl+C after 6 of {total} questions: every figure below is over those 6 only"
    assert out.splitlines()[1].startswith("6 questions")
    assert jcode == 0 and json.loads(jout)[0]["questions"] == 6 and json.loads(jout)[0]["questions_total"] == total
    assert (history.read_bytes() if history.exists() else None) == before  # a part is never kept as a run
    assert digest(case_env.store) == reference[1]


def test_a_second_ctrl_c_stops_at_once_with_one_line_and_exit_130(case_env, monkeypatch):
    from core.cli import workspace as evaluation

    TALLY["cases"] += 1
    with monkeypatch.context() as mp:
        _ctrl_c_at(mp, evaluation, "recall", 0, times=2)
        code, out, err, tb = run_cli(["eval", str(DEMO_QUESTIONS), "--store", str(case_env.store), "--cache",
                                      str(case_env.cache), "--preset", "memsense"])
    assert tb is None and code == 130 and out == "", (code, err)
    assert _lines(err) == ["memsense: interrupted"]


@pytest.mark.parametrize("stage,at,code", [("recall", 3, 0), ("embed", 70, 130)])  # 70: the embedding done
def test_ctrl_c_during_impact_keeps_the_queries_done(stage, at, code, case_env, monkeypatch, tmp_path):
    from core.cli import failures

    TALLY["cases"] += 1
    queries = tmp_path / "queries.tsv"
    queries.write_text("".join(f"demo-ana\t{q['question']} {stage} #{n}\n" for n, q in enumerate(_demo_questions() * 2)))
    total = 2 * len(_demo_questions())
    with monkeypatch.context() as mp:
        _ctrl_c_at(mp, failures, stage, at)
        got, out, err, tb = run_cli(["impact", str(queries), "--store", str(case_env.store), "--cache",
                                     str(case_env.cache), "--a", "memsense", "--b", "bm25_only"])
    assert tb is None and got == code, err
    if code == 130:
        assert _lines(err) == ["memsense: interrupted"] and out == ""
        return
    assert _lines(err) == [f"memsense: warning: stopped by Ctrl+C after 4 of {total} queries: every figure below is "
                           "over those 4 only; this run was not kept in the history"]
    assert out.splitlines()[0].startswith("stopped by Ctrl+C after 4 of") and ": 4 queries, k = " in out.splitlines()[1]


def test_impact_shows_progress_while_it_embeds_the_queries(case_env, monkeypatch, tmp_path):
    """A large query file used to sit at "recall 0/N" while every query was embedded in one batch."""
    from core.cli import failures

    seen: list[tuple[int, int, str]] = []
    monkeypatch.setattr(failures, "progress", lambda args: lambda d, t, s: seen.append((d, t, s)))
    queries = tmp_path / "queries.tsv"
    queries.write_text("".join(f"demo-ana\tfresh words never embedded {n}\n" for n in range(40)))
    code, out, err, tb = run_cli(["impact", str(queries), "--store", str(case_env.store), "--cache",
                                  str(case_env.cache), "--a", "memsense", "--b", "bm25_only"])
    assert (code, tb) == (0, None), err
    embedding = [(d, t) for d, t, s in seen if s == "embed queries"]
    assert embedding and embedding[-1] == (40, 40)
    assert seen.index(next(x for x in seen if x[2] == "embed queries")) < seen.index(next(x for x in seen
                                                                                          if x[2] != "embed queries"))


# ---------------------------------------------------------------- class 3: a stored study of another shape

TUNE = ("tune", str(DEMO_QUESTIONS), "--train", "demo-ana", "--trials", "{trials}", "--jobs", "1",
        "--sensitivity-points", "0", "--study", "s1", "--quiet")
STUDY_HARM = [
    ("another-knob-set", "UPDATE study_user_attributes SET value_json = '\"alpha,mmr_lambda,gamma\"' WHERE key = 'knobs'",
     "was run with different knobs (only in the study: gamma; only in this run: "),
    ("no-knob-set", "DELETE FROM study_user_attributes WHERE key = 'knobs'", "was run with different knobs (the study names none)"),
    ("train-text", "UPDATE trial_user_attributes SET value_json = '\"abc\"' WHERE key = 'train' AND trial_id = 2",
     "holds 'abc' as trial 1's train, where a finite number goes"),
    ("train-nan", "UPDATE trial_user_attributes SET value_json = 'NaN' WHERE key = 'train' AND trial_id = 2",
     "holds 'nan' as trial 1's train"),
    ("tiebreak-null", "UPDATE trial_user_attributes SET value_json = 'null' WHERE key = 'tiebreak' AND trial_id = 2",
     "trial 1's tiebreak, where a finite number goes"),
    ("value-text", "UPDATE trial_values SET value = 'abc' WHERE trial_id = 2", "holds 'abc' as trial 1's value"),
    ("parameter-text", "UPDATE trial_params SET param_value = 'abc' WHERE trial_id = 2 AND param_name = 'alpha'",
     "holds 'abc' as trial 1's alpha"),
    ("parameter-out-of-range", "UPDATE trial_params SET param_value = 1e308 WHERE trial_id = 2 AND param_name = 'alpha'",
     "holds a damaged trial (The value 1e+308 of parameter 'alpha' isn't contained"),
    ("state-text", "UPDATE trials SET state = 'WHATEVER' WHERE trial_id = 2", "holds a damaged trial ('WHATEVER'"),
    ("attribute-bad-json", "UPDATE trial_user_attributes SET value_json = '{' WHERE key = 'train' AND trial_id = 2",
     "holds a damaged trial (Expecting property name"),
]


@pytest.fixture(scope="module")
def stored_study(catalogue_env, tmp_path_factory):
    """A study of 3 completed trials, run by `memsense tune --study-db`."""
    path = tmp_path_factory.mktemp("study") / "study.sqlite"
    argv = [a.replace("{trials}", "3") for a in TUNE]
    code, out, err, tb = run_cli([*argv, "--store", str(catalogue_env.store), "--cache", str(catalogue_env.cache),
                                  "--study-db", str(path)])
    assert (code, tb) == (0, None), err
    return path


@pytest.mark.parametrize("name,sql,expect", STUDY_HARM, ids=[n for n, _, _ in STUDY_HARM])
@pytest.mark.slow
def test_a_study_resumed_with_another_knob_set_or_text_where_a_number_goes_is_one_line(
        name, sql, expect, stored_study, case_env, reference, tmp_path):
    import shutil
    import sqlite3

    TALLY["cases"] += 1
    study = case_env.work / "study.sqlite"
    shutil.copyfile(stored_study, study)
    with contextlib.closing(sqlite3.connect(study)) as db, db:
        assert db.execute(sql).rowcount >= 1
    before = study.read_bytes()
    argv = [a.replace("{trials}", "6") for a in TUNE]
    code, out, err, tb = run_cli([*argv, "--store", str(case_env.store), "--cache", str(case_env.cache),
                                  "--study-db", str(study)])
    TALLY["tracebacks"] += tb is not None or "Traceback" in err
    assert tb is None, tb
    lines = _lines(err)
    assert code == 1 and out == "" and len(lines) == 1 and lines[0].startswith("memsense: error: "), err
    assert expect in lines[0], lines[0]
    assert "trials are kept" in lines[0]
    assert study.read_bytes() == before  # no trial lost: nothing written
    assert sorted(p.name for p in case_env.work.iterdir()) == ["folder.toml", "study.sqlite"]
    assert digest(case_env.store) == reference[1]


# ---------------------------------------------------------------- class 2 and hostile probes: one line each

def _file(name: str, content: str | bytes):
    """Setup: `content` written to {work}/`name`."""
    def setup(env: Env, stack, mp) -> None:
        path = env.work / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return setup


def _question_file(name: str, change) -> Callable:
    """Setup: the demo questions, changed by `change(list of question dicts)`, in {work}/`name`."""
    def setup(env: Env, stack, mp) -> None:
        questions = _demo_questions()
        change(questions)
        _questions(env, name, questions)
    return setup


def _locomo_twice(env: Env, stack, mp) -> None:
    """A LoCoMo file whose one sample appears twice (its sample_id, so every question id, repeats)."""
    sample = {"sample_id": "demo-ana", "conversation": {"speaker_a": "Ana", "speaker_b": "Bo"},
              "qa": [{"question": q["question"], "answer": q["answer"], "category": q["category"],
                      "evidence": q["evidence"]} for q in _demo_questions() if q["user"] == "demo-ana"]}
    (env.work / "twice.json").write_text(json.dumps([sample, sample]), encoding="utf-8")


def _set(index: int, **fields):
    return lambda qs: qs[index].update(fields)


EVAL_W = ("eval", "{work}/q.json", *S, "--preset", "memsense", "--quiet")
DIAGNOSE_W = ("diagnose", "{work}/q.json", *S, "--quiet")
FIX_W = ("fix", "{work}/q.json", *S, "--cases", "demo-ana:q0", "--trials", "3", "--quiet")
TUNE_W = ("tune", "{work}/q.json", *S, "--train", "demo-ana", "--trials", "3", "--jobs", "1", "--quiet")
IMPACT_W = ("impact", "{work}/q.tsv", *S, "--a", "memsense", "--b", "bm25_only", "--quiet")
NOBODY = _question_file("q.json", _set(0, user="nobody"))
ROUND3 = [
    # users not in the store
    C("r3-eval-user-not-in-store", EVAL_W, "the store has no user nobody", setup=NOBODY),
    C("r3-diagnose-user-not-in-store", DIAGNOSE_W, "the store has no user nobody", setup=NOBODY),
    C("r3-fix-user-not-in-store", FIX_W, "the store has no user nobody", setup=NOBODY),
    C("r3-tune-user-not-in-store", ("tune", "{work}/q.json", *S, "--train", "nobody", "--trials", "3", "--quiet"),
      "the store has no user nobody", setup=NOBODY),
    C("r3-impact-user-not-in-store", IMPACT_W, "the store has no user nobody", setup=_file("q.tsv", "nobody\thello\n")),
    C("r3-impact-some-users-not-in-store", IMPACT_W, "the store has no user ghost",
      setup=_file("q.tsv", "demo-ana\thello\nghost\thi\n")),
    # evidence naming no session at all: nothing judged
    C("r3-eval-evidence-not-sessions", EVAL_W, "no judged questions",
      setup=_question_file("q.json", lambda qs: [q.update(evidence=["nowhere"]) for q in qs])),
    # duplicated ids: two questions would share one pool and one score
    C("r3-eval-locomo-sample-twice", ("eval", "{work}/twice.json", *S, "--preset", "memsense", "--quiet"),
      "the question id 'demo-ana:q0' is given to 2 questions", setup=_locomo_twice),
    C("r3-diagnose-locomo-sample-twice", ("diagnose", "{work}/twice.json", *S, "--quiet"), "is given to 2 questions",
      setup=_locomo_twice),
    C("r3-fix-locomo-sample-twice", ("fix", "{work}/twice.json", *S, "--cases", "demo-ana:q0", "--quiet"),
      "is given to 2 questions", setup=_locomo_twice),
    C("r3-tune-locomo-sample-twice", ("tune", "{work}/twice.json", *S, "--train", "demo-ana", "--quiet"),
      "is given to 2 questions", setup=_locomo_twice),
    # a question or query a search refuses, named before any recall (it used to end the run where it came)
    C("r3-eval-question-with-nul", EVAL_W, "q.json: question demo-ana:q3: the query holds a NUL byte",
      setup=_question_file("q.json", _set(3, question="hi\x00there"))),
    C("r3-diagnose-question-with-nul", DIAGNOSE_W, "question demo-ana:q3: the query holds a NUL byte",
      setup=_question_file("q.json", _set(3, question="hi\x00there"))),
    C("r3-eval-question-too-long", EVAL_W, "question demo-ana:q1: the query is 100,001 characters",
      setup=_question_file("q.json", _set(1, question="x" * 100_001))),
    C("r3-impact-query-with-nul-on-line-3", IMPACT_W, "q.tsv:3: the query holds a NUL byte",
      setup=_file("q.tsv", "demo-ana\tfine\n\ndemo-ana\thi\x00there\n")),
    C("r3-impact-query-too-long", IMPACT_W, "q.tsv:2: the query is 100,001 characters",
      setup=_file("q.tsv", "demo-ana\tfine\ndemo-ana\t" + "y" * 100_001 + "\n")),
    # odd shapes and bytes
    C("r3-impact-utf16", IMPACT_W, "is not UTF-8 text", setup=_file("q.tsv", "demo-ana\thello\n".encode("utf-16"))),
    C("r3-impact-nan-query", IMPACT_W, 'needs string keys "user" and "query"',
      setup=_file("q.tsv", '{"user": "demo-ana", "query": NaN}\n')),
    C("r3-impact-only-blank-and-comments", IMPACT_W, "no queries", setup=_file("q.tsv", "\n# a\n\t\n\n")),
    C("r3-impact-k-huge", (*IMPACT_W, "--k", "1" + "0" * 30), "argument --k: must be a whole number from 1 to 50",
      usage=True, setup=_file("q.tsv", "demo-ana\thello\n")),
    C("r3-impact-k-float", (*IMPACT_W, "--k", "1e30"), "argument --k: must be a whole number from 1 to 50", usage=True,
      setup=_file("q.tsv", "demo-ana\thello\n")),
    C("r3-diagnose-k-huge", (*DIAGNOSE_W, "--k", "51"), "argument --k: must be a whole number from 1 to 50",
      usage=True, setup=_question_file("q.json", lambda qs: None)),
    C("r3-eval-k-huge", (*EVAL_W, "--k", "1" + "0" * 30), "argument --k: must be a whole number from 1 to 50",
      usage=True, setup=_question_file("q.json", lambda qs: None)),
    C("r3-impact-queries-folder", ("impact", "{work}", *S, "--a", "memsense", "--b", "bm25_only"), "folder"),
    C("r3-eval-questions-folder", ("eval", "{work}", *S, "--quiet"), "folder"),
    C("r3-eval-questions-empty-file", EVAL_W, "q.json", setup=_file("q.json", "")),
    C("r3-eval-questions-1e400-category", EVAL_W, "category",
      setup=_file("q.json", '{"questions": [{"user": "demo-ana", "question": "q?", "answer": "a", "category": 1e400, '
                            '"evidence": ["D1:1"]}]}')),
    C("r3-tune-study-db-dev-null", (*TUNE_W, "--study-db", "/dev/null"), "--study-db /dev/null is a device, not a file",
      setup=_question_file("q.json", lambda qs: None)),
    C("r3-tune-study-db-fifo", (*TUNE_W, "--study-db", "{work}/fifo.sqlite"), "is a named pipe, not a file",
      setup=lambda env, stack, mp: (_question_file("q.json", lambda qs: None)(env, stack, mp),
                                    os.mkfifo(env.work / "fifo.sqlite"))),
    C("r3-tune-study-db-folder", (*TUNE_W, "--study-db", "{work}/folder.toml"), "is a folder, not a file",
      setup=_question_file("q.json", lambda qs: None)),
    C("r3-tune-sensitivity-points-huge", (*TUNE_W, "--sensitivity-points", "100000"), "give at most 101", usage=True,
      setup=_question_file("q.json", lambda qs: None)),
    C("r3-export-memsense-out-empty", ("export-memsense", "--preset", "memsense", "--out", ""),
      "the --out path is empty; give a file name"),
    C("r3-bench-out-empty", ("bench", "--out", ""), "the benchmark output path is empty"),
    C("r3-history-neither-store-nor-runs-db", ("history", "--json"),
      "name the store whose runs to read (--store), or a shared runs database (--runs-db)", usage=True),
    C("r3-history-runs-db-not-postgres", ("history", "--runs-db", "sqlite:///{work}/runs.sqlite"),
      "is not a PostgreSQL address"),
    C("r3-history-export-config-unknown", ("history", "--store", "{work}/store", "--export", "2", "--config-a", "nope",
                                           "--out", "{work}/x.toml"), "has no config 'nope'",
      setup=catalogue._history("healthy")),
    C("r3-history-export-into-a-fifo", ("history", "--store", "{work}/store", "--export", "2", "--out", "{work}/f.toml"),
      "is not a regular file", setup=lambda env, stack, mp: (catalogue._history("healthy")(env, stack, mp),
                                                  os.mkfifo(env.work / "f.toml"))),
    C("r3-history-export-through-a-symlinked-folder", ("history", "--store", "{work}/store", "--export", "2", "--out",
                                                       "{work}/link/x.toml"), "is a symbolic link",
      setup=lambda env, stack, mp: (catalogue._history("healthy")(env, stack, mp),
                                    (env.work / "real").mkdir(), (env.work / "link").symlink_to(env.work / "real"))),
]


@pytest.mark.parametrize("case", ROUND3, ids=[c.id for c in ROUND3])
def test_round3_bad_input(case: Case, case_env: Env, reference, monkeypatch, request):
    catalogue.test_bad_input(case, case_env, reference, monkeypatch, request)


def test_questions_left_out_for_unreadable_evidence_are_warned_about(case_env, tmp_path):
    """A judged question whose evidence names no session (`D1:`, `:1`, a number) used to vanish
    from every figure unsaid; the count is one warning line, and the other questions score."""
    questions = _demo_questions()[:3]
    questions[0]["evidence"] = ["D1:"]
    questions[1]["evidence"] = [7]
    path = tmp_path / "q.json"
    path.write_text(json.dumps({"questions": questions}), encoding="utf-8")
    code, out, err, tb = run_cli(["eval", str(path), "--store", str(case_env.store), "--cache", str(case_env.cache),
                                  "--preset", "memsense"])
    assert (code, tb) == (0, None), err
    assert _lines(err) == [f"memsense: warning: {path}: 2 judged question(s) left out: their evidence names no session "
                           'as D<session>:<turn> (e.g. question 1: ["D1:"])']
    assert out.startswith("1 questions, 1 users")
