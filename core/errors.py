"""The one exception type for errors a user can cause."""
from __future__ import annotations


class MemsenseError(Exception):
    """A problem the user can fix: the message says what was wrong and what to do.

    The CLI prints it on one line without a traceback; the GUI shows it in a dialog.
    """


class Cancelled(MemsenseError):
    """Work stopped because the user cancelled it (not a failure: nothing to fix).

    The one cancellation exception of the project: core raises it when a cancel token is set,
    the GUI's task runner raises it for a cancelled task, and both recognise it by type.
    """
