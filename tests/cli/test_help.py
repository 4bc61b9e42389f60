"""Every ``tabwarden`` subcommand's ``--help`` teaches: a description, every option and argument
explained, and an example of the command itself — walked from the real parser, so a subcommand
added without its help fails here. The text is read as a person gets it: ``tabwarden … --help``
run as a process.
"""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from tabwarden.cli.entry import build_parser
from tabwarden.cli.help import EXAMPLES_HEADING


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every (sub)command under ``parser`` with its words, depth first."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found.append(((*path, name), child))
                found.extend(_commands(child, (*path, name)))
    return found


COMMANDS = _commands(build_parser())
IDS = [" ".join(words) for words, _ in COMMANDS]


def test_the_walk_finds_the_commands_a_person_uses() -> None:
    names = set(IDS)
    for expected in (
        "clients", "revoke", "kill", "unkill", "audit", "policy", "policy show", "policy set",
        "policy restrict", "policy history", "policy rollback", "tabs", "pair", "pair-client",
        "doctor", "status", "mcp", "host", "install", "uninstall", "demo",
    ):  # fmt: skip
        assert expected in names, sorted(names)


@pytest.mark.parametrize(("words", "parser"), COMMANDS, ids=IDS)
def test_every_command_has_a_description_an_example_and_explained_options(
    words: tuple[str, ...], parser: argparse.ArgumentParser
) -> None:
    command = " ".join(words)
    assert parser.description and len(parser.description.split()) >= 8, command
    epilog = parser.epilog or ""
    assert EXAMPLES_HEADING in epilog, f"`tabwarden {command} --help` shows no example"
    examples = epilog.split(EXAMPLES_HEADING, 1)[1]
    assert f"tabwarden {command}" in examples, f"no example runs `tabwarden {command}`"
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        name = "/".join(action.option_strings) or action.dest
        assert action.help and action.help.strip(), f"`tabwarden {command}`: {name} unexplained"


@pytest.mark.parametrize(("words", "parser"), COMMANDS, ids=IDS)
def test_help_as_a_person_runs_it_names_the_command_they_asked_about(
    words: tuple[str, ...], parser: argparse.ArgumentParser
) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tabwarden", *words, "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"usage: tabwarden {' '.join(words)} "), proc.stdout[:200]
    assert EXAMPLES_HEADING in proc.stdout
    assert parser.description is not None
    assert " ".join(parser.description.split()[:6]) in " ".join(proc.stdout.split())


def test_doctor_help_is_doctors_own() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tabwarden", "doctor", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: tabwarden doctor ")
    assert "usage: tabwarden status" not in proc.stdout


def test_a_negative_limit_is_a_usage_error_not_a_traceback() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tabwarden", "audit", "--limit", "-3"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "negative" in proc.stderr and "Traceback" not in proc.stderr
