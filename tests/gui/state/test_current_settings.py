"""CurrentSettings, without a window: the one copy of the settings on screen and its undo stack."""
from __future__ import annotations

from dataclasses import replace

from core.config import Config
from core.config.presets import BUILTIN
from memsense_gui.state.current_settings import PRESET_CAUSE, CurrentSettings


def _lam(v: float) -> Config:
    return replace(Config(), mmr_lambda=v)


def test_ticks_of_one_drag_merge_and_the_next_drag_is_a_step_of_its_own(qtbot):
    c = CurrentSettings(throttle_ms=0)
    seen = []
    c.changed.connect(lambda cfg, cause: seen.append((cfg.mmr_lambda, cause)))
    for v in (0.7, 0.6, 0.5):  # one drag
        c.edit(_lam(v), "mmr_lambda")
    c.end_edit()
    c.edit(_lam(0.4), "mmr_lambda")  # the next drag of the same knob
    c.end_edit()
    assert c.stack.count() == 2 and c.config == _lam(0.4)
    assert seen == [(0.7, "mmr_lambda"), (0.6, "mmr_lambda"), (0.5, "mmr_lambda"), (0.4, "mmr_lambda")]
    c.stack.undo()
    assert c.config == _lam(0.5) and seen[-1] == (0.5, "undo")
    c.stack.undo()
    assert c.config == Config() and not c.stack.canUndo()
    c.stack.redo()
    assert c.config == _lam(0.5) and seen[-1] == (0.5, "redo")


def test_settings_applied_whole_are_one_step_each_and_never_merge(qtbot):
    c = CurrentSettings(throttle_ms=0)
    c.apply(BUILTIN["bm25_only"], "preset “bm25_only”")
    c.apply(_lam(0.3), "a fix candidate")
    c.apply(_lam(0.3), "the same again")  # the settings on screen already: no step
    assert c.stack.count() == 2 and c.stack.undoText() == "apply a fix candidate"
    c.stack.undo()
    assert c.config == BUILTIN["bm25_only"]
    c.edit(BUILTIN["memsense"], PRESET_CAUSE + "memsense")  # a preset chosen without its diff
    c.edit(BUILTIN["bm25_only"], PRESET_CAUSE + "bm25_only")
    assert c.stack.count() == 3 and c.stack.undoText() == "apply preset bm25_only"


def test_a_burst_of_ticks_is_emitted_throttled_the_newest_last(qtbot):
    c = CurrentSettings(throttle_ms=10_000)
    c.applied()  # a re-rank just went on screen: the next change waits for the interval
    seen = []
    c.changed.connect(lambda cfg, cause: seen.append(cfg.mmr_lambda))
    for v in (0.7, 0.6, 0.5):
        c.edit(_lam(v), "mmr_lambda")
    assert seen == [] and c.config == _lam(0.5)  # the newest at once, its signal held
    c.stack.undo()  # anything but a tick is emitted at once, and what was held is dropped
    assert seen == [Config().mmr_lambda]
    c.stack.redo()
    c.edit(_lam(0.2), "mmr_lambda")
    c.end_edit()  # a release emits the held tick now
    assert seen == [Config().mmr_lambda, 0.5, 0.2]


def test_restore_puts_settings_without_a_step(qtbot):
    c = CurrentSettings(throttle_ms=0)
    c.apply(_lam(0.3), "something")
    with qtbot.waitSignal(c.changed) as blocker:
        c.restore(BUILTIN["bm25_only"])
    assert blocker.args == [BUILTIN["bm25_only"], "restore"] and c.stack.count() == 0


def test_the_undo_stack_keeps_the_newest_steps_only(qtbot):
    """A long day's use: the stack holds at most UNDO_LIMIT steps, the oldest dropped first."""
    from dataclasses import replace

    from core.config import Config
    from memsense_gui.state.current_settings import UNDO_LIMIT, CurrentSettings

    current = CurrentSettings(Config(), throttle_ms=0)
    for i in range(UNDO_LIMIT + 5):
        current.apply(replace(Config(), top_k=1 + i % 50, rrf_k=1.0 + i / 10), f"step {i}")
    assert current.stack.count() == UNDO_LIMIT
    assert current.stack.command(0).text() == "apply step 5"
