"""The checks the project configures, run as part of the suite (so `.ci/run` runs them): ruff's
lint and format check over the whole tree, and mypy --strict over every package under its import
name (``scripts/typecheck``). A missing tool fails: it is installed by ``scripts/setup``."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, cwd=ROOT, capture_output=True, text=True, timeout=600, env={**os.environ}
    )


def test_ruff_lint_is_clean() -> None:
    done = _run(str(BIN / "ruff"), "check", "--no-cache", "--output-format", "concise", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_format_is_clean() -> None:
    done = _run(str(BIN / "ruff"), "format", "--no-cache", "--check", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_strict_is_clean() -> None:
    done = _run("bash", str(ROOT / "scripts" / "typecheck"))
    assert done.returncode == 0, done.stdout + done.stderr


def late_waiters(source: str) -> list[int]:
    """Lines where a Playwright ``wait_for_event`` is called but not awaited on the spot. Its
    listener is only added when the coroutine first runs, so one kept to await after an action
    misses an event the action already fired (the confirm window's "close" did, in CI). Arm it
    with ``async with page.expect_event(...)`` around the action instead."""
    tree = ast.parse(source)
    awaited = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Await)}
    return sorted(
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "wait_for_event"
        and id(node) not in awaited
    )


def test_every_playwright_waiter_is_armed_before_the_action_it_waits_for() -> None:
    late = {
        str(path.relative_to(ROOT)): lines
        for path in sorted((ROOT / "tests").rglob("*.py"))
        if (lines := late_waiters(path.read_text()))
    }
    assert late == {}, late


def test_a_waiter_kept_for_later_is_found() -> None:
    kept = 'closing = w.wait_for_event("close")\nawait press(w)\nawait closing\n'
    armed = 'async with w.expect_event("close"):\n    await press(w)\n'
    at_once = 'page = await w.wait_for_event("page")\n'
    assert late_waiters(kept) == [1]
    assert late_waiters(armed) == late_waiters(at_once) == []


def own_event_loops(source: str) -> list[int]:
    """Lines where a module runs an event loop of its own (``asyncio.run``). A browser test is an
    ``async def`` test on the fixtures of tests/browser/conftest.py, under the one hang guard
    and the waits of tests/deadline.py (tests/README.md, "Browser tests"); a loop of its own
    would bring its own setup ritual and its own deadline back."""
    tree = ast.parse(source)
    return sorted(
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "run"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "asyncio"
    )


def test_no_browser_test_runs_an_event_loop_of_its_own() -> None:
    own = {
        str(path.relative_to(ROOT)): lines
        for path in sorted((ROOT / "tests" / "browser").rglob("*.py"))
        if (lines := own_event_loops(path.read_text()))
    }
    assert own == {}, own


def test_an_event_loop_of_its_own_is_found() -> None:
    old = "def test_x() -> None:\n    asyncio.run(asyncio.wait_for(scenario(), 60))\n"
    new = "async def test_x(agent: Client) -> None:\n    await until('x', check)\n"
    assert own_event_loops(old) == [2]
    assert own_event_loops(new) == []


#: An issue (or task) number in code: it means nothing to a reader of the code, and the issue
#: tracker's numbering is not the project's. Say what the code does and why instead.
ISSUE_NUMBER = re.compile(r"\b(?:issue|task)s?\s*#?\d+\b", re.IGNORECASE)
CODE_DIRS = (
    "bench",
    "extension",
    "fuzz",
    "host",
    "mcp_server",
    "protocol",
    "scripts",
    "tabwarden",
    "tests",
    "trust",
)
CODE_SUFFIXES = {".py", ".js", ".mjs", ".html", ".css", ".sh", ""}


def issue_numbers(text: str) -> list[int]:
    """Lines of ``text`` that name an issue by its number."""
    return [n for n, line in enumerate(text.splitlines(), 1) if ISSUE_NUMBER.search(line)]


def test_no_code_names_an_issue_by_number() -> None:
    tracked = _run("git", "ls-files", *CODE_DIRS).stdout.split()
    found = {
        name: lines
        for name in tracked
        if Path(name).suffix in CODE_SUFFIXES
        and "node_modules" not in name
        and (ROOT / name).is_file()
        and (lines := issue_numbers((ROOT / name).read_text(errors="replace")))
    }
    assert not found, f"issue numbers in code (say what and why instead): {found}"


def test_an_issue_number_is_found() -> None:
    issue, task = "iss" + "ue", "ta" + "sk"  # (split, so this file names none itself)
    sample = f'"""Actionability ({issue} 31): ..."""\nx = 1  # see {task} #7\nok = "t{issue} 3"'
    assert issue_numbers(sample) == [1, 2]
