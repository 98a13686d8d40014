"""Argument parsing shared by every command: one-line usage errors, checked `--store`, and the
options every command takes (`-q`, `-v`, `--log-file`)."""
from __future__ import annotations

import argparse
import logging
import re
import shlex
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn, TypedDict

from core.config.schema import TOP_K_MAX
from core.errors import MemsenseError
from core.redact import redact, redact_url

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2
"""Exit codes, as pip, ruff and uv use them: 0 success, 1 the command failed, 2 bad usage."""


class UsageError(MemsenseError):
    """The command line itself is wrong (an unknown option, a missing or malformed argument): exit 2."""


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors: `memsense: error: ...` like every other error, and a
    hint when a query starting with `-` was read as an option."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see `{self.prog} --help`)")

    def parse_args(self, args=None, namespace=None):
        argv = list(sys.argv[1:] if args is None else args)
        stray = self._unknown_before_command(argv)
        if stray:  # else argparse names a missing command or option instead of the one it could not read
            raise UsageError(f"unrecognized arguments: {' '.join(stray)} (see `{self.prog} --help`)")
        try:
            return merge_output_options(super().parse_args(argv, namespace))
        except MemsenseError as exc:
            hint = self._dash_hint(argv, str(exc))
            if hint:
                raise UsageError(f"{exc}; {hint}") from None
            raise

    def _unknown_before_command(self, argv: list[str]) -> list[str]:
        """The words before the command that look like options and are none of this parser's."""
        if not any(isinstance(a, argparse._SubParsersAction) for a in self._actions):
            return []
        stray = []
        for word in argv:
            if word == "--" or not word.startswith("-") or _is_number(word):
                break
            if not self._is_option(word):
                stray.append(word)
        return stray

    def _is_option(self, word: str) -> bool:
        """`word` is one of this parser's options: whole (`--log-file=F` too), a long one abbreviated
        as argparse allows, or single-letter flags run together (`-vv`, `-qv`)."""
        known = self._option_string_actions
        name = word.split("=", 1)[0]
        if name in known:
            return True
        if name.startswith("--"):
            return len([o for o in known if o.startswith(name)]) == 1
        return len(word) > 2 and all(f"-{c}" in known and known[f"-{c}"].nargs == 0 for c in word[1:])

    def _dash_hint(self, argv: list[str], message: str) -> str:
        """The fix when a word of the command line starts with `-` and is no option of the
        command: a query like `-5 km` or `-how` must come after `--`."""
        sub = next((a for a in self._actions if isinstance(a, argparse._SubParsersAction)), None)
        command = argv[0] if argv else ""
        parser = sub.choices.get(command) if sub is not None else None
        if parser is None or not any(a.dest == "query" for a in parser._actions) or "--" in argv:
            return ""
        if not any(m in message for m in ("unrecognized arguments", "required: query", "explicit argument",
                                          "expected one argument")):
            return ""
        known = parser._option_string_actions
        stray = next((a for a in argv[1:] if a.startswith("-") and not a.startswith("--") and len(a) > 1
                      and a.split("=", 1)[0] not in known and not _is_number(a)), None)
        if stray is None:
            return ""
        return (f"a query that starts with '-' goes after `--`, which ends the options: "
                f"memsense {command} ... -- {shlex.quote(stray)}")


SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")
LIBPQ_PAIR = re.compile(r"(^|\s)(host|hostaddr|port|dbname|user|password|sslmode|service)\s*=", re.IGNORECASE)
"""A libpq `key=value` connection string (`host=h dbname=d password=...`), not a folder name."""


def store_location(text: str) -> str:
    """`--store` of search and explain: a folder, an http(s):// Qdrant URL or a live Memsense
    database (postgresql://...). An empty path would mean the current folder; any other address
    is refused with its secrets masked."""
    from core.recall.memsense.session import is_postgres
    from core.recall.store import is_url

    if not text.strip():
        raise argparse.ArgumentTypeError("--store is empty; give a store folder or an http(s):// Qdrant URL")
    if LIBPQ_PAIR.search(text):
        raise argparse.ArgumentTypeError(
            f"{redact(text)} is a libpq connection string (name and value pairs); give a live Memsense database as "
            "postgresql://USER:PASSWORD@HOST:PORT/DATABASE")
    if SCHEME.match(text) and not is_url(text) and not is_postgres(text):
        raise argparse.ArgumentTypeError(
            f"{redact_url(text)} is neither a store folder, an http(s):// Qdrant URL nor a postgresql:// address")
    if not SCHEME.match(text) and Path(text).expanduser().exists() and not Path(text).expanduser().is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a file, not a store folder")
    return text


SEED_LIMIT = 2**32
"""Seeds numpy's and Optuna's generators take: whole numbers from 0 to 2**32 - 1."""


def printed(args: argparse.Namespace, option: str, path: str | None) -> bool:
    """True when the output `path` of `option` is `-`, standard output (`core.atomic.STDOUT`): the
    file itself is printed, so no "wrote ..." line follows it, and --json, which prints too, is
    refused rather than mixed in."""
    from core.atomic import STDOUT

    if path != STDOUT:
        return False
    if getattr(args, "json", False):
        raise UsageError(f"{option} - prints the file on standard output, where --json prints too; leave out one "
                         "of them")
    return True


def not_printed(option: str, path: str | None, how: str) -> None:
    """Refuse `-` (standard output) for an output that would mix with the command's own report;
    `how` says how to print what the file would hold."""
    from core.atomic import STDOUT

    if path == STDOUT:
        raise UsageError(f"{option} - would mix the file with this command's report on standard output; {how}")


MAX_TRIALS = 100_000
"""The most trials a search is asked for: at about 0.1 s a trial on a small set, over 3 hours."""


def check_trials(trials: int) -> None:
    """`--trials` of a search: at least 1, at most `MAX_TRIALS`."""
    if trials < 1:
        raise UsageError(f"--trials must be at least 1, got {trials}")
    if trials > MAX_TRIALS:
        raise UsageError(f"--trials {trials} is more than a search here can finish; give at most {MAX_TRIALS:,} "
                         "(a stored --study-db continues where it stopped)")


@contextmanager
def ctrl_c_sets(cancel: threading.Event) -> Iterator[None]:
    """While a search runs, Ctrl+C sets `cancel`: the search stops after the trial it is scoring
    and reports what it found (a second Ctrl+C stops at once). Outside the main thread, where no
    signal handler can be set, Ctrl+C keeps its usual meaning."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt
        cancel.set()

    previous = signal.signal(signal.SIGINT, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def seed_number(text: str) -> int:
    """`--seed`: a whole number the random generators accept (a negative one is a traceback in numpy)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value < SEED_LIMIT:
        raise argparse.ArgumentTypeError(f"must be a whole number from 0 to {SEED_LIMIT - 1}, got {text!r}")
    return value


def top_k_number(text: str) -> int:
    """`--k` and `--top-k`: how many results, a whole number from 1 to the controls' `TOP_K_MAX`
    (argparse names the option; a number past it was the config's error, exit 1, not a usage one)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= TOP_K_MAX:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to {TOP_K_MAX}, got {text!r}")
    return value


GLOBAL = "global_"
"""Prefix of the destinations of -q, -v and --log-file given before the command (`merge_output_options`)."""


def add_output_options(parser: argparse.ArgumentParser, top: bool = True) -> None:
    """`-q`, `-v` and `--log-file` on every command under `parser` (on `parser` if it has none), and
    on `parser` itself when it has commands, so they may come before the command or after it."""
    commands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if commands:
        for action in commands:
            for sub in action.choices.values():
                add_output_options(sub, top=False)
        if top:
            _output_group(parser, GLOBAL)
        return
    _output_group(parser, "")


def _output_group(parser: argparse.ArgumentParser, prefix: str) -> None:
    group = parser.add_argument_group("output")
    group.add_argument("-q", "--quiet", action="store_true", dest=f"{prefix}quiet",
                       help="no progress and no warnings on stderr, only errors")
    group.add_argument("-v", "--verbose", action="count", default=0, dest=f"{prefix}verbose",
                       help="say more on stderr: -v what is being done, -vv debugging detail")
    group.add_argument("--log-file", metavar="FILE", dest=f"{prefix}log_file",
                       help="also append every message (at least -v's) to FILE, with times")


def merge_output_options(args: argparse.Namespace) -> argparse.Namespace:
    """One `quiet`, `verbose` and `log_file` from the options given before the command and after it
    (`memsense -v search -v ...` is -vv; a --log-file after the command wins)."""
    if not hasattr(args, f"{GLOBAL}quiet"):
        return args
    args.quiet = bool(getattr(args, "quiet", False) or getattr(args, f"{GLOBAL}quiet"))
    args.verbose = int(getattr(args, "verbose", 0) or 0) + int(getattr(args, f"{GLOBAL}verbose") or 0)
    args.log_file = getattr(args, "log_file", None) or getattr(args, f"{GLOBAL}log_file")
    for name in ("quiet", "verbose", "log_file"):
        delattr(args, f"{GLOBAL}{name}")
    return args


def level(args: argparse.Namespace) -> int:
    """The console's logging level for -q / -v / -vv."""
    if getattr(args, "quiet", False):
        return logging.ERROR
    return {0: logging.WARNING, 1: logging.INFO}.get(getattr(args, "verbose", 0), logging.DEBUG)


def _check_log_file(path: str) -> None:
    """`--log-file`: a file to append to. `-` is refused (the messages are on standard error
    already), and so is a named pipe or socket (opening one with no reader waits for ever)."""
    from core.files import special_file

    if path == "-":
        raise UsageError("--log-file - : the messages go to standard error already (-v for more of them); "
                         "--log-file takes a file to append them to")
    if special_file(path) in ("named pipe", "socket"):
        raise MemsenseError(f"the log file {path} is a {special_file(path)}, not a file; give the path of a file")


@contextmanager
def logging_to(args: argparse.Namespace, stream: Any) -> Iterator[None]:
    """For one command: log records (and Python warnings) to `stream` at the level of -q/-v, and
    to --log-file; everything is put back as it was afterwards (the CLI runs in-process in tests)."""
    root = logging.getLogger()
    console = logging.StreamHandler(stream)
    console.setLevel(level(args))
    console.setFormatter(logging.Formatter("memsense: %(levelname_lower)s: %(message)s"))
    console.addFilter(_lower_level_name)
    handlers: list[logging.Handler] = [console]
    if getattr(args, "log_file", None):
        _check_log_file(args.log_file)
        try:
            log_file = _LogFile(args.log_file, encoding="utf-8")
        except OSError as exc:
            raise MemsenseError(f"cannot write the log file {args.log_file} ({exc.strerror}); "
                                "choose a writable path") from None
        log_file.setLevel(min(level(args), logging.INFO))
        log_file.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        handlers.append(log_file)
    old_level = root.level
    root.setLevel(min(h.level for h in handlers))
    for handler in handlers:
        root.addHandler(handler)
    logging.captureWarnings(True)
    try:
        yield
    finally:
        logging.captureWarnings(False)
        for handler in handlers:
            root.removeHandler(handler)
            handler.close()
        root.setLevel(old_level)
        for handler in handlers:
            if isinstance(handler, _LogFile) and handler.fault:  # the command's output stands; one line says so
                print(f"memsense: warning: the log file {handler.baseFilename} was not written whole "
                      f"({handler.fault}); choose a path on a disk with room", file=stream)


class _LogFile(logging.FileHandler):
    """`--log-file`: a write that fails (a full disk) is kept as `fault` and said once at the end, never
    printed as logging's own traceback in the middle of the command's output."""

    fault = ""

    def handleError(self, record: logging.LogRecord | None) -> None:  # noqa: N802 - logging's name
        import sys

        exc = sys.exc_info()[1]
        self.fault = self.fault or (getattr(exc, "strerror", None) or str(exc))

    def flush(self) -> None:
        try:
            super().flush()
        except OSError:
            self.handleError(None)

    def close(self) -> None:
        try:
            super().close()
        except OSError:
            self.handleError(None)


def _lower_level_name(record: logging.LogRecord) -> bool:
    record.levelname_lower = record.levelname.lower()
    return True


def store_folder(text: str) -> str:
    """`--store` of every command but search and explain: a folder or a Qdrant URL. A live
    Memsense database is only read by search and explain; the message says how to copy it."""
    from core.recall.memsense.session import is_postgres

    text = store_location(text)
    if is_postgres(text):
        raise argparse.ArgumentTypeError(
            f"{redact_url(text)} is a live Memsense database, which only search and explain read; give a store "
            f"folder or a Qdrant URL, or copy its users first: memsense import {redact_url(text)} --store DIR")
    return text


def seconds(option: str):
    """An argparse type for a timeout option: a positive, finite number of seconds."""
    from core.recall.timeouts import check_timeout

    def parse(text: str) -> float:
        try:
            return check_timeout(text, option)
        except MemsenseError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def add_analyzers(sp: argparse.ArgumentParser) -> None:
    """How a store folder's BM25 routes read words, and how session_dense scores a session (SPEC §15)."""
    from core.recall.lexical.analyzer import ANALYZERS, PLAIN
    from core.recall.sessions import AGGREGATIONS, DEFAULT_AGGREGATION, DEFAULT_SESSION_ANALYZER

    sp.add_argument("--analyzer", default=PLAIN, choices=tuple(ANALYZERS),
                    help=f"analyzer of the chunk-level BM25 route (default {PLAIN}: lowercased words, nothing removed; "
                         "english = English stop words dropped and Snowball stemming)")
    sp.add_argument("--session-analyzer", default=DEFAULT_SESSION_ANALYZER, choices=tuple(ANALYZERS),
                    help=f"analyzer of the session_lexical route (default {DEFAULT_SESSION_ANALYZER})")
    sp.add_argument("--session-dense", default=DEFAULT_AGGREGATION, choices=AGGREGATIONS,
                    help=f"how session_dense scores a session from its turns (default {DEFAULT_AGGREGATION}: the best turn)")


class RecallOptions(TypedDict):
    """The Engine's keyword options that name how its routes are built (`core.recall.engine.Engine`)."""

    lexical: str
    analyzer_name: str
    session_analyzer: str
    session_dense: str


def recall_options(args: argparse.Namespace) -> RecallOptions:
    """The Engine's options for a store folder's routes, as the command line gave them."""
    from core.recall.lexical.analyzer import PLAIN
    from core.recall.sessions import DEFAULT_AGGREGATION, DEFAULT_SESSION_ANALYZER

    return RecallOptions(lexical=getattr(args, "lexical", "bm25"), analyzer_name=getattr(args, "analyzer", PLAIN),
                         session_analyzer=getattr(args, "session_analyzer", DEFAULT_SESSION_ANALYZER),
                         session_dense=getattr(args, "session_dense", DEFAULT_AGGREGATION))
