"""The catalogue is the only list of tools, and the hop-1 gate guards every one by construction.

An attacker who is refused (kill switch engaged) calls every tool with valid arguments: each
answers the same refusal, is audited as refused, and nothing reaches the bridge. A client that
is let through reaches the bridge with exactly the catalogue's action. Statically: only
``tools.py`` adds tools to the server, and no other server module spells a tool name.
"""

from __future__ import annotations

import ast
import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tabwarden.mcp_server import catalogue
from tabwarden.mcp_server.bridge_client import BridgeClient, BridgeStatus
from tabwarden.mcp_server.catalogue import BY_NAME, CATALOGUE, Local, Relay, ToolSpec
from tabwarden.mcp_server.server import ToolGuard, build_server
from tabwarden.trust.verify import Effective
from tests.fakes import tool_error
from tests.fixtures import paired_guard

MCP_SERVER = Path(catalogue.__file__).resolve().parents[1]

#: A valid value for every required argument any tool has.
REQUIRED = {
    "tabId": 1,
    "url": "http://127.0.0.1:1/",
    "value": "v",
    "key": "Enter",
    "keys": "Enter",
    "checked": True,
    "selector": "input",
    "code": "1",
    "path": "upload.txt",
    "action": "dismiss",
    "ref": "@e1",
    "to": {"x": 10, "y": 20},
    "fields": [{"kind": "text", "selector": "#name", "value": "v"}],
}


def valid_arguments(spec: ToolSpec) -> dict[str, Any]:
    fields = spec.arguments.model_fields
    args = {name: REQUIRED[name] for name, field in fields.items() if field.is_required()}
    target = spec.arguments
    if issubclass(target, catalogue.ElementNamed) and not target.TARGET_OPTIONAL:
        args["selector"] = "input"  # name the element exactly once
    if target is catalogue.FindArgs:
        args["role"] = "button"  # a query names a role, a name or both
    if target is catalogue.ViewportArgs:
        args["preset"] = "mobile"  # a preset, a size or reset
    if spec.name == "page_wait_for":
        args["text"] = "Saved"  # a wait names exactly one of selector or text
    if spec.name == "page_upload":
        args["path"] = "upload.txt"  # one file (path) or several (paths)
    return args


class BridgeSpy(BridgeClient):
    """A bridge that records what reaches it and answers nothing."""

    def __init__(self, runtime: Path) -> None:
        super().__init__(label="spy", env={"TABWARDEN_RUNTIME_DIR": str(runtime)})
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.statuses = 0

    async def call(
        self,
        action: str,
        args: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        command: str | None = None,
        read_only: bool = False,
    ) -> dict[str, Any]:
        self.calls.append((action, dict(args or {})))
        return {}

    async def status(self) -> BridgeStatus:
        self.statuses += 1
        return await super().status()


def _run_every_tool(server: Any) -> dict[str, Any]:
    async def scenario() -> dict[str, Any]:
        async with Client(server, raise_exceptions=True) as client:
            listed = {t.name for t in (await client.list_tools()).tools}
            assert listed == set(BY_NAME)
            return {s.name: await client.call_tool(s.name, valid_arguments(s)) for s in CATALOGUE}

    return asyncio.run(scenario())


@pytest.mark.promise("H1-01")
def test_a_refused_client_reaches_nothing_through_any_tool(
    runtime_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = tmp_path / "box"
    box.mkdir()
    (box / "upload.txt").write_text("x")
    monkeypatch.setenv("TABWARDEN_UPLOAD_DIR", str(box))
    audited: list[dict[str, Any]] = []
    read: list[str] = []
    guard = paired_guard(lambda _kind, **fields: audited.append(fields), killed=True)
    bridge = BridgeSpy(runtime_dir)

    def check_upload(requested: str) -> tuple[Path, int]:
        read.append(requested)
        return box, 0

    server = build_server(bridge, guard, check_upload=check_upload)

    results = _run_every_tool(server)
    errors = {name: tool_error(result) for name, result in results.items()}
    # bridge_status alone answers while killed (a local diagnostic), and says so.
    status = results.pop("bridge_status")
    assert not status.is_error and status.structured_content["killed"] is True
    errors.pop("bridge_status")
    assert all(e is not None for e in errors.values()), errors
    assert {(e["code"], e["message"]) for e in errors.values() if e} == {
        ("killed", "the kill switch is engaged")
    }
    assert bridge.calls == [] and bridge.statuses == 1 and read == []
    assert [(a["tool"], a["decision"], a["refusal"]) for a in audited] == [
        (s.name, "refused", "killed") for s in CATALOGUE[:1]
    ] + [("bridge_status", "answered_while_killed", "killed")] + [
        (s.name, "refused", "killed") for s in CATALOGUE[1:]
    ]


@pytest.mark.promise("H1-09")
def test_bridge_status_while_killed_still_refuses_an_unpaired_client(runtime_dir: Path) -> None:
    """The kill switch is the only refusal bridge_status looks past: a client the record does
    not pair is refused it as every other tool, killed or not."""
    paired = replace(
        Effective.unpaired(),
        killed=True,
        clients_pinned=True,
    )
    guard = ToolGuard(lambda: paired, None, "not measurable")
    bridge = BridgeSpy(runtime_dir)
    results = _run_every_tool(build_server(bridge, guard))
    assert (tool_error(results["bridge_status"]) or {}).get("code") == "killed"
    assert bridge.statuses == 0 and bridge.calls == []


def test_an_allowed_call_reaches_the_bridge_as_the_catalogue_says(
    runtime_dir: Path,
) -> None:
    bridge = BridgeSpy(runtime_dir)
    upload = (runtime_dir / "upload.txt", 4)
    server = build_server(bridge, paired_guard(), check_upload=lambda p: upload)
    _run_every_tool(server)
    relayed = [s.name for s in CATALOGUE if isinstance(s.call, Relay)]
    assert [action for action, _ in bridge.calls] == relayed
    assert bridge.statuses == sum(isinstance(s.call, Local) for s in CATALOGUE)
    assert {s.call for s in CATALOGUE if isinstance(s.call, Local)} == set(Local)
    sent = dict(bridge.calls)
    # Only the checked real path, its name and size: no byte of the file crosses the bridge.
    assert sent["page_upload"]["paths"] == [str(runtime_dir / "upload.txt")]
    assert sent["page_upload"]["files"] == [{"name": "upload.txt", "size": 4}]
    assert "data" not in sent["page_upload"]
    assert sent["page_press"] == {"tabId": 1, "key": "Enter"}  # no element: the focused one
    assert sent["page_scroll"] == {"tabId": 1, "to": "bottom"}
    assert sent["page_click"] == {"tabId": 1, "selector": "input"}
    assert sent["page_scrape"] == {"tabId": 1, "selector": "input", "attrs": []}
    assert sent["storage_get"] == {"tabId": 1, "area": "local"}
    assert sent["cookie_get"] == {"tabId": 1}
    assert sent["page_wait_for"] == {
        "tabId": 1,
        "state": "visible",
        "timeoutMs": 10_000,
        "text": "Saved",
    }
    assert sent["page_text"] == {"tabId": 1, "offset": 0, "maxChars": 100_000}
    assert sent["page_snapshot"] == {"tabId": 1, "mode": "auto", "compact": False, "maxNodes": 1000}
    assert sent["page_find"] == {"tabId": 1, "role": "button", "exact": False, "limit": 10}


@pytest.mark.parametrize(
    ("tool", "args", "wire"),
    [
        ("page_scroll", {"tabId": 2, "ref": "@e1"}, {"ref": "@e1"}),
        (
            "page_press",
            {"tabId": 2, "key": "a", "text": "Go"},
            {"text": "Go", "key": "a"},
        ),
        ("page_wait_for", {"tabId": 2, "text": "ok", "selector": ""}, {"text": "ok"}),
        ("cookie_get", {"tabId": 2, "name": ""}, {}),
        (
            "page_snapshot",
            {"tabId": 2, "mode": "a11y", "compact": True, "ref": "@e3", "maxNodes": 5},
            {"mode": "a11y", "compact": True, "ref": "@e3", "maxNodes": 5},
        ),
        ("page_find", {"tabId": 2, "name": "Save"}, {"name": "Save", "exact": False, "limit": 10}),
        ("page_text", {"tabId": 2, "ref": "@e4"}, {"offset": 0, "maxChars": 100_000, "ref": "@e4"}),
        (
            "storage_get",
            {"tabId": 2, "area": "session", "key": "k"},
            {"area": "session", "key": "k"},
        ),
    ],
)
def test_arguments_become_the_request_the_extension_takes(
    tool: str, args: dict[str, Any], wire: dict[str, Any]
) -> None:
    request = BY_NAME[tool].arguments.model_validate(args).wire()
    defaults = {"state": "visible", "timeoutMs": 10_000} if tool == "page_wait_for" else {}
    assert request == {"tabId": 2, **defaults, **wire}


@pytest.mark.parametrize("named", [{}, {"ref": "@e1", "selector": "a"}, {"text": "", "xpath": ""}])
def test_an_element_is_named_exactly_once(named: dict[str, Any]) -> None:
    with pytest.raises(catalogue.BadArguments, match="exactly one"):
        BY_NAME["page_click"].arguments.model_validate({"tabId": 1, **named}).wire()


def test_a_find_names_a_role_or_a_name_and_a_snapshot_one_scope() -> None:
    with pytest.raises(catalogue.BadArguments, match="a role, a name or both"):
        BY_NAME["page_find"].arguments.model_validate({"tabId": 1, "exact": True}).wire()
    with pytest.raises(catalogue.BadArguments, match="not both"):
        BY_NAME["page_snapshot"].arguments.model_validate(
            {"tabId": 1, "ref": "@e1", "selector": "main"}
        ).wire()
    for bad in ({"limit": 51}, {"limit": 0}):
        with pytest.raises(ValueError, match="limit"):
            BY_NAME["page_find"].arguments.model_validate({"tabId": 1, "role": "link", **bad})
    with pytest.raises(ValueError, match="maxNodes"):
        BY_NAME["page_snapshot"].arguments.model_validate({"tabId": 1, "maxNodes": 5001})


def _server_modules() -> dict[str, ast.Module]:
    return {
        p.relative_to(MCP_SERVER).as_posix(): ast.parse(p.read_text("utf-8"))
        for p in sorted(MCP_SERVER.rglob("*.py"))
    }


def test_only_tools_py_makes_the_servers_tools() -> None:
    adders = {"tool", "add_tool", "from_function"}
    found = {
        name
        for name, tree in _server_modules().items()
        for node in ast.walk(tree)
        if (isinstance(node, ast.Attribute) and node.attr in adders)
        or (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "Tool"
        )
    }
    assert found == {"tools.py"}


def test_tool_and_action_names_are_spelled_only_in_the_catalogue() -> None:
    names = set(BY_NAME)
    spelled = {
        (module, node.value)
        for module, tree in _server_modules().items()
        if not module.startswith("catalogue/")
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in names
    }
    assert spelled == set()


class FetchingBridge(BridgeSpy):
    """Answers page_fetch as the extension does for saveAs: the body as base64 ``data``."""

    def __init__(self, runtime: Path, reply: dict[str, Any]) -> None:
        super().__init__(runtime)
        self.reply = reply

    async def call(self, action: str, args: dict[str, Any] | None = None, **_: Any) -> Any:
        self.calls.append((action, dict(args or {})))
        return dict(self.reply)


FETCHED = {
    "url": "http://127.0.0.1:1/a",
    "method": "GET",
    "status": 200,
    "statusText": "OK",
    "ok": True,
    "redirected": False,
    "contentType": "text/plain",
    "bytes": 5,
    "bodyTruncated": False,
    "data": "aGVsbG8=",
}


def _fetch(bridge: BridgeSpy, args: dict[str, Any]) -> Any:
    async def scenario() -> Any:
        server = build_server(bridge, paired_guard())
        async with Client(server, raise_exceptions=True) as client:
            return await client.call_tool("page_fetch", args)

    return asyncio.run(scenario())


@pytest.mark.promise("H4-50")
def test_save_as_writes_the_body_into_the_download_sandbox_never_into_the_result(
    runtime_dir: Path, tmp_path: Path
) -> None:
    bridge = FetchingBridge(runtime_dir, FETCHED)
    # The sandbox is resolved from the environment the server was given (the bridge's).
    assert bridge.env is not None
    bridge.env["TABWARDEN_DOWNLOAD_DIR"] = str(tmp_path / "dl")
    args = {"tabId": 1, "url": "http://127.0.0.1:1/a", "saveAs": "a.txt"}
    result = _fetch(bridge, args)
    assert not result.is_error, result.content
    assert result.structured_content["savedTo"] == str(tmp_path / "dl" / "a.txt")
    assert "aGVsbG8=" not in str(result.content) and "data" not in result.structured_content
    assert (tmp_path / "dl" / "a.txt").read_bytes() == b"hello"
    assert bridge.calls == [("page_fetch", args | {"method": "GET", "maxBytes": 100_000})]

    # The name is taken now: the body gets a numbered name, the first file is not overwritten.
    again = _fetch(bridge, args)
    assert again.structured_content["savedTo"] == str(tmp_path / "dl" / "a (1).txt")
    assert (tmp_path / "dl" / "a.txt").read_bytes() == b"hello"

    # A malformed reply writes nothing.
    broken = FetchingBridge(runtime_dir, {"data": "aGVsbG8="})
    assert broken.env is not None
    broken.env["TABWARDEN_DOWNLOAD_DIR"] = str(tmp_path / "dl")
    failed = _fetch(broken, args | {"saveAs": "b.txt"})
    assert (tool_error(failed) or {}).get("code") == "internal_error"
    assert not (tmp_path / "dl" / "b.txt").exists()


def test_save_as_of_a_request_the_page_could_not_read_saves_nothing_and_says_so(
    runtime_dir: Path, tmp_path: Path
) -> None:
    """page_fetch delivered a request but the page could not read the answer (CORS): there is
    nothing to save, and the result says it was delivered (with its hint) instead of an error
    that would have the agent send it again."""
    unreadable = {
        "url": "http://127.0.0.1:1/a",
        "method": "POST",
        "delivery": "sent_unreadable",
        "status": 0,
        "statusText": "",
        "ok": False,
        "redirected": False,
        "contentType": None,
        "bytes": 0,
        "bodyTruncated": False,
        "hint": "The server received this request and answered. Do not repeat this POST.",
    }
    bridge = FetchingBridge(runtime_dir, unreadable)
    assert bridge.env is not None
    bridge.env["TABWARDEN_DOWNLOAD_DIR"] = str(tmp_path / "dl")
    args = {"tabId": 1, "url": "http://127.0.0.1:1/a", "method": "POST", "saveAs": "a.txt"}
    result = _fetch(bridge, args)
    assert not result.is_error, result.content
    assert result.structured_content["delivery"] == "sent_unreadable"
    assert "Do not repeat this POST" in result.structured_content["hint"]
    assert "savedTo" not in result.structured_content
    assert not (tmp_path / "dl").exists() or list((tmp_path / "dl").iterdir()) == []
