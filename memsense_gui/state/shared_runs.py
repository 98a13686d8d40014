"""The team's shared runs database as the app keeps it (issue 38): Settings > Shared runs….

The address is saved in the settings without its password (the Connect dialog's rule); the
password lives in this object for the session only, typed in a masked field, and is asked again
after a restart (or comes from PGPASSWORD / ~/.pgpass, which libpq reads). The name the runs are
kept under is saved too; left empty, runs are named by `core.evaluation.shared_runs.who` ($MEMSENSE_USER,
else the OS user). With no address the runs stay in the open store's own history file.
"""
from __future__ import annotations

from PySide6.QtCore import QSettings

from core.evaluation.shared_runs import runs_database, who
from core.redact import split_password, with_password

ADDRESS_KEY = "runs/database"
NAME_KEY = "runs/madeBy"


class SharedRuns:
    """Where the app keeps and reads runs: a PostgreSQL address (and this session's password)."""

    def __init__(self, settings: QSettings):
        self.settings = settings
        self.password = ""  # never saved

    @property
    def address(self) -> str:
        return str(self.settings.value(ADDRESS_KEY, "") or "")

    @property
    def name(self) -> str:
        return str(self.settings.value(NAME_KEY, "") or "")

    def set(self, address: str, password: str, name: str) -> None:
        """Keep `address` (a password in it moves to `password`), checked: not PostgreSQL is one line."""
        address, in_address = split_password(address.strip())
        if address:
            runs_database(address)  # raises MemsenseError for anything but postgresql://
        self.settings.setValue(ADDRESS_KEY, address)
        self.settings.setValue(NAME_KEY, name.strip())
        self.settings.sync()
        self.password = password or in_address or ""

    def url(self) -> str | None:
        """The address with this session's password, for the connection only (never shown), or None."""
        return with_password(self.address, self.password) if self.address else None

    def made_by(self) -> str:
        return who(self.name or None)
