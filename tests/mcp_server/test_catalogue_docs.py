"""The README's Tools table and docs/protocol.md's action catalogue say what the catalogue says.

A tool added to the catalogue and not documented, documented and not served, or documented with
another gate or risk than it is declared with, fails here: a person choosing what to allow reads
the README, not ``mcp_server/catalogue/``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tabwarden.mcp_server.catalogue import BY_NAME, RELAYED_ACTIONS, Gate, Risk

REPO = Path(__file__).resolve().parents[2]
NAME = re.compile(r"`([a-z][a-z0-9_]*)`")


def section(path: Path, heading: str) -> str:
    text = path.read_text("utf-8")
    start = text.index(f"\n{heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def table_rows(text: str) -> list[list[str]]:
    """The body rows of the Markdown tables in ``text`` whose first cell names something."""
    rows = []
    for line in text.splitlines():
        if line.startswith("| `"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split(" | ")])
    return rows


def label(cell: str, choices: list[str]) -> str:
    """The vocabulary word ``cell`` starts with (after Markdown bold), or the cell itself."""
    plain = cell.replace("**", "")
    for choice in sorted(choices, key=len, reverse=True):
        if plain == choice or re.match(rf"{re.escape(choice)}[\s:;(,]", plain):
            return choice
    return cell


def readme_rows() -> dict[str, tuple[str, str]]:
    documented: dict[str, tuple[str, str]] = {}
    for cells in table_rows(section(REPO / "README.md", "## Tools")):
        assert len(cells) == 4, cells
        names, _what, gate, risk = cells
        for name in NAME.findall(names):
            assert name not in documented, f"{name} is in the README's Tools table twice"
            gates = [g.value for g in Gate]
            documented[name] = (label(gate, gates), label(risk, [r.value for r in Risk]))
    return documented


def test_readme_tools_table_lists_every_tool_and_no_other() -> None:
    assert sorted(readme_rows()) == sorted(BY_NAME)


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_readme_gate_and_risk_match_the_catalogue(name: str) -> None:
    spec = BY_NAME[name]
    assert readme_rows().get(name) == (spec.gate.value, spec.risk.value)


def test_readme_explains_every_gate() -> None:
    legend = section(REPO / "README.md", "## Tools")
    for gate in Gate:
        assert f"- `{gate.value}` — " in legend, gate


def test_protocol_catalogue_lists_every_relayed_action_and_no_other() -> None:
    rows = table_rows(
        section(REPO / "docs/protocol.md", "## The page-tool catalogue (actions and their shapes)")
    )
    listed = [name for cells in rows for name in NAME.findall(cells[0])]
    assert len(listed) == len(set(listed)), "an action is listed twice"
    assert sorted(listed) == sorted(RELAYED_ACTIONS)


def test_protocol_catalogue_states_confirm_and_off_by_default() -> None:
    text = section(
        REPO / "docs/protocol.md", "## The page-tool catalogue (actions and their shapes)"
    )
    for cells in table_rows(text):
        guard = cells[-1].replace("**", "").lower()
        for name in NAME.findall(cells[0]):
            gate = BY_NAME[name].gate
            if gate is Gate.CONFIRM:
                assert "confirm" in guard, name
            if gate is Gate.OFF_BY_DEFAULT:
                assert guard.startswith("off unless") and "confirm every call" in guard, name
