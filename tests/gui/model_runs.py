"""The model-based GUI test's steps with runs (tests/gui/test_model_based.py): every evaluation is a run
kept in the store's history; the Runs view lists the store's runs with the names given to them; runs of one
question file compare side by side, each run's current settings scored as the model's fresh evaluation of
them; re-applying a run's settings through their diff is one undo step, and Undo puts the settings back.

`RunSteps` is a mixin of the machine: it uses the machine's window (`w`), Runs view (`history`), store
(`location`), settings (`cfg`), `world`, `settle`, `step` and `monkey`.
"""
from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import invariant, rule
from PySide6.QtWidgets import QApplication, QInputDialog

from core.config import Config
from core.config.presets import BUILTIN
from memsense_gui.views.evaluation_current import CURRENT

PRESETS = tuple(BUILTIN)
RUN_STEPS = ("kept", "named", "compared", "re-applied", "undone")
"""What the machine does with runs (counted when a step did it, printed at the end)."""


@dataclass
class KeptRun:
    """An evaluation the store's run history must keep: its id, question file, the settings evaluated as the
    current settings with their fresh figures (every question), and the name given to it."""

    id: int
    qfile: Path | None
    cfg: Config
    overall: dict[str, float]
    name: str = ""


def action(window, text: str):
    """The window's action named `text` (menus and toolbars; "&" accelerators ignored)."""
    from PySide6.QtGui import QAction

    return next(a for a in window.findChildren(QAction) if a.text().replace("&", "") == text)


class RunSteps:
    """The machine's steps and invariant with runs (module docstring)."""

    done: Counter[str] = Counter()  # the run steps that did their work (`RUN_STEPS`)

    def kept_evaluation(self) -> None:
        """An evaluation finished on screen: the store's history keeps it as the next run."""
        kept = self._kept()
        kept.append(KeptRun(max((r.id for r in kept), default=0) + 1, self.qfile, self.cfg,
                            dict(self._fresh_evaluation().overall)))
        RunSteps.done["kept"] += 1

    def _kept(self) -> list[KeptRun]:
        return self.world.runs.setdefault(self.location or "", [])

    @rule(i=st.integers(0, 9), name=st.sampled_from(["baseline", "after the λ change", ""]))
    def name_run(self, i, name):
        """Runs view: select a run, Name…, type a name (an empty one clears it)."""
        kept = self._kept()
        if not kept:
            return
        run = kept[i % len(kept)]
        self.history.select_runs([run.id])
        self.monkey(QInputDialog, "getText", lambda *a, **k: (name, True))
        self.history.name_button.click()
        self.settle()
        run.name = name
        RunSteps.done["named"] += 1
        self.step()

    @rule(i=st.integers(0, 9), n=st.integers(2, 4))
    def compare_runs(self, i, n):
        """Runs view: select up to `n` runs of one question file; the Compare tab sets them side by side, each
        run's current settings scored as the model's fresh evaluation of them."""
        by_file: dict[Path | None, list[KeptRun]] = {}
        for run in self._kept():
            by_file.setdefault(run.qfile, []).append(run)
        groups = [g for g in by_file.values() if len(g) >= 2]
        if not groups:
            return
        chosen = groups[i % len(groups)][-n:]
        ids = [r.id for r in chosen]
        self.history.select_runs(ids)
        panel, end = self.history.comparison, time.monotonic() + 60
        while panel.result is None or [f.run_id for f in panel.result.figures] != ids:
            QApplication.processEvents()
            time.sleep(0.002)
            assert time.monotonic() < end, "the comparison did not show"
        metric = self.history.metric_combo.currentText()
        assert panel.result.metric == metric and len(panel.result.datasets) == 1
        for figure, run in zip(panel.result.figures, chosen):
            assert figure.config == CURRENT and figure.mean == pytest.approx(run.overall[metric], abs=1e-9)
        if len(chosen) == 2:  # A vs B too
            assert self.history.diff is not None and (self.history.diff.a[0], self.history.diff.b[0]) == tuple(ids)
        RunSteps.done["compared"] += 1
        self.step()

    @rule(i=st.integers(0, 9), name=st.sampled_from([CURRENT, *PRESETS]), undo=st.booleans())
    def reapply_run(self, i, name, undo):
        """Runs view: Re-open settings… of one config of a run, Apply in its diff: one undo step; Undo puts the
        settings before it back."""
        kept = self._kept()
        if not kept:
            return
        run = kept[i % len(kept)]
        self.history.select_runs([run.id])
        self.history.config_a.setCurrentText(name)
        assert self.history.config_a.currentText() == name
        stack = self.w.ctx.current.stack
        steps = stack.index()
        self.history.reopen_button.click()
        self.w.applying.dialog.apply_button.click()
        self.settle()
        before, self.cfg = self.cfg, run.cfg if name == CURRENT else BUILTIN[name]
        assert stack.index() == steps + (self.cfg != before)
        RunSteps.done["re-applied"] += 1
        if undo and self.cfg != before:
            action(self.w, f"Undo apply settings of run {run.id} ({name})").trigger()  # Tuning > Undo
            self.settle()
            self.cfg = before
            assert stack.index() == steps
            RunSteps.done["undone"] += 1
        self.step()

    @invariant()
    def the_runs_view_lists_the_store_s_runs(self):
        if self.location is None:
            return
        model = self.history.runs_model
        assert sorted(r.id for r in model.runs) == [r.id for r in self._kept()]
        assert {r.id: model.names.get(r.id, ("", ""))[0] for r in self._kept()} == {r.id: r.name for r in self._kept()}
