"""The one append-only table of machine codes: Python and the extension read the same rows."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tabwarden.errors import error_table

REPO = Path(__file__).resolve().parent.parent
ROW = re.compile(r'^\s*\["([a-z_]+)",\s*(\d+),\s*"((?:[^"\\]|\\.)*)"\],?\s*$')


def _js_rows() -> list[tuple[str, int, str]]:
    text = (REPO / "extension/lib/error-codes.js").read_text("utf-8")
    return [
        (m.group(1), int(m.group(2)), json.loads(f'"{m.group(3)}"'))
        for line in text.splitlines()
        if (m := ROW.match(line))
    ]


def test_extension_table_matches_python_table_exactly() -> None:
    python_rows = [(code, n, hint) for code, (n, hint) in error_table().items()]
    assert _js_rows() == python_rows


def test_numbers_are_unique_and_dense_from_one() -> None:
    numbers = [n for n, _ in error_table().values()]
    assert numbers == list(range(1, len(numbers) + 1))


def test_codes_the_design_names_exist() -> None:
    for code in (
        "extension_not_connected",
        "client_not_paired",
        "origin_not_approved",
        "confirm_denied",
        "killed",
        "policy_denied",
        "timeout",
        "busy",
    ):
        assert code in error_table()
        assert error_table()[code][1]  # every code has a hint
