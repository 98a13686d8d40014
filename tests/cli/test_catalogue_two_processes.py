"""Catalogue cases of two processes at once (issue 39, class 5), in the catalogue's pattern
(`tests/cli/test_bad_input_catalogue.py`: one error line, its exit code, no traceback, the store and its
search unchanged): the app holds the store open while the command runs. The app reading it (as it does
while a store is open: evaluating, diagnosing, tuning) refuses every command that writes the store; the
app building or updating it (New store…) refuses every command, readers too. The real app and the real
command as two processes: tests/gui/window/test_two_processes.py."""
from __future__ import annotations

import contextlib

import pytest

from tests.cli.test_bad_input_catalogue import (  # noqa: F401 - the fixtures
    S, Env, C, _locked, case_env, catalogue_env, reference, test_bad_input as check_case,
)

IN_USE = "open in another process"


def _app_reading(env: Env, stack: contextlib.ExitStack, mp) -> None:
    """The app with the store open (its engine reads it for as long as the store is open)."""
    from core.recall.backends import open_store

    store = open_store(env.store)
    stack.callback(store.close)


TWO_PROCESSES = [
    C("drop-while-the-app-reads", ("drop", "--store", "{store}", "--user", "demo-ana"), IN_USE, setup=_app_reading),
    C("drop-unknown-user-while-the-app-reads", ("drop", "--store", "{store}", "--user", "nobody"), IN_USE,
      setup=_app_reading),
    C("ingest-while-the-app-reads", ("ingest", "{demo}", *S), IN_USE, setup=_app_reading),
    C("ingest-new-mode-while-the-app-reads", ("ingest", "{demo}", *S, "--mode", "session"), IN_USE,
      setup=_app_reading),
    C("drop-while-the-app-builds", ("drop", "--store", "{store}", "--user", "demo-ana"), IN_USE, setup=_locked),
    C("users-while-the-app-builds", ("users", "--store", "{store}"), IN_USE, setup=_locked),
    C("eval-while-the-app-builds", ("eval", "{demoq}", *S, "--quiet"), IN_USE, setup=_locked),
    C("diagnose-while-the-app-builds", ("diagnose", "{demoq}", *S, "--quiet"), IN_USE, setup=_locked),
    C("fix-while-the-app-builds", ("fix", "{demoq}", *S, "--cases", "demo-ana:q0", "--trials", "3", "--quiet"),
      IN_USE, setup=_locked),
    C("tune-while-the-app-builds", ("tune", "{demoq}", *S, "--train", "demo-ana", "--trials", "3", "--quiet"),
      IN_USE, setup=_locked),
]


@pytest.mark.parametrize("case", TWO_PROCESSES, ids=[c.id for c in TWO_PROCESSES])
def test_two_processes(case, case_env, reference, monkeypatch, request):  # noqa: F811 - the fixtures
    check_case(case, case_env, reference, monkeypatch, request)
