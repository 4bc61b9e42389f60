"""The one append-only table of machine codes: Python and the extension read the same rows."""

from __future__ import annotations

import ast
import importlib
import json
import re
from pathlib import Path
from typing import Any

from tabwarden.errors import TabwardenError, cli_only_table, error_table, known_codes
from tabwarden.protocol import codes

REPO = Path(__file__).resolve().parents[2]
ROW = re.compile(r'^\s*\["([a-z_]+)",\s*(\d+),\s*"((?:[^"\\]|\\.)*)"\],?\s*$')


def _js_rows() -> list[tuple[str, int, str]]:
    text = (REPO / "extension/shared/error-codes.js").read_text("utf-8")
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


# --- the CLI-only list, the constants module, and every code in the source ------------------

PY_ROOTS = ("tabwarden", "host", "mcp_server", "trust", "protocol")
#: Calls whose argument at this position is a machine code.
CODE_ARGUMENT = {"error_result": 0, "refused": 0, "BridgeError": 0, "error_reply": 1}
CODE_SHAPE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")


def _document() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((REPO / "protocol/error_codes.json").read_text("utf-8"))
    return doc


def test_cli_only_codes_are_separate_from_the_numbered_rows() -> None:
    cli = cli_only_table()
    assert cli and not set(cli) & set(error_table())
    rows = _document()["cliOnly"]
    assert len({r["code"] for r in rows}) == len(rows)  # no duplicates
    for code, (exit_status, hint) in cli.items():
        assert exit_status in (1, 2, 3, 4), code  # the statuses the CLI epilog documents
        assert hint.strip(), code


def test_the_constants_module_is_the_table() -> None:
    named = {
        name: value
        for name, value in vars(codes).items()
        if name.isupper() and isinstance(value, str)
    }
    assert codes.WIRE_CODES == tuple(error_table())
    assert codes.CLI_ONLY_CODES == tuple(cli_only_table())
    assert set(named.values()) == set(known_codes())
    assert all(name == value.upper() for name, value in named.items())


def _all_modules() -> list[str]:
    names = []
    for package, folder in (
        ("tabwarden", "tabwarden"),
        ("tabwarden.host", "host"),
        ("tabwarden.mcp_server", "mcp_server"),
        ("tabwarden.trust", "trust"),
        ("tabwarden.protocol", "protocol"),
    ):
        for path in sorted((REPO / folder).rglob("*.py")):  # subpackages too (tabwarden/cli/, …)
            if path.stem == "__main__":
                continue
            parts = path.relative_to(REPO / folder).with_suffix("").parts
            names.append(".".join((package, *parts)).removesuffix(".__init__"))
    return names


def _subclasses(cls: type[TabwardenError]) -> list[type[TabwardenError]]:
    out: list[type[TabwardenError]] = []
    for sub in cls.__subclasses__():
        out += [sub, *_subclasses(sub)]
    return out


def test_every_error_class_has_a_code_from_the_table() -> None:
    for name in _all_modules():
        importlib.import_module(name)
    classes: list[type[TabwardenError]] = [TabwardenError, *_subclasses(TabwardenError)]
    assert len(classes) > 30  # the walk found the codebase, not just this module's imports
    cli = cli_only_table()
    wrong = []
    for cls in classes:
        where = f"{cls.__module__}.{cls.__qualname__}"
        if cls.code not in known_codes():
            wrong.append(f"{where}: code {cls.code!r} is not in protocol/error_codes.json")
        elif cls.code in cli and cls.code != "internal_error":
            exit_status, hint = cli[cls.code]
            if cls.exit_status != exit_status:
                wrong.append(f"{where}: exit {cls.exit_status}, the table says {exit_status}")
            if cls.hint != hint:
                wrong.append(f"{where}: its default hint differs from the table's")
    assert not wrong, "\n".join(wrong)


def code_literals(source: str, filename: str) -> list[tuple[str, int, str]]:
    """(file, line, value) for every machine code spelled as a string literal in ``source``:
    ``code = "x"``, ``code="x"``, ``{"code": "x"}``, ``code == "x"`` and the code argument of
    ``error_result`` / ``error_reply`` / ``refused`` / ``BridgeError``."""
    found: list[tuple[str, int, str]] = []

    def literal(node: ast.AST | None) -> None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append((filename, node.lineno, node.value))

    def is_code(node: ast.AST) -> bool:
        return (isinstance(node, ast.Name) and node.id == "code") or (
            isinstance(node, ast.Attribute) and node.attr == "code"
        )

    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Assign) and any(is_code(t) for t in node.targets):
            literal(node.value)
        elif isinstance(node, ast.AnnAssign) and is_code(node.target):
            literal(node.value)
        elif isinstance(node, ast.keyword) and node.arg == "code":
            literal(node.value)
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and key.value == "code":
                    literal(value)
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(is_code(side) for side in sides):
                for side in sides:
                    literal(side)
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            index = CODE_ARGUMENT.get(name or "")
            if index is not None and len(node.args) > index:
                literal(node.args[index])
    return sorted(hit for hit in found if CODE_SHAPE.match(hit[2]))


def _python_sources() -> list[Path]:
    return sorted(p for root in PY_ROOTS for p in (REPO / root).rglob("*.py"))


def test_the_scanner_finds_each_shape_and_names_file_and_line() -> None:
    source = (
        "class E:\n"
        '    code = "made_up_one"\n'
        'x = Refusal(code="made_up_two")\n'
        'y = {"code": "made_up_three"}\n'
        'if err.code == "made_up_four": pass\n'
        'error_reply(rid, "made_up_five", "a message")\n'
        'error_result("made_up_six", "a message")\n'
        'code = "not a code"\n'
    )
    hits = code_literals(source, "demo.py")
    assert [(line, value) for _, line, value in hits] == [
        (2, "made_up_one"),
        (3, "made_up_two"),
        (4, "made_up_three"),
        (5, "made_up_four"),
        (6, "made_up_five"),
        (7, "made_up_six"),
    ]


def test_every_code_literal_in_the_python_source_is_in_the_table() -> None:
    outside = []
    for path in _python_sources():
        rel = path.relative_to(REPO).as_posix()
        for _, line, value in code_literals(path.read_text("utf-8"), rel):
            if value not in known_codes():
                outside.append(f"{rel}:{line}: {value!r} is not in protocol/error_codes.json")
    assert not outside, "\n".join(outside)


def test_every_source_file_spells_codes_with_the_constants() -> None:
    """A typo in a constant's name fails at import and in mypy; a typo in a literal would only
    become ``internal_error`` at run time. So no source file spells a code as a literal."""
    literals = [
        f"{rel}:{line}: use tabwarden.protocol.codes.{value.upper()}, not {value!r}"
        for path in _python_sources()
        for rel in [path.relative_to(REPO).as_posix()]
        for _, line, value in code_literals(path.read_text("utf-8"), rel)
    ]
    assert not literals, "\n".join(literals)


def test_every_code_says_what_a_retry_risks() -> None:
    from tabwarden.errors import RETRY_VALUES, retry_for, retry_table

    table = retry_table()
    assert set(table) == set(error_table())
    assert set(table.values()) <= RETRY_VALUES
    # The outcome is unknown: safe for a read, not for an action.
    for code in ("timeout", "internal_error", "extension_not_connected", "message_too_large"):
        assert retry_for(code, read_only=True) == "safe", code
        assert retry_for(code, read_only=False) == "after_check", code
    # Refused before anything ran: safe either way.
    for code in ("killed", "policy_denied", "bad_ref", "busy", "origin_not_approved"):
        assert retry_for(code, read_only=False) == "safe", code
    # A person said no.
    for code in ("confirm_denied", "presence_refused"):
        assert retry_for(code, read_only=True) == "unsafe", code
    # A code the table does not know may have acted.
    assert retry_for("made_up_code", read_only=False) == "after_check"
    assert "Safe to retry" not in error_table()["timeout"][1]
