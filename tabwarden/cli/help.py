"""How every ``tabwarden`` subcommand declares its help: a description and worked examples.

``add_command`` is the one way a subcommand parser is made, so each gets the same shape — a
one-line summary for the command list, a description saying what it does and what it never
does, and an ``examples:`` epilog of real command lines with what each does — and a test that
walks the parser (tests/cli/test_help.py) fails for a command without them. argparse only: this
module imports nothing else, so ``tabwarden --help`` stays cheap.
"""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Sequence
from typing import Any

__all__ = ["EXAMPLES_HEADING", "JSON_HELP", "add_command", "count", "examples_epilog", "wrap"]

EXAMPLES_HEADING = "examples:"

#: The ``--json`` option's help, the same for every command that has one.
JSON_HELP = "print the result as one JSON document on stdout (for scripts) instead of text"

_COLUMN = 40
_WIDTH = 92


def wrap(text: str) -> str:
    """Paragraphs (blank-line separated) refilled to the terminal width; a paragraph whose
    first line is indented (a table, a command) is kept exactly as written."""
    paragraphs = text.strip("\n").split("\n\n")
    return "\n\n".join(
        p
        if p.startswith(" ")
        else textwrap.fill(" ".join(p.split()), _WIDTH, break_on_hyphens=False)
        for p in paragraphs
    )


def examples_epilog(examples: Sequence[tuple[str, str]], notes: str = "") -> str:
    """``examples:`` then one ``  COMMAND   what it does`` line per example (long commands put
    the explanation on the next line), then ``notes``."""
    lines = [EXAMPLES_HEADING]
    for command, what in examples:
        if len(command) + 2 < _COLUMN - 1:
            lines.append(f"  {command:<{_COLUMN - 2}}{what}")
        else:
            lines.append(f"  {command}")
            lines.append(f"  {'':<{_COLUMN - 2}}{what}")
    text = "\n".join(lines) + "\n"
    return text + ("\n" + wrap(notes) + "\n" if notes else "")


def count(text: str) -> int:
    """An argparse ``type``: a whole number, 0 or more (a usage error otherwise)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is negative")
    return value


def add_command(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    *,
    summary: str,
    description: str,
    examples: Sequence[tuple[str, str]],
    notes: str = "",
    **kwargs: Any,
) -> argparse.ArgumentParser:
    """A subcommand parser with its summary (the command list), description and examples."""
    return sub.add_parser(
        name,
        help=summary,
        description=wrap(description),
        epilog=examples_epilog(examples, notes),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        **kwargs,
    )
