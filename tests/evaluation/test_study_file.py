"""A study file (Optuna's journal, `core.evaluation.study.file_storage`) torn by a crash mid-write."""
from __future__ import annotations

import optuna

from core.evaluation.study import drop_torn_line, file_storage

TORN = b'{"op_code": 4, "worker_id": "w", "study_id": 0, "datetime_start": "2026-11-'


def _trials(path) -> list[float]:
    study = optuna.load_study(study_name="s", storage=file_storage(path))
    return [t.params["x"] for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]


def test_a_torn_last_line_is_cut_and_every_complete_trial_resumes(tmp_path):
    path = tmp_path / "study.journal"
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(study_name="s", storage=file_storage(path), direction="maximize")
    study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=3)
    done = _trials(path)
    with open(path, "ab") as fh:  # a crash in the middle of appending the next record
        fh.write(TORN)
    assert _trials(path) == done  # resumed with every complete trial
    assert not path.read_bytes().endswith(TORN)
    study = optuna.load_study(study_name="s", storage=file_storage(path))
    study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=2)
    assert len(_trials(path)) == 5 and _trials(path)[:3] == done  # nothing appended onto the torn line was lost


def test_drop_torn_line_keeps_whole_lines(tmp_path):
    path = tmp_path / "j"
    for content, kept in ((b"", b""), (b"a\n", b"a\n"), (b"a\nb", b"a\n"), (b"abc", b""),
                          (b"x" * 70_000 + b"\n" + b"y" * 70_000, b"x" * 70_000 + b"\n")):
        path.write_bytes(content)
        assert drop_torn_line(path) == len(content) - len(kept)
        assert path.read_bytes() == kept
