"""The troubleshooting table (docs/troubleshooting.md), rendered from the one error-code table.

Every code in ``protocol/error_codes.json`` — the numbered ones an MCP tool result or the
extension shows, and the ``cliOnly`` ones only a terminal shows — becomes one row: the code,
where a person meets it, and its hint (what to do). The hints are written once, in that table;
docs/troubleshooting.md holds a generated copy between two markers, and
tests/cli/test_troubleshooting.py fails when the copy differs from what this renders (a new code
without its row, an edited hint). Regenerate with
``python -m tabwarden.cli.troubleshooting --write docs/troubleshooting.md``. It never reads anything
but the packaged table and the file it is given.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from tabwarden.errors import cli_only_table, error_table, retry_table

__all__ = ["BEGIN", "END", "render", "replace_block"]

BEGIN = (
    "<!-- troubleshooting: generated from protocol/error_codes.json by "
    "`python -m tabwarden.cli.troubleshooting --write docs/troubleshooting.md`; "
    "edit that table, not these rows -->"
)
END = "<!-- troubleshooting: end -->"

#: The ``retry`` column in a person's words: may the call that failed be made again?
_RETRY_WORDS = {
    "safe": "yes",
    "after_check": "after checking the page (a read: yes)",
    "unsafe": "not without the person",
}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render() -> str:
    """The generated block, markers included: every code, numbered ones first."""
    lines = [BEGIN, "| code | what to do | repeat the call? |", "|---|---|---|"]
    retry = retry_table()
    for code, (_number, hint) in error_table().items():
        lines.append(
            f"| `{code}` | {_cell(hint)} | {_RETRY_WORDS.get(retry[code], 'after checking')} |"
        )
    for code, (exit_status, hint) in cli_only_table().items():
        lines.append(f"| `{code}` | {_cell(hint)} | terminal only (exit status {exit_status}) |")
    lines.append(END)
    return "\n".join(lines)


def replace_block(text: str) -> str:
    """``text`` with the block between the markers (markers included) rendered afresh."""
    start = text.find(BEGIN)
    end = text.find(END)
    if start == -1 or end == -1 or end < start:
        raise ValueError("the troubleshooting markers are missing or out of order")
    return text[:start] + render() + text[end + len(END) :]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tabwarden.cli.troubleshooting",
        description="Check (default) or rewrite the generated troubleshooting table in a file.",
    )
    parser.add_argument(
        "path", type=Path, help="the file holding the markers (docs/troubleshooting.md)"
    )
    parser.add_argument("--write", action="store_true", help="rewrite the block in place")
    args = parser.parse_args(argv)
    text = args.path.read_text("utf-8")
    fresh = replace_block(text)
    if args.write:
        if fresh != text:
            args.path.write_text(fresh, "utf-8")
        return 0
    if fresh != text:
        print(
            f"{args.path}: the troubleshooting table is stale; rerun with --write", file=sys.stderr
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
