"""The command line's conventions: --version, help for every argument, `-` for standard input,
-q / -v / --log-file on every command, shell completion, warnings shown (not silenced)."""
from __future__ import annotations

import argparse
import io
import json
import logging
import warnings

import pytest

from core import __version__, files
from core.cli.main import build_parser, main
from tests.cli.test_bad_input_catalogue import DEMO_DATASET, QUERY, run_cli


def _parsers(parser: argparse.ArgumentParser, path: str = "memsense"):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, f"{path} {name}")


def _commands() -> list[tuple[str, argparse.ArgumentParser]]:
    return [(path, p) for path, p in _parsers(build_parser())
            if not any(isinstance(a, argparse._SubParsersAction) for a in p._actions)]


def test_every_argument_of_every_command_has_help():
    missing = [f"{path}: {'/'.join(a.option_strings) or a.dest}" for path, p in _parsers(build_parser())
               for a in p._actions if not a.help]
    assert not missing, missing


def test_every_command_takes_quiet_verbose_and_a_log_file():
    commands = _commands()
    assert len(commands) > 15
    for path, parser in commands:
        options = {o for a in parser._actions for o in a.option_strings}
        assert {"-q", "--quiet", "-v", "--verbose", "--log-file"} <= options, path


def test_version(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out == f"memsense {__version__}\n"


def test_shell_completion_names_the_commands(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--print-completion", "bash"])
    assert stop.value.code == 0
    script = capsys.readouterr().out
    assert "complete" in script and all(name in script for name in ("ingest", "search", "tune", "--store"))


@pytest.fixture
def stdin(monkeypatch):
    def give(data: bytes) -> None:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
        monkeypatch.setattr(files, "_stdin", None)

    return give


def test_dash_reads_the_query_from_standard_input(demo_store, model_cache, stdin):
    argv = ["search", "--store", str(demo_store), "--cache", str(model_cache), "--user", "demo-ana", "--json"]
    code, direct, err, tb = run_cli([*argv, QUERY])
    assert (code, tb) == (0, None), err
    stdin(f"{QUERY}\n".encode())
    code, piped, err, tb = run_cli([*argv, "-"])
    assert (code, tb, err) == (0, None, "")
    assert piped == direct


def test_dash_reads_the_dataset_from_standard_input(tmp_path, model_cache, stdin, demo_store):
    stdin(DEMO_DATASET.read_bytes())
    code, out, err, tb = run_cli(["ingest", "-", "--store", str(tmp_path / "s"), "--cache", str(model_cache), "--json"])
    assert (code, tb) == (0, None), err
    assert json.loads(out)["users"] == 3
    _, users, _, _ = run_cli(["users", "--store", str(tmp_path / "s"), "--json"])
    _, expected, _, _ = run_cli(["users", "--store", str(demo_store), "--json"])
    assert users == expected


def test_quiet_verbose_and_log_file(tmp_path, model_cache, demo_store):
    store = tmp_path / "s"
    common = ["--store", str(store), "--cache", str(model_cache)]
    code, _, err, _ = run_cli(["ingest", str(DEMO_DATASET), *common, "-q"])
    assert (code, err) == (0, ""), err  # no progress bar
    log = tmp_path / "memsense.log"
    handlers = list(logging.getLogger().handlers)
    code, _, err, _ = run_cli(["search", *common, "--user", "demo-ana", "a question never asked", "--log-file", str(log)])
    assert (code, err) == (0, ""), err  # nothing but errors and warnings without -v
    assert " INFO memsense.model: embedding with onnxruntime" in log.read_text()
    code, _, err, _ = run_cli(["search", *common, "--user", "demo-ana", "another question never asked", "-v"])
    assert code == 0 and "memsense: info: embedding with onnxruntime" in err, err
    assert logging.getLogger().handlers == handlers, "the command left its log handlers behind"


def test_warnings_are_shown_not_silenced(monkeypatch, tmp_path):
    from core.cli import main as cli

    def warn(args):
        warnings.warn("a library's warning", UserWarning, stacklevel=1)
        print("done")

    monkeypatch.setattr(cli, "cmd_demo", warn)
    code, out, err, tb = run_cli(["demo"])
    assert (code, out, tb) == (0, "done\n", None)
    assert "a library's warning" in err and err.startswith("memsense: warning: "), err
    code, _, err, _ = run_cli(["demo", "-q"])
    assert (code, err) == (0, "")


@pytest.mark.parametrize("argv, code", [(["users", "--store", "{missing}"], 1), (["users"], 2), (["demo"], 0)])
def test_exit_codes(argv, code, tmp_path):
    argv = [a.replace("{missing}", str(tmp_path / "none")) for a in argv]
    assert run_cli(argv)[0] == code


def test_the_demo_command_names_the_packaged_files():
    code, out, _, _ = run_cli(["demo"])
    assert code == 0 and out.strip() == str(DEMO_DATASET)
    code, out, _, _ = run_cli(["demo", "--questions", "--json"])
    assert json.loads(out) == {"dataset": str(DEMO_DATASET), "questions": str(DEMO_DATASET.with_name("demo-questions.json"))}


@pytest.mark.parametrize("before, after", [(["-q"], []), ([], ["-q"]), (["-v"], ["-v"]), (["--log-file", "{log}"], [])])
def test_quiet_verbose_and_log_file_come_before_or_after_the_command(before, after, tmp_path, demo_store):
    log = tmp_path / "cli.log"
    argv = [a.replace("{log}", str(log)) for a in [*before, "users", "--store", str(demo_store), "--json", *after]]
    args = build_parser().parse_args(argv)
    assert args.quiet == ("-q" in argv) and args.verbose == argv.count("-v")
    assert args.log_file == (str(log) if "--log-file" in argv else None)
    code, out, err, tb = run_cli(argv)
    assert (code, tb) == (0, None), err
    assert "demo-ana" in json.loads(out)
    if "--log-file" in argv:
        assert log.is_file()


def test_an_unknown_option_before_the_command_is_named():
    code, _, err, _ = run_cli(["--bogus"])
    assert code == 2 and err.startswith("memsense: error: unrecognized arguments: --bogus"), err
    code, _, err, _ = run_cli(["-q", "--bogus=1", "users"])
    assert code == 2 and "--bogus=1" in err, err


def test_completion_help_names_every_shell_it_offers():
    import shtab

    (action,) = [a for a in build_parser()._actions if "--print-completion" in a.option_strings]
    assert set(action.choices) == set(shtab.SUPPORTED_SHELLS)
    assert all(shell in action.help for shell in action.choices), action.help


@pytest.mark.parametrize("argv", [["-vv", "demo"], ["-qv", "demo"], ["--verb", "demo"], ["--log-file={log}", "demo"]])
def test_options_before_the_command_are_read_as_argparse_reads_them(argv, tmp_path):
    argv = [a.replace("{log}", str(tmp_path / "log")) for a in argv]
    code, _, err, tb = run_cli(argv)
    assert (code, tb) == (0, None), err


def test_a_log_file_on_a_full_disk_is_one_warning_line_not_a_logging_traceback(capsys):
    """`--log-file /dev/full`: the command's output stands; one line at the end says the log was not written."""
    import argparse
    import io
    import logging

    from core.cli.arguments import logging_to

    stream = io.StringIO()
    args = argparse.Namespace(quiet=False, verbose=True, log_file="/dev/full")
    with logging_to(args, stream):
        for n in range(3):
            logging.getLogger("memsense.test").warning("record %d", n)
    lines = stream.getvalue().splitlines()
    assert lines[:3] == [f"memsense: warning: record {n}" for n in range(3)]
    assert lines[3:] == ["memsense: warning: the log file /dev/full was not written whole (No space left on device); "
                         "choose a path on a disk with room"]
    assert "Logging error" not in capsys.readouterr().err + stream.getvalue()
