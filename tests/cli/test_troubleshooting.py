"""The troubleshooting table (docs/troubleshooting.md) holds a row for every error code, with the
hint the code table holds: generated from protocol/error_codes.json
(tabwarden/cli/troubleshooting.py), so a code added without its row — or a hint edited in one
place only — fails here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tabwarden.cli.troubleshooting import BEGIN, END, render
from tabwarden.errors import cli_only_table, error_table

TABLE = Path(__file__).resolve().parents[2] / "docs" / "troubleshooting.md"


def _block() -> str:
    text = TABLE.read_text("utf-8")
    assert text.count(BEGIN) == 1 and text.count(END) == 1
    return text[text.index(BEGIN) : text.index(END) + len(END)]


def test_the_troubleshooting_table_is_the_generated_one() -> None:
    assert _block() == render(), (
        "docs/troubleshooting.md's table is stale: "
        "python -m tabwarden.cli.troubleshooting --write docs/troubleshooting.md"
    )


def test_every_code_has_one_row_with_its_hint() -> None:
    rows: dict[str, str] = {}
    for line in _block().splitlines():
        if line.startswith("| `"):
            code = line.split("`", 2)[1]
            assert code not in rows, f"{code} has two rows"
            rows[code] = line
    codes = {**{c: h for c, (_n, h) in error_table().items()},
             **{c: h for c, (_e, h) in cli_only_table().items()}}  # fmt: skip
    assert sorted(rows) == sorted(codes)
    for code, hint in codes.items():
        assert hint.replace("|", "\\|") in rows[code], code


def test_the_check_command_fails_on_a_stale_copy(tmp_path: Path) -> None:
    stale = tmp_path / "troubleshooting.md"
    text = TABLE.read_text("utf-8")
    first = next(iter(error_table()))
    stale.write_text(text.replace(f"| `{first}` |", "| `renamed_code` |", 1), "utf-8")
    check = [sys.executable, "-m", "tabwarden.cli.troubleshooting", str(stale)]
    proc = subprocess.run(check, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "stale" in proc.stderr
    fixed = subprocess.run([*check, "--write"], capture_output=True, text=True, timeout=60)
    assert fixed.returncode == 0, fixed.stderr
    assert stale.read_text("utf-8") == text
    assert subprocess.run(check, capture_output=True, timeout=60).returncode == 0
