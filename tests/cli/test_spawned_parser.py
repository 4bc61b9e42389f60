"""``tabwarden host`` and ``tabwarden mcp`` are started by programs at every start (Chrome, an MCP
client): ``main`` builds only that command's parser for them (``entry.SPAWNED_COMMANDS``). What
they accept, refuse and print must be exactly what the whole parser gives, and the other
subcommands' modules must stay unimported."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys

import pytest

from tabwarden.cli import entry
from tabwarden.manifests import EXTENSION_ID

ORIGIN = f"chrome-extension://{EXTENSION_ID}/"

ARGVS = [
    ["host", "--browser", "chrome", ORIGIN],
    ["host", ORIGIN, "--parent-window=0"],
    ["host"],
    ["mcp", "--caps", "all"],
    ["mcp", "--caps", "input,files", "--caps", "read"],
    # refused: what each parser says must match, word for word
    ["mcp", "--caps", "nonsense"],
    ["mcp", "--caps", ""],
    ["mcp", "extra"],
    ["host", "--browser"],
    ["host", "--unknown"],
    ["host", "--help"],
    ["mcp", "--help"],
]


def _parse(parser_of: str, argv: list[str]) -> tuple[object, int | None, str, str]:
    if parser_of == "whole":
        parser = entry.build_parser()
    else:
        parser, sub = entry._root_parser()
        entry.SPAWNED_COMMANDS[argv[0]](sub)
    out, err = io.StringIO(), io.StringIO()
    status: int | None = None
    parsed: object = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            parsed = vars(parser.parse_args(argv))
        except SystemExit as exc:
            status = int(exc.code or 0)
    return parsed, status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("argv", ARGVS, ids=" ".join)
def test_a_spawned_command_parses_exactly_as_the_whole_parser_does(argv: list[str]) -> None:
    whole = _parse("whole", argv)
    alone = _parse("alone", argv)
    assert alone == whole
    if argv[-1] != "--help" and whole[1] is None:
        assert whole[0]["func"] in (entry._cmd_host, entry._cmd_mcp)  # type: ignore[index]


def test_the_whole_parser_holds_every_spawned_command() -> None:
    parser = entry.build_parser()
    names = {
        name
        for action in parser._actions
        if hasattr(action, "choices") and isinstance(action.choices, dict)
        for name in action.choices
    }
    assert set(entry.SPAWNED_COMMANDS) == {"host", "mcp"} and set(entry.SPAWNED_COMMANDS) <= names


@pytest.mark.parametrize("command", ["host", "mcp"])
def test_a_spawned_command_imports_no_other_subcommand(command: str) -> None:
    # `--help` parses and exits before the command runs: what is imported is the parser's cost.
    # Run isolated (-I), as Chrome and an agent's spawn end up, so `mcp` is not re-executed.
    code = (
        "import sys\n"
        "from tabwarden.cli.entry import main\n"
        f"try:\n    main([{command!r}, '--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = ['tabwarden.cli.commands', 'tabwarden.cli.setup', 'tabwarden.cli.tabs', "
        "'tabwarden.cli.terminal_tools', 'tabwarden.cli.install']\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout
    # The control: the whole parser does import them, so the check above can fail.
    control = code.replace(f"main([{command!r}, '--help'])", "main(['install', '--help'])")
    done = subprocess.run(
        [sys.executable, "-I", "-c", control],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.strip().splitlines()[-1] != "[]", done.stdout


@pytest.mark.parametrize("command", sorted(entry.ISOLATED_COMMANDS))
def test_an_isolated_command_re_executes_before_it_parses(command: str) -> None:
    """A command that runs as ``python -I -m tabwarden`` re-executes first, so its parser is
    built once, in the isolated process. ``-X importtime`` is not passed on by the re-execution:
    the first process's imports alone are on stderr."""
    words = [command, "--help"]
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "tabwarden", *words],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"tabwarden {command}" in done.stdout  # the isolated process printed its help
    assert "tabwarden.cli.help" not in done.stderr
    # The control: a command that runs in place parses in the first process.
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "tabwarden", "install", "--help"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert "tabwarden.cli.help" in done.stderr
