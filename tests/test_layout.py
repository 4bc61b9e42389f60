"""The rooms of the package and the only doors between them.

Each folder is a room that says what it holds: ``protocol/`` (pure codecs), ``trust/`` (the
signed record and every operation on it), ``tabwarden/bridge/`` (hop 2: who is at the other end
of the socket, how frames cross it, the records the two ends leave each other), ``host/`` (the
native-messaging host), ``mcp_server/`` (``tabwarden mcp``), ``tabwarden/cli/`` (the front door:
everything a person runs at the terminal), and the foundation left at ``tabwarden/`` top level
(errors, paths, private files) that every room stands on. ``ALLOWED`` is the whole table of which
room may import which; every import statement of every module is read with ``ast`` (inside
functions and ``TYPE_CHECKING`` blocks too), so a forbidden edge fails here before it can grow.
Above all: neither hop imports the other (what both need lives in ``bridge/``), and nothing but
the command line imports the command line.

The extension has rooms too, held the same way (``EXTENSION_ALLOWED``): ``worker/`` (what the
service worker loads: background.js at the root is its entry, ``handlers/`` its tool handlers),
``ui/`` (what the extension pages load: confirm, options and popup, whose entry scripts sit at the
root beside their HTML), ``shared/`` (what both load; it loads nothing of ours), and ``page/``
(injected into web pages by path, loads nothing).
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

#: Folder in the tree → the import name it installs as (pyproject's package-dir).
FOLDERS = {
    "tabwarden": "tabwarden",
    "protocol": "tabwarden.protocol",
    "trust": "tabwarden.trust",
    "host": "tabwarden.host",
    "mcp_server": "tabwarden.mcp_server",
    "manifests": "tabwarden.manifests",
}

#: Subpackage prefix → room. The longest prefix wins; ``tabwarden`` itself is the foundation.
ROOMS = {
    "tabwarden.protocol": "protocol",
    "tabwarden.trust": "trust",
    "tabwarden.host": "host",
    "tabwarden.mcp_server": "mcp_server",
    "tabwarden.manifests": "manifests",
    "tabwarden.bridge": "bridge",
    "tabwarden.cli": "cli",
    "tabwarden.__main__": "entry",
    # Every OS-specific call (docs/adr/0020-macos-port.md): foundation, as trust/ needs it too.
    "tabwarden.osapi": "foundation",
}

#: The modules that may sit at tabwarden/ top level: what every room imports. Anything else
#: there belongs in a room.
FOUNDATION = frozenset({"tabwarden", "tabwarden.errors", "tabwarden.paths", "tabwarden.private_fs"})

_EVERY_ROOM = frozenset(
    {"foundation", "protocol", "manifests", "trust", "bridge", "host", "mcp_server", "cli"}
)

#: Room → the rooms its modules may import (a room may always import itself).
ALLOWED: Mapping[str, frozenset[str]] = {
    "protocol": frozenset(),
    "manifests": frozenset(),
    "foundation": frozenset({"protocol"}),
    "trust": frozenset({"foundation", "protocol", "manifests"}),
    "bridge": frozenset({"foundation", "protocol", "trust"}),
    "host": frozenset({"foundation", "protocol", "manifests", "trust", "bridge"}),
    "mcp_server": frozenset({"foundation", "protocol", "manifests", "trust", "bridge"}),
    "cli": _EVERY_ROOM,
    "entry": frozenset({"cli"}),
}


def room_of(module: str) -> str | None:
    """The room of one of our modules, or None for a module that is not ours."""
    if module in FOUNDATION:
        return "foundation"
    for prefix in sorted(ROOMS, key=len, reverse=True):
        if module == prefix or module.startswith(prefix + "."):
            return ROOMS[prefix]
    if module.startswith("tabwarden."):
        return "homeless"
    return None


def our_modules(root: Path) -> Iterator[tuple[str, Path]]:
    """(import name, file) for every module of the package, from the folders as installed."""
    for folder, package in FOLDERS.items():
        for path in sorted((root / folder).rglob("*.py")):
            parts = path.relative_to(root / folder).with_suffix("").parts
            name = ".".join((package, *parts))
            yield name.removesuffix(".__init__"), path


def imported_names(module: str, path: Path) -> Iterator[tuple[int, str]]:
    """(line, name) for every import in the file; ``from a import b`` yields ``a.b`` (b may be a
    submodule) — the check takes the deepest of ``a.b``, ``a`` that is one of ours."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            for alias in node.names:
                yield node.lineno, f"{source}.{alias.name}"


def forbidden_edges(root: Path) -> list[str]:
    """Every import that crosses from one room into another the table does not allow, and every
    module that is in no room at all."""
    problems = []
    for module, path in our_modules(root):
        here = room_of(module)
        rel = path.relative_to(root)
        if here == "homeless":
            problems.append(f"{rel}: {module} is in no room (move it into one, or add it)")
            continue
        assert here is not None
        for line, name in imported_names(module, path):
            target = room_of(name)
            if target == "homeless":  # ``from tabwarden.x import y``: judge the module x
                target = room_of(name.rpartition(".")[0])
            if target is None or target == here or target in ALLOWED[here]:
                continue
            problems.append(f"{rel}:{line}: {here} imports {target} ({name})")
    return problems


def test_no_room_imports_a_room_it_may_not() -> None:
    assert forbidden_edges(REPO) == []


def test_the_table_names_every_room_and_each_room_holds_modules() -> None:
    rooms = {room_of(module) for module, _ in our_modules(REPO)}
    assert rooms == set(ALLOWED)
    assert rooms - {"entry"} == _EVERY_ROOM


def test_neither_hop_may_import_the_other_nor_anyone_the_command_line() -> None:
    assert "mcp_server" not in ALLOWED["host"]
    assert "host" not in ALLOWED["mcp_server"]
    assert {"host", "mcp_server", "cli"}.isdisjoint(ALLOWED["bridge"])
    assert [room for room, allowed in ALLOWED.items() if "cli" in allowed] == ["cli", "entry"]


def _tree(tmp_path: Path, files: Mapping[str, str]) -> Path:
    for folder in FOLDERS:
        (tmp_path / folder).mkdir(exist_ok=True)
        (tmp_path / folder / "__init__.py").write_text("")
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def test_the_check_catches_each_kind_of_forbidden_import(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "host/native.py": "X = 1\n",
            "mcp_server/stdio.py": "def f():\n    from tabwarden.host.native import X\n",
            "host/bridge.py": "import tabwarden.mcp_server.stdio\n",
            "tabwarden/bridge/__init__.py": "",
            "tabwarden/bridge/peer.py": "from tabwarden.host import native\n",
            "tabwarden/cli/__init__.py": "",
            "tabwarden/cli/status.py": "from tabwarden.host import bridge\n",
            "trust/gate.py": "from ..cli import status\n",
            "tabwarden/stray.py": "",
        },
    )
    assert sorted(forbidden_edges(root)) == [
        "host/bridge.py:1: host imports mcp_server (tabwarden.mcp_server.stdio)",
        "mcp_server/stdio.py:2: mcp_server imports host (tabwarden.host.native.X)",
        "tabwarden/bridge/peer.py:1: bridge imports host (tabwarden.host.native)",
        "tabwarden/stray.py: tabwarden.stray is in no room (move it into one, or add it)",
        "trust/gate.py:1: trust imports cli (tabwarden.cli.status)",
    ]


#: Extension folder, or entry script at its root → the folders it may load modules from (it may
#: always load from its own folder).
EXTENSION_ALLOWED: Mapping[str, frozenset[str]] = {
    "background.js": frozenset({"worker", "handlers", "shared"}),
    "confirm.js": frozenset({"ui", "shared"}),
    "options.js": frozenset({"ui", "shared"}),
    "popup.js": frozenset({"ui", "shared"}),
    "handlers": frozenset({"worker", "shared"}),
    "worker": frozenset({"shared", "page"}),
    "ui": frozenset({"shared"}),
    "shared": frozenset(),
    "page": frozenset(),
}

#: A module load: ``import … from "./x.js"``, ``export … from``, or a bare ``import "./x.js"``
#: (a JSDoc ``import("…")`` type loads nothing and is not one).
_JS_LOAD = re.compile(
    r"""^[ \t]*(?:import|export)\b[^"';]*?\bfrom\s*["'](\.{1,2}/[^"']+)["']"""
    r"""|^[ \t]*import\s*["'](\.{1,2}/[^"']+)["']""",
    re.M,
)


def forbidden_extension_edges(extension: Path) -> list[str]:
    """Every module load that crosses into a folder the table does not allow, and every script
    that is in no room."""
    problems = []
    for path in sorted(extension.rglob("*.js")):
        rel = path.relative_to(extension).as_posix()
        here = rel.split("/")[0]
        if here not in EXTENSION_ALLOWED:
            problems.append(f"{rel} is in no room (move it into one, or add it)")
            continue
        text = path.read_text()
        for match in _JS_LOAD.finditer(text):
            spec = match.group(1) or match.group(2)
            target = posixpath.normpath(posixpath.join(posixpath.dirname(rel), spec))
            there = target.split("/")[0]
            if there != here and there not in EXTENSION_ALLOWED[here]:
                line = text.count("\n", 0, match.start()) + 1
                problems.append(f"{rel}:{line}: {here} loads {there} ({spec})")
    return problems


def test_the_extensions_worker_and_pages_meet_only_in_shared() -> None:
    assert forbidden_extension_edges(REPO / "extension") == []


def test_the_extension_check_catches_a_forbidden_load(tmp_path: Path) -> None:
    files = {
        "background.js": 'import { a } from "./worker/a.js";\n',
        "worker/a.js": '/** @type {import("../ui/b.js").B} */\nexport const a = 1;\n',
        "ui/b.js": '\nimport { a } from "../worker/a.js";\n',
        "shared/c.js": 'import "../ui/b.js";\n',
        "lib/d.js": "",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    assert forbidden_extension_edges(tmp_path) == [
        "lib/d.js is in no room (move it into one, or add it)",
        "shared/c.js:1: shared loads ui (../ui/b.js)",
        "ui/b.js:2: ui loads worker (../worker/a.js)",
    ]
