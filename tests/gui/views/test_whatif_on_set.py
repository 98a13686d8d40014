"""What would it take's changes judged on the question set (SPEC §16): re-ordered with harmful ones
last and said so, and applying a harmful one asks first."""
from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, Qt

from core.config import Config
from core.evaluation.fix import FixCandidate
from core.rank.whatif import Change, WhatIf
from memsense_gui.models.whatif import WhatIfModel
from memsense_gui.views.why_not import WhyNotPanel


def _effect(after: float, p: float) -> FixCandidate:
    return FixCandidate(Config(), {}, (), ("a",), ("b", "c") if after < 0.7 else (), 0.7, after, p, 0.7, after)


def test_changes_judged_on_the_set_put_harmful_last_and_ask_before_applying(qtbot):
    panel = WhyNotPanel()
    qtbot.addWidget(panel)
    panel.show()
    harmful = Change("lambda", 0.3, 0.78, 2, ("u:S1",))
    safe = Change("rrfK", 20.0, 15.0, 4, ())
    answer = WhatIf("u:S9", (harmful, safe), "")
    panel.whatif_pending("u:S9")
    panel.show_whatif("u:S9", answer)
    model = panel.whatif_model
    assert model.change(0) is harmful and model.data(model.index(0, WhatIfModel.SET)) == "—"

    panel.show_effects("u:S9", [_effect(0.5, 0.001), _effect(0.72, 0.4)], 35, "recall_all@4")
    assert model.change(0) is safe and model.change(1) is harmful
    assert model.data(model.index(1, WhatIfModel.SET)) == "0.700 → 0.500 harmful"
    assert "harmful: lowers the metric" in model.data(model.index(1, 0), Qt.ItemDataRole.ToolTipRole)
    assert "Judged on the question set (35 questions, recall_all@4); 1 harmful there (listed last)" in \
        panel.whatif_label.text()

    asked, applied = [], []
    panel.confirm_harmful = lambda _parent, e: asked.append(e) or False
    panel.whatif_apply_wanted.connect(applied.append)
    panel.whatif_view.selectionModel().select(model.index(1, 0), QItemSelectionModel.SelectionFlag.ClearAndSelect
                                              | QItemSelectionModel.SelectionFlag.Rows)
    panel.apply_selected_change()
    assert len(asked) == 1 and asked[0].harmful and applied == []
    panel.whatif_view.selectionModel().select(model.index(0, 0), QItemSelectionModel.SelectionFlag.ClearAndSelect
                                              | QItemSelectionModel.SelectionFlag.Rows)
    panel.apply_selected_change()
    assert applied == [safe] and len(asked) == 1

    panel.show_effects("u:other", [_effect(0.1, 0.0), _effect(0.1, 0.0)], 35, "recall_all@4")  # another pin's
    assert model.change(0) is safe
