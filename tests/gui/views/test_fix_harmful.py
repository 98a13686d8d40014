"""Find a fix never puts a harmful candidate first or pre-selects it, marks it in words in the table and
the plot, and asks before applying it, naming the loss (SPEC §16)."""
from __future__ import annotations

from PySide6.QtCore import Qt

from core.config import Config
from core.evaluation.fix import FixCandidate, FixResult, candidate_order
from memsense_gui.models.failures import FixCandidatesModel
from memsense_gui.views.fix import FixView
from memsense_gui.workers.failure_jobs import FixRun


def _candidate(after: float, p: float, fixed: int, broken: int, cases: int, rrf_k: float) -> FixCandidate:
    return FixCandidate(Config(rrf_k=rrf_k), {"rrf_k": (15.0, rrf_k)}, tuple(f"q{i}" for i in range(cases)),
                        tuple(f"f{i}" for i in range(fixed)), tuple(f"b{i}" for i in range(broken)),
                        0.766, after, p, 0.770, after + 0.003)


HARMFUL = _candidate(0.489, 0.0001, 20, 232, cases=5, rrf_k=1.0)
SAFE = _candidate(0.799, 0.01, 25, 0, cases=1, rrf_k=30.0)


def _view(qtbot, candidates, asked):
    view = FixView(confirm_harmful=lambda _parent, c: asked.append(c) or False)
    qtbot.addWidget(view)
    view.resize(900, 400)
    view.show()
    result = FixResult("recall_all@4", tuple(f"q{i}" for i in range(8)), 200,
                       tuple(sorted(candidates, key=candidate_order)))
    view.show_run(FixRun(Config(), result, 760, 1, ""))
    return view


def test_the_harmful_candidate_is_last_marked_and_not_preselected(qtbot):
    asked: list = []
    view = _view(qtbot, [HARMFUL, SAFE], asked)
    model = view.model
    assert model.candidate(0) is SAFE and model.candidate(1) is HARMFUL
    assert view.selected_candidate() is SAFE
    verdict = model.index(1, FixCandidatesModel.VERDICT)
    assert model.data(verdict, Qt.ItemDataRole.DisplayRole) == "harmful"
    assert model.data(model.index(0, FixCandidatesModel.VERDICT), Qt.ItemDataRole.DisplayRole) == "safe"
    assert "0.766 → 0.489" in model.data(verdict, Qt.ItemDataRole.ToolTipRole)
    assert model.data(model.index(1, FixCandidatesModel.OTHERS), Qt.ItemDataRole.DisplayRole) == "0.770 → 0.492"
    assert [label.toPlainText() for label in view.plot.labels] == ["1", "2 harmful"]
    assert "1 safe candidate, 1 harmful (listed last)" in view.status.text()

    # applying the harmful one asks first; a No applies nothing
    view.select_candidate(1)
    applied: list = []
    view.apply_requested.connect(lambda c, n: applied.append((c, n)))
    view.apply_button.click()
    assert asked == [HARMFUL] and applied == []
    view.confirm_harmful = lambda _parent, c: True
    view.apply_button.click()
    assert applied == [(HARMFUL, 2)]
    view.select_candidate(0)  # a safe one applies without a question
    view.confirm_harmful = lambda _parent, c: asked.append(c) or False
    view.apply_button.click()
    assert applied[-1] == (SAFE, 1) and asked == [HARMFUL]


def test_every_candidate_harmful_says_no_safe_fix_and_selects_none(qtbot):
    view = _view(qtbot, [HARMFUL], [])
    assert view.selected_candidate() is None and not view.apply_button.isEnabled()
    assert "no safe fix found" in view.status.text()
