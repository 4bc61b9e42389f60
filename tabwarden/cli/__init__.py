"""The front door: the ``tabwarden`` command line and everything only a person at the
terminal runs (install, status, the ceremonies, the demo). Nothing in the other rooms
imports from here."""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """``tabwarden`` (the console script) and ``python -m tabwarden``: the command line of
    ``tabwarden.cli.entry``, imported only when it runs, so importing one of the
    subcommand modules never pays for the parser."""
    from tabwarden.cli.entry import main as run

    return run(argv)
