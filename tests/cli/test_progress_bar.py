"""The command line's progress bar (`core.cli.output.progress_bar`)."""
from __future__ import annotations

import io

from core.cli.output import progress_bar


def test_the_progress_bar_names_a_step_of_unknown_length():
    """Off a tty: a line per stage and at each stage's end; a total of 0 is the step's name alone."""
    out = io.StringIO()
    show = progress_bar(out)
    for done in range(1, 4):
        show(done, 3, "sensitivity to alpha")
    show(0, 0, "importance of each knob (fANOVA)")
    lines = out.getvalue().replace("\r", "").splitlines()
    assert lines[0].startswith("sensitivity to alpha") and lines[0].endswith("1/3")
    assert lines[1].endswith("3/3") and lines[2] == "importance of each knob (fANOVA)" and len(lines) == 3


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_a_long_stage_shows_the_time_left_at_its_pace(monkeypatch):
    """Issue 39: 200,000 queries or 50,000 questions say how long they will take; a stage is timed
    from its first update, and says nothing in its first seconds or once done."""
    from core.cli import output

    clock = iter([100.0, 100.5, 112.0, 130.0])  # stage start, then each update
    monkeypatch.setattr(output.time, "monotonic", lambda: next(clock))
    out = _Terminal()
    show = progress_bar(out)
    show(0, 50_000, "recall")
    show(10, 50_000, "recall")  # 0.5 s in: too early
    show(1_000, 50_000, "recall")  # 12 s for 1,000: 49,000 more take 588 s
    show(50_000, 50_000, "recall")
    frames = out.getvalue().split("\r")[1:]
    assert "left" not in frames[0] + frames[1] + frames[3]
    assert frames[2].rstrip().endswith("1000/50000  (about 9 min 48 s left)")


def test_off_a_terminal_a_long_stage_writes_a_line_every_half_minute_with_the_time_left(monkeypatch):
    from core.cli import output

    clock = iter([0.0, 1.0, 31.0, 40.0, 62.0, 70.0])
    monkeypatch.setattr(output.time, "monotonic", lambda: next(clock))
    out = io.StringIO()
    show = progress_bar(out)
    for done in (0, 100, 3_100, 4_000, 6_200, 10_000):
        show(done, 10_000, "recall")
    lines = out.getvalue().replace("\r", "").splitlines()
    assert [line.split("] ")[1] for line in lines] == ["0/10000", "3100/10000  (about 69 s left)",
                                                        "6200/10000  (about 38 s left)", "10000/10000"]
