"""The one exception type for errors a user can cause."""
from __future__ import annotations


class MemsenseError(Exception):
    """A problem the user can fix: the message says what was wrong and what to do.

    The CLI prints it on one line without a traceback; the GUI shows it in a dialog.
    """


class Cancelled(MemsenseError):
    """The work was stopped on request (Cancel pressed, or a newer request won): not a failure to report."""
