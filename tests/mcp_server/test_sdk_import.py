"""``mcp_server/sdk.py``: ``tabwarden mcp`` imports the SDK's server half without the client
half its package initialiser pulls in, and the deferred packages still answer every name."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench.jsonrpc import TOOLS_LIST
from tests.mcp_server.stdio_session import session

PROBE = """
import json, sys
from tabwarden.mcp_server.sdk import defer_package_inits
deferred = defer_package_inits()
import tabwarden.mcp_server.server
before = sorted(m for m in sys.modules if m.startswith("mcp.client"))
import mcp
from mcp.server import Server
client = mcp.Client  # a name only the package's own __init__ defines
print(json.dumps({
    "deferred": deferred,
    "client_modules_before": before,
    "client": client.__module__,
    "server": Server.__module__,
    "again": defer_package_inits(),
}))
"""


def test_the_server_half_imports_alone_and_the_package_still_answers_every_name() -> None:
    out = subprocess.run(  # noqa: S603 (this interpreter and a fixed script)
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=True
    )
    seen = json.loads(out.stdout)
    assert seen["deferred"] is True
    assert seen["client_modules_before"] == []  # the client half was never imported
    assert seen["client"] == "mcp.client.client"  # ...until a name needed it: then all of it
    assert seen["server"] == "mcp.server.lowlevel.server"
    assert seen["again"] is False  # once the SDK is imported it changes nothing


def test_nothing_is_deferred_once_the_sdk_was_imported() -> None:
    probe = (
        "import mcp, sys\n"
        "from tabwarden.mcp_server.sdk import defer_package_inits\n"
        "assert defer_package_inits() is False\n"
        "assert '__getattr__' not in vars(sys.modules['mcp']) and mcp.Client\n"
    )
    subprocess.run([sys.executable, "-c", probe], timeout=120, check=True)  # noqa: S603


def test_the_stdio_server_never_imports_the_http_server() -> None:
    probe = (
        "import sys\n"
        "from tabwarden.mcp_server.sdk import defer_package_inits\n"
        "assert defer_package_inits() is True\n"
        "import tabwarden.mcp_server.server, sse_starlette\n"
        "assert not any(m.startswith('uvicorn.') for m in sys.modules)\n"
        "try:\n"
        "    import uvicorn\n"
        "except ImportError:\n"
        "    pass\n"
        "else:\n"
        "    raise SystemExit('uvicorn was importable')\n"
    )
    subprocess.run([sys.executable, "-c", probe], timeout=120, check=True)  # noqa: S603


def test_httpx2_runs_only_when_a_name_is_asked_for_and_then_answers_every_one() -> None:
    probe = (
        "import json, sys\n"
        "from tabwarden.mcp_server.sdk import defer_package_inits\n"
        "assert defer_package_inits() is True\n"
        "import tabwarden.mcp_server.server\n"
        "before = sorted(m for m in sys.modules if m.startswith('httpx2.'))\n"
        "from httpx2 import AsyncClient\n"
        "import httpx2\n"
        "print(json.dumps({'before': before, 'after': 'httpx2._client' in sys.modules,\n"
        "                  'same': httpx2.AsyncClient is AsyncClient,\n"
        "                  'names': len(httpx2.__all__)}))\n"
    )
    out = subprocess.run(  # noqa: S603 (this interpreter and a fixed script)
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    seen = json.loads(out.stdout)
    assert seen["before"] == []  # imported at the SDK's top, never run...
    assert seen["after"] is True  # ...until a name was asked for: then in full
    assert seen["same"] is True
    assert seen["names"] > 10


def test_starting_the_server_with_a_file_store_never_imports_keyring() -> None:
    probe = (
        "import sys\n"
        "from tabwarden.mcp_server.sdk import defer_package_inits\n"
        "defer_package_inits()\n"
        "import tabwarden.mcp_server.server, tabwarden.trust.keystore, tabwarden.trust.gate\n"
        "assert 'keyring' not in sys.modules, 'keyring imported at start'\n"
    )
    subprocess.run([sys.executable, "-c", probe], timeout=120, check=True)  # noqa: S603


#: ``tabwarden mcp`` as an agent's spawn runs it after its re-exec (``-I``: ``cli.main`` does not
#: re-execute), saying at exit what of the SDK it imported and how it left the collector;
#: stdout stays JSON-RPC only.
SERVING_PROBE = """
import atexit, gc, json, sys

def imported() -> None:
    print(json.dumps({
        "client": sorted(m for m in sys.modules if m.startswith("mcp.client")),
        "uvicorn": sorted(m for m, v in sys.modules.items() if m.split(".")[0] == "uvicorn" and v),
        "mcp_init_ran": "__getattr__" not in vars(sys.modules["mcp"]),
        "gc_enabled": gc.isenabled(),
        "frozen": gc.get_freeze_count(),
    }), file=sys.stderr)

atexit.register(imported)
from tabwarden.cli.entry import main
sys.exit(main(["mcp"]))
"""


def test_a_serving_server_never_imports_the_client_half_and_froze_its_start(
    tmp_path: Path,
) -> None:
    """Over real stdio: initialize, tools/list and a tool call answered, and at exit the
    SDK's client half, uvicorn and ``mcp/__init__.py`` were never run. If an SDK upgrade moves
    what the server half needs into them, this fails (and the shim should be revisited). The
    collector, off during the start, is on again, and the start's objects are frozen
    (``server._freeze_start``)."""
    call = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "bridge_status", "arguments": {}},
    }
    errlog = tmp_path / "mcp.err"
    lines = session(tmp_path, ["-I", "-c", SERVING_PROBE], [TOOLS_LIST, call], stderr=errlog)
    answers = {id_: json.loads(answer) for id_, answer in lines.items()}
    assert "serverInfo" in answers[1]["result"]
    assert len(answers[2]["result"]["tools"]) > 10
    assert "result" in answers[3]  # answered (the bridge's state, no browser here)
    seen = json.loads(errlog.read_text().strip().splitlines()[-1])
    assert seen["client"] == []
    assert seen["uvicorn"] == []
    assert seen["mcp_init_ran"] is False
    assert seen["gc_enabled"] is True
    assert seen["frozen"] > 50_000  # the modules, models and tools the start made
