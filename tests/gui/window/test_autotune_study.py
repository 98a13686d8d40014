"""The Auto-tune tab keeps its Optuna study on disk (per store and question set): a run resumes
after the app was closed, the trial count continuing; the pool limits are searched as on the
CLI unless unticked; "Start over" forgets the saved trials."""
from __future__ import annotations

import json

from core.config import Config
from core.evaluation import study
from core.evaluation.tune import KNOBS, POOL_LIMITS
from memsense_gui.window.evaluation import install_evaluation
from tests.gui.fixtures import run_autotune


def _tab(window, path, trials: int, pool_limits: bool = True):
    view = install_evaluation(window)
    view.source.set_path(path)
    panel = view.autotune
    panel.folds_spin.setValue(1)  # the ticked train / held-out split
    panel.trials_spin.setValue(trials)
    panel.pool_check.setChecked(pool_limits)
    return view, panel


def test_a_study_resumes_after_the_app_is_closed(qtbot, make_window, app_home, tmp_path, monkeypatch):
    window = make_window()
    items = [{"user": u, "question": f"question {i} for {u}", "answer": "", "category": 1, "evidence": [f"D{i + 1}:1"]}
             for u in window.ctx.users for i in range(4)]
    path = tmp_path / "questions.json"
    path.write_text(json.dumps({"questions": items}))
    view, panel = _tab(window, path, trials=5)
    assert "candidate_multiplier" in [panel.knob_combo.itemText(i) for i in range(panel.knob_combo.count())]
    first = run_autotune(qtbot, panel)
    assert len(first.trials) == 5
    studies = list((app_home / "studies").glob("*.journal"))
    assert len(studies) == 1 and studies[0] == view.source.study_file()
    window.close()

    reports = []
    search = study.tune_tpe

    def recorded(*args, progress=None, **kwargs):  # every report the search makes (the GUI may coalesce them)
        return search(*args, progress=lambda *r: (reports.append(r), progress and progress(*r)), **kwargs)

    monkeypatch.setattr(study, "tune_tpe", recorded)
    again = make_window()  # the app opened again on the same data dir
    view, panel = _tab(again, path, trials=9)
    resumed = run_autotune(qtbot, panel)
    assert len(resumed.trials) == 9
    done = [d for d, total, what in reports if what.startswith("trial")]
    assert done == [6, 7, 8, 9]  # 5 kept, 4 new: no kept trial is run again
    assert [t.config for t in resumed.trials[:5]] == [t.config for t in first.trials]
    assert [t.train for t in resumed.trials[:5]] == [t.train for t in first.trials]
    assert panel.model.rowCount() == 9
    default = Config()
    assert any(getattr(t.config, name) != getattr(default, name) for t in resumed.trials for name in POOL_LIMITS)

    panel.forget()
    assert not view.source.study_file().exists() and "starts afresh" in panel.status.text()
    panel.trials_spin.setValue(3)
    assert len(run_autotune(qtbot, panel).trials) == 3


def test_unticked_pool_limits_stay_at_the_start(qtbot, make_window, tmp_path):
    window = make_window()
    items = [{"user": u, "question": f"question {i} for {u}", "answer": "", "category": 1, "evidence": [f"D{i + 1}:1"]}
             for u in window.ctx.users for i in range(4)]
    path = tmp_path / "questions.json"
    path.write_text(json.dumps({"questions": items}))
    _view, panel = _tab(window, path, trials=14, pool_limits=False)
    result = run_autotune(qtbot, panel)
    default = Config()
    assert all(getattr(t.config, name) == getattr(default, name) for t in result.trials for name in POOL_LIMITS)
    tag = next(k for k in KNOBS if k.name == "tag_weight")
    assert len({t.config.mmr_lambda for t in result.trials}) > 3  # the other knobs are searched,
    assert len({tag.get(t.config) for t in result.trials}) > 3  # the MMR tag weight among them
