"""What the Auto-tune tab says of a run, in words: a cross-validation's choice among configs and its
folds, a cancelled search's best so far, and why a one-user split is chosen in sample."""
from __future__ import annotations

from core.evaluation.cv import CrossValidation
from core.evaluation.tune import Trial
from memsense_gui.state.trial_feed import SPLIT_RUN

IN_SAMPLE = ("One training user: the settings offered are the search's best on that user, in sample; tick two or "
             "more training users to choose among the presets and the search out of sample.")


def kept_text(kept: tuple[str, Trial, int] | None) -> str:
    """What a cancelled search keeps: (run, its best trial, the trials it rests on)."""
    assert kept is not None
    run, best, n = kept
    test = "" if best.test is None else f", held-out {best.test:.3f}"
    where = "" if run == SPLIT_RUN else f" of {run}"
    return (f"Kept the best so far{where}: trial {best.number}, train {best.train:.3f}{test}, "
            f"resting on {n} trial{'s' if n != 1 else ''}.")


def choice_lines(cv: CrossValidation) -> list[str]:
    """The choice among configs (each contender's cross-validated figure, the chosen one, the runner-up,
    on held-out users too when there are some), then each fold's figures."""
    ch = cv.choice
    test = f"; on held-out {', '.join(cv.test_users)}" if cv.test_users else ""
    lines = [f"Choice by cross-validated {cv.metric} (mean over folds ± se; one-standard-error bar "
             f"{ch.bar:.3f}; rests on {cv.rests_on()}){test}:"]
    for c in ch.contenders:
        mark = "  ← chosen" if c is ch.chosen else "  (runner-up)" if c is ch.runner_up else ""
        on_test = f", held-out users {cv.test_scores[c.name]:.3f}" if c.name in cv.test_scores else ""
        lines.append(f"  {c.name}: {c.mean:.3f} ± {c.se:.3f}, {c.knobs_changed} changed{on_test}{mark}")
    lines.append(f"Why: {ch.reason()}.")
    lines += [f"fold {f.number}: held out {', '.join(f.held_users)} ({f.held_questions} questions) — "
              f"train {f.start_train:.3f} → {f.train:.3f}, held-out {f.start_held:.3f} → {f.held:.3f} "
              f"(gain {f.gain:+.3f})" for f in cv.folds]
    sd, lo, hi = cv.held_spread
    lines.append(f"the search's held-out over the folds: pooled {cv.cv_metric:.3f} over {cv.questions} questions, "
                 f"sd {sd:.3f}, min {lo:.3f}, max {hi:.3f}")
    return lines
