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
