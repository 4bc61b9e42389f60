"""A real third-party MCP client — the MCP Inspector CLI (Node, the TypeScript SDK) — against
`tabwarden mcp` over stdio. It validates results against our output schemas, so it catches
what the Python SDK forgives (e.g. structured content on error results)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.fixtures import pair_record, pair_remembered_spawners

REPO = Path(__file__).resolve().parents[2]
INSPECTOR = REPO / "tests/inspector/node_modules/.bin/mcp-inspector"


def _inspector(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert INSPECTOR.exists(), (
        "scripts/setup installs the MCP Inspector (npm ci in tests/inspector)"
    )
    assert shutil.which("node"), "Node.js is required"
    config, runtime = tmp_path / "config", tmp_path / "run"
    config.mkdir(mode=0o700, exist_ok=True)
    runtime.mkdir(mode=0o700, exist_ok=True)
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "TABWARDEN_CONFIG_DIR": str(config),
        "TABWARDEN_RUNTIME_DIR": str(runtime),
    }
    return subprocess.run(  # noqa: S603 - the Inspector scripts/setup installed, our interpreter
        [str(INSPECTOR), "--cli", sys.executable, "-m", "tabwarden", "mcp", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_inspector_lists_every_tool_with_schemas(tmp_path: Path) -> None:
    proc = _inspector(tmp_path, "--method", "tools/list")
    assert proc.returncode == 0, proc.stderr
    tools = {t["name"]: t for t in json.loads(proc.stdout)["tools"]}
    assert {"tab_list", "tab_open", "page_text", "page_click", "page_eval", "bridge_status"} <= set(
        tools
    )
    for tool in tools.values():
        assert tool["inputSchema"]["type"] == "object"
        assert tool["outputSchema"]["type"] == "object"
        assert "readOnlyHint" in tool["annotations"]


def test_inspector_accepts_our_results_and_our_coded_errors(tmp_path: Path) -> None:
    # Nothing paired: refused, in the error form the Inspector validates; the Inspector is
    # remembered as its spawner, and paired as `pair-client` would.
    key = pair_record(tmp_path / "config")
    refused = _inspector(tmp_path, "--method", "tools/call", "--tool-name", "bridge_status")
    assert refused.returncode == 0, refused.stdout + refused.stderr
    error = json.loads(refused.stdout)["_meta"]["dev.tabwarden/error"]
    assert error["code"] == "client_not_paired"
    pair_remembered_spawners(tmp_path / "config", key)
    ok = _inspector(tmp_path, "--method", "tools/call", "--tool-name", "bridge_status")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert json.loads(ok.stdout)["structuredContent"]["hostReachable"] is False
    failed = _inspector(tmp_path, "--method", "tools/call", "--tool-name", "tab_list")
    assert failed.returncode == 0, failed.stdout + failed.stderr  # schema validation passed
    result = json.loads(failed.stdout)
    assert result["isError"] is True
    assert result["_meta"]["dev.tabwarden/error"]["code"] == "extension_not_connected"
    assert result["content"][0]["text"].startswith("extension_not_connected: ")
