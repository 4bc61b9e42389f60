"""Every action the MCP server relays has a handler in the extension, and the extension handles
nothing the server does not relay (bar the documented extension-internal actions).

The extension's list is read from the real service worker, not from its source text:
``extension_actions.mjs`` loads manifest.json's ``background.service_worker`` under Node against an
inert fake ``chrome`` and captures the entries handed to ``createDispatcher`` (exported by
``extension/worker/dispatch.js``), which is the action → handler ``Map`` requests are dispatched
through. A relayed action with no handler would answer ``unknown_action`` in every browser; a
handler no tool reaches is surface nobody reviews with the catalogue.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections import Counter
from pathlib import Path

from tabwarden.host.sessions import TERMINAL_ACTIONS
from tabwarden.mcp_server.catalogue import RELAYED_ACTIONS

HERE = Path(__file__).resolve().parent
EXTENSION = HERE.parents[1] / "extension"

#: Actions the extension dispatches that no MCP tool relays, each with the reason.
EXTENSION_INTERNAL: dict[str, str] = {
    action: "the terminal's (`tabwarden tabs`): the host relays it only from an attested cli "
    "connection, under the reserved terminal session, and refuses it to every MCP server"
    for action in TERMINAL_ACTIONS
}


def dispatched_actions() -> list[list[str]]:
    node = shutil.which("node")
    assert node, "Node.js is required (scripts/setup installs it)"
    proc = subprocess.run(  # noqa: S603 - Node from PATH, our own script and the repo's extension
        [node, str(HERE / "extension_actions.mjs"), str(EXTENSION)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout.splitlines()[-1])
    assert report["calls"], f"the service worker never called createDispatcher: {report['failure']}"
    calls: list[list[str]] = report["calls"]
    return calls


def test_the_extension_dispatches_exactly_the_relayed_actions() -> None:
    [actions] = dispatched_actions()  # one dispatcher for the one native port
    repeated = sorted(a for a, n in Counter(actions).items() if n > 1)
    assert repeated == [], f"registered twice (the later handler silently wins): {repeated}"
    handled = set(actions) - set(EXTENSION_INTERNAL)
    assert sorted(RELAYED_ACTIONS - handled) == [], "relayed by the server, no extension handler"
    assert sorted(handled - RELAYED_ACTIONS) == [], "handled by the extension, relayed by no tool"


def test_extension_internal_actions_are_not_tools() -> None:
    assert set(EXTENSION_INTERNAL).isdisjoint(RELAYED_ACTIONS)
