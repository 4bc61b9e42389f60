"""Every promise SECURITY.md lists is held by a test; docs/security/ names only tests that exist.

SECURITY.md lists each promise on one line under a stable ID (``- H4-07 …``); docs/security/
holds the same ID as a table row with its guard and the tests that prove it. A test that proves a
promise carries ``@pytest.mark.promise("H4-07")``. This module fails when a promise has no marked
test, when a marker names an ID SECURITY.md does not list, when a marked test is not one its
promise's row names as a proof, when SECURITY.md and docs/security/ disagree on the IDs (promises
or residual risks), or when a row names a test or a file that does not exist. The test sources are
read with ``ast``: nothing is imported, so the browser tests are checked without a browser.
"""

from __future__ import annotations

import ast
import functools
import os
import re
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SECURITY = REPO / "SECURITY.md"
DETAIL = REPO / "docs" / "security"
RESIDUALS = DETAIL / "residual-risks.md"
#: The test that runs the extension's Node tests: it carries the promises only they prove.
NODE_SUITE = ("tests/extension/test_node_suite.py", "test_extension_unit_tests_pass_under_node")

PROMISE_ID = r"(?:H[1-4]|TR|PR|BP|IN|EV)-\d{2}"
LINE = re.compile(rf"^- ({PROMISE_ID}) \S", re.M)
RESIDUAL_LINE = re.compile(r"^- (RR-\d{2}) \S", re.M)
ROW = re.compile(rf"^\| ({PROMISE_ID}) \| (.*)$", re.M)
RESIDUAL_PARAGRAPH = re.compile(r"^- \*\*(RR-\d{2})\*\* \S", re.M)
#: A backticked path (``tests/…`` or ``fuzz/…``), optionally ``::test_name`` (``…`` = a prefix);
#: a backticked ``::test_name`` or bare ``test_name`` refers to the file named last before it.
REFERENCE = re.compile(
    r"`(?:(?P<path>(?:tests|fuzz)/[\w/.-]+\.\w+)(?:::(?P<name>test_\w+)(?P<cut>…)?)?"
    r"|(?:::)?(?P<more>test_\w+)(?P<more_cut>…)?)`"
)
NODE_FILE = re.compile(r"`(?:tests/extension/)?([\w-]+\.test\.mjs)`")


def _section(text: str, start: str, end: str) -> str:
    begin = text.index(start)
    return text[begin : text.index(end, begin)]


def listed_promises() -> list[str]:
    text = SECURITY.read_text("utf-8")
    return LINE.findall(_section(text, "\n## Promises", "\n## Accepted residual risks"))


def listed_residuals() -> list[str]:
    text = SECURITY.read_text("utf-8")
    return RESIDUAL_LINE.findall(
        _section(text, "\n## Accepted residual risks", "\n## Out of scope")
    )


def detail_rows() -> dict[str, list[tuple[str, str]]]:
    """ID → [(area file, row text)] over docs/security/."""
    rows: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for path in sorted(DETAIL.glob("*.md")):
        for found in ROW.finditer(path.read_text("utf-8")):
            rows[found.group(1)].append((path.name, found.group(2)))
    return rows


def references(row: str) -> list[tuple[str, str | None, bool]]:
    """(path, test name or None for the whole file, name is a prefix) for every test a row names."""
    found: list[tuple[str, str | None, bool]] = []
    last: str | None = None
    for ref in REFERENCE.finditer(row):
        if ref.group("path"):
            last = ref.group("path")
            found.append((last, ref.group("name"), bool(ref.group("cut"))))
        elif last is not None and last.endswith(".py"):
            found.append((last, ref.group("more"), bool(ref.group("more_cut"))))
    return found


def defined_tests(path: Path) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    tree = ast.parse(path.read_text("utf-8"), filename=str(path))
    return {
        node.name: node
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test_")
    }


def _promise_ids(decorator: ast.expr) -> list[str] | None:
    """The IDs of a ``@pytest.mark.promise(...)`` decorator, None for any other decorator."""
    if not (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)):
        return None
    func = decorator.func
    if not (
        func.attr == "promise"
        and isinstance(func.value, ast.Attribute)
        and func.value.attr == "mark"
        and isinstance(func.value.value, ast.Name)
        and func.value.value.id == "pytest"
    ):
        return None
    ids = [arg.value for arg in decorator.args if isinstance(arg, ast.Constant)]
    assert len(ids) == len(decorator.args) and decorator.args and not decorator.keywords, (
        f"line {decorator.lineno}: a promise marker takes literal IDs only"
    )
    assert all(isinstance(one, str) for one in ids), f"line {decorator.lineno}: IDs are strings"
    return [str(one) for one in ids]


def python_test_files() -> list[Path]:
    found: list[Path] = []
    for folder, subfolders, files in os.walk(REPO / "tests"):
        subfolders[:] = [one for one in subfolders if one not in ("node_modules", "__pycache__")]
        found += [Path(folder) / one for one in files if one.endswith(".py")]
    return sorted(found)


@functools.cache
def marked_tests() -> dict[tuple[str, str], list[str]]:
    """(test file, test name) → the promise IDs it is marked with, over every file under tests/."""
    marks: dict[tuple[str, str], list[str]] = {}
    for path in python_test_files():
        for name, node in defined_tests(path).items():
            ids = [one for dec in node.decorator_list for one in (_promise_ids(dec) or [])]
            if ids:
                marks[(path.relative_to(REPO).as_posix(), name)] = ids
    return marks


def test_security_md_and_docs_security_list_the_same_promises_and_residuals() -> None:
    listed = listed_promises()
    assert len(listed) > 100, "SECURITY.md's promise lines were not found"
    assert len(listed) == len(set(listed)), "an ID is listed twice in SECURITY.md"
    rows = detail_rows()
    twice = {pid: places for pid, places in rows.items() if len(places) > 1}
    assert not twice, f"an ID has more than one row in docs/security/: {twice}"
    assert set(listed) == set(rows), (
        f"only in SECURITY.md: {sorted(set(listed) - set(rows))}; "
        f"only in docs/security/: {sorted(set(rows) - set(listed))}"
    )
    residuals = listed_residuals()
    assert len(residuals) == len(set(residuals)) and residuals, "residual IDs missing or twice"
    paragraphs = RESIDUAL_PARAGRAPH.findall(RESIDUALS.read_text("utf-8"))
    assert len(paragraphs) == len(set(paragraphs))
    assert set(residuals) == set(paragraphs), (
        f"residuals only in SECURITY.md: {sorted(set(residuals) - set(paragraphs))}; "
        f"only in residual-risks.md: {sorted(set(paragraphs) - set(residuals))}"
    )


def test_every_promise_is_held_by_a_marked_test() -> None:
    held = {pid for ids in marked_tests().values() for pid in ids}
    missing = [pid for pid in listed_promises() if pid not in held]
    assert not missing, (
        f"no test carries @pytest.mark.promise for {missing}: mark the test docs/security/ names"
    )


def test_every_marker_names_a_listed_promise() -> None:
    listed = set(listed_promises())
    unknown = {
        f"{path}::{name}": [pid for pid in ids if pid not in listed]
        for (path, name), ids in marked_tests().items()
        if any(pid not in listed for pid in ids)
    }
    assert not unknown, f"markers name IDs SECURITY.md does not list: {unknown}"


def _names(row: str, path: str, name: str) -> bool:
    for ref_path, ref_name, cut in references(row):
        if ref_path != path:
            continue
        if ref_name is None or ref_name == name or (cut and name.startswith(ref_name)):
            return True
    return (path, name) == NODE_SUITE and bool(NODE_FILE.search(row))


def test_each_marked_test_is_named_as_a_proof_of_its_promise() -> None:
    rows = detail_rows()
    stray = [
        f"{path}::{name} → {pid}"
        for (path, name), ids in marked_tests().items()
        for pid in ids
        if pid in rows and not any(_names(row, path, name) for _, row in rows[pid])
    ]
    assert not stray, f"marked, but not named in the promise's row in docs/security/: {stray}"


def test_every_test_docs_security_names_exists() -> None:
    functions: dict[str, set[str]] = {}
    broken: list[str] = []
    for path in sorted(DETAIL.glob("*.md")):
        text = path.read_text("utf-8")
        for ref_path, name, cut in references(text):
            if not (REPO / ref_path).is_file():
                broken.append(f"{path.name}: {ref_path} (no such file)")
                continue
            if name is None:
                continue
            if ref_path not in functions:
                functions[ref_path] = set(defined_tests(REPO / ref_path))
            there = functions[ref_path]
            if not (name in there or (cut and any(one.startswith(name) for one in there))):
                broken.append(f"{path.name}: {ref_path}::{name}")
        for node_file in NODE_FILE.findall(text):
            if not (REPO / "tests" / "extension" / node_file).is_file():
                broken.append(f"{path.name}: tests/extension/{node_file} (no such file)")
    assert not broken, f"docs/security/ names tests that do not exist: {broken}"


def test_the_checks_above_catch_what_they_are_for() -> None:
    """The parsers find a broken reference, an unnamed marked test and an unlisted marker."""
    row = "`tests/trust/test_tamper.py::test_hand_added_kill_event_is_honoured`, `::test_gone…`"
    assert references(row) == [
        ("tests/trust/test_tamper.py", "test_hand_added_kill_event_is_honoured", False),
        ("tests/trust/test_tamper.py", "test_gone", True),
    ]
    assert _names(row, "tests/trust/test_tamper.py", "test_gone_parent")
    assert not _names(row, "tests/trust/test_tamper.py", "test_other")
    assert not _names(row, "tests/trust/test_store.py", "test_hand_added_kill_event_is_honoured")
    assert _names("`tests/extension/session.test.mjs`", *NODE_SUITE)
    assert not _names("`tests/host/test_bridge.py`", *NODE_SUITE)
    decorator = ast.parse('@pytest.mark.promise("H1-01", "ZZ-01")\ndef test_x(): pass').body[0]
    assert isinstance(decorator, ast.FunctionDef)
    assert _promise_ids(decorator.decorator_list[0]) == ["H1-01", "ZZ-01"]
    assert "ZZ-01" not in listed_promises()
