"""Clients pinned by what they run (not only by the interpreter), with real processes against a real
host.

A paired Node (or Python) client is its interpreter *and* its script: a second script run by the
same interpreter is refused, with the reason in the host's log and nothing relayed. A wrapper
between the client and the MCP server (``timeout``, ``sh -c``, ``env``) is measured through, and
another client behind the same wrapper is refused. A paired script that changed is told so.

The MCP server's part is played by a bridge client (``BRIDGE_CLIENT``, claiming nothing: the
host's own measurement is what counts) that the client script starts as its child; the last
test drives the real ``tabwarden mcp`` over stdio from a Node script against an attested host.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tabwarden.bridge.client_identity import ClientIdentity, measure_process
from tabwarden.trust import store
from tabwarden.trust.keystore import FileStore
from tests.fakes import BRIDGE_CLIENT, FakeBrowser, host_env
from tests.fixtures import answer_one_tab_list, config_of, nothing_relayed, pair_record

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="needs node")
PYTHON = sys.executable  # the venv's: it imports tabwarden
PYTHON_IMAGE = os.path.realpath(f"/proc/{os.getpid()}/exe")  # what /proc/<pid>/exe names
GUARD = 60  # a hang guard, not a timing assertion

#: A Node client: ``--hold`` idles (to be measured for pairing), else runs its arguments.
NODE_CLIENT = textwrap.dedent(
    """
    // client {name}
    const {{ spawnSync }} = require("child_process");
    const [cmd, ...rest] = process.argv.slice(2);
    if (cmd === "--hold") {{
      setInterval(() => {{}}, 1000);
    }} else {{
      const run = spawnSync(cmd, rest, {{ stdio: "inherit" }});
      process.exit(run.status === null ? 1 : run.status);
    }}
    """
)

PYTHON_CLIENT = textwrap.dedent(
    """
    # client {name}
    import subprocess, sys
    if sys.argv[1] == "--hold":
        sys.stdin.read()
    else:
        sys.exit(subprocess.run(sys.argv[1:]).returncode)
    """
)


def _interpreter(kind: str) -> tuple[str, str]:
    """(the command to run it, its image as a description names it)."""
    if kind == "node":
        assert NODE is not None
        return NODE, os.path.realpath(NODE)
    return PYTHON, PYTHON_IMAGE


def _write_client(tmp_path: Path, kind: str, name: str) -> Path:
    template = NODE_CLIENT if kind == "node" else PYTHON_CLIENT
    path = tmp_path / f"{name}.{'js' if kind == 'node' else 'py'}"
    path.write_text(template.format(name=name))
    return path


def _measure_held(interpreter: str, script: Path) -> ClientIdentity:
    """Start the client idle and measure it, as `tabwarden pair-client --pid` would."""
    argv = [interpreter, str(script), "--hold"]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE)  # noqa: S603
    try:
        deadline = time.monotonic() + 30
        while psutil.Process(proc.pid).cmdline() != argv:
            assert time.monotonic() < deadline, "the client never started"
            time.sleep(0.01)
        return measure_process(proc.pid)
    finally:
        proc.kill()
        proc.wait(timeout=30)


def _pair(browser: FakeBrowser, identity: ClientIdentity, label: str = "claude") -> None:
    config = config_of(browser)
    key = FileStore(config / "host-key.pem").load()
    assert key is not None
    store.add_client(
        config / "trust.json", key, label, identity.exe, identity.sha256, int(time.time())
    )


def _bridge(tmp_path: Path) -> list[str]:
    """The command that starts the bridge client (the MCP server's stand-in)."""
    path = tmp_path / "bridge_client.py"
    path.write_text(BRIDGE_CLIENT)
    return [PYTHON, str(path)]


def _run_client(browser: FakeBrowser, argv: list[str], *, served: bool) -> dict[str, object]:
    """Run ``argv`` (a client starting the bridge client, maybe through a wrapper); play the
    extension for its request when it should be ``served``."""
    answering = None
    if served:
        answering = threading.Thread(target=answer_one_tab_list, args=(browser,), daemon=True)
        answering.start()
    done = subprocess.run(  # noqa: S603
        argv, capture_output=True, text=True, env=host_env(browser.runtime), timeout=GUARD
    )
    assert done.returncode == 0, done.stderr
    if answering is not None:
        answering.join(GUARD)
        assert not answering.is_alive()
    answer: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return answer


@pytest.fixture
def host(fake_browser: FakeBrowser) -> Iterator[FakeBrowser]:
    """A real host with a paired record (no client yet) and the fake extension connected."""
    pair_record(config_of(fake_browser))
    fake_browser.wait_socket()
    fake_browser.hello()
    yield fake_browser


@pytest.mark.parametrize("kind", [pytest.param("node", marks=needs_node), "python"])
@pytest.mark.promise("H1-01")
def test_a_second_script_of_a_paired_interpreter_is_refused(
    host: FakeBrowser, tmp_path: Path, kind: str
) -> None:
    interpreter, image = _interpreter(kind)
    paired, other = _write_client(tmp_path, kind, "a"), _write_client(tmp_path, kind, "b")
    _pair(host, _measure_held(interpreter, paired))

    bridge = _bridge(tmp_path)
    assert _run_client(host, [interpreter, str(paired), *bridge], served=True) == {
        "ok": {"tabs": []}
    }
    answer = _run_client(host, [interpreter, str(other), *bridge], served=False)
    assert answer["code"] == "client_not_paired", answer
    log = host.wait_stderr("refused: this client is not a paired MCP client")
    assert f"client {image} {other} (sha256" in log  # the host says whom it measured
    nothing_relayed(host)


@pytest.mark.parametrize("wrapper", ["timeout", "sh -c", "env"])
@pytest.mark.promise("H1-01")
def test_the_client_is_measured_through_a_wrapper(
    host: FakeBrowser, tmp_path: Path, wrapper: str
) -> None:
    paired, other = _write_client(tmp_path, "python", "a"), _write_client(tmp_path, "python", "b")
    _pair(host, _measure_held(PYTHON, paired))
    bridge = _bridge(tmp_path)
    spawned = {
        "timeout": ["timeout", "60", *bridge],
        "sh -c": ["sh", "-c", f"{' '.join(bridge)}; true"],  # `; true`: sh stays the parent
        "env": ["env", "TABWARDEN_X=1", *bridge],  # env execs: never a parent at all
    }[wrapper]

    assert _run_client(host, [PYTHON, str(paired), *spawned], served=True) == {"ok": {"tabs": []}}
    log = host.wait_stderr(f"client {PYTHON_IMAGE} {paired} (sha256")
    if wrapper != "env":  # the host says what it walked through
        walked = "timeout (pid" if wrapper == "timeout" else " -c (pid"
        assert any(
            f"client {PYTHON_IMAGE} {paired} (sha256" in line
            and ", through " in line
            and walked in line
            for line in log.splitlines()
        ), log
    answer = _run_client(host, [PYTHON, str(other), *spawned], served=False)
    assert answer["code"] == "client_not_paired", answer
    host.wait_stderr(f"client {PYTHON_IMAGE} {other} (sha256")
    host.wait_stderr("refused: this client is not a paired MCP client")
    nothing_relayed(host)


@pytest.mark.promise("H1-02")
def test_a_paired_script_that_changed_is_told_to_re_pair(host: FakeBrowser, tmp_path: Path) -> None:
    paired = _write_client(tmp_path, "python", "a")
    before = _measure_held(PYTHON, paired)
    _pair(host, before)
    with paired.open("a") as script:
        script.write("# updated itself\n")
    after = _measure_held(PYTHON, paired)
    assert after.exe == before.exe and after.sha256 != before.sha256

    answer = _run_client(host, [PYTHON, str(paired), *_bridge(tmp_path)], served=False)
    assert answer["code"] == "client_not_paired", answer
    said = (
        f"the client {before.exe} changed since it was paired as 'claude' "
        f"(sha256 {before.sha256[:12]}… → {after.sha256[:12]}…): it probably updated itself; "
        "re-pair it with `tabwarden pair-client`"
    )
    assert said in str(answer["message"])
    host.wait_stderr(f"refused: {said}")
    nothing_relayed(host)


#: Node as a real MCP client: spawns `tabwarden mcp` over stdio, calls one tool, prints it.
NODE_MCP_CLIENT = textwrap.dedent(
    """
    // mcp client {name}
    const {{ spawn }} = require("child_process");
    const [cmd, ...rest] = process.argv.slice(2);
    if (cmd === "--hold") {{ setInterval(() => {{}}, 1000); }} else {{
    const server = spawn(cmd, rest, {{ stdio: ["pipe", "pipe", "inherit"] }});
    let buffer = "";
    const waiting = new Map();
    server.stdout.on("data", (chunk) => {{
      buffer += chunk;
      let at;
      while ((at = buffer.indexOf("\\n")) >= 0) {{
        const line = buffer.slice(0, at); buffer = buffer.slice(at + 1);
        const message = JSON.parse(line);
        const done = waiting.get(message.id);
        if (done) {{ waiting.delete(message.id); done(message); }}
      }}
    }});
    let next = 1;
    const call = (method, params) => new Promise((resolve) => {{
      const id = next++; waiting.set(id, resolve);
      server.stdin.write(JSON.stringify({{ jsonrpc: "2.0", id, method, params }}) + "\\n");
    }});
    (async () => {{
      await call("initialize", {{ protocolVersion: "2025-06-18", capabilities: {{}},
                                   clientInfo: {{ name: "node-test", version: "1" }} }});
      const initialized = {{ jsonrpc: "2.0", method: "notifications/initialized" }};
      server.stdin.write(JSON.stringify(initialized) + "\\n");
      const reply = await call("tools/call", {{ name: "tab_list", arguments: {{}} }});
      console.log(JSON.stringify(reply.result));
      server.stdin.end(); server.kill();
    }})();
    }}
    """
)


@needs_node
@pytest.mark.promise("H1-01")
def test_a_node_mcp_client_is_served_and_another_script_of_that_node_refused_at_hop_1(
    runtime_dir: Path, tmp_path: Path
) -> None:
    """The real chain: node → `python -I -m tabwarden mcp` → an attested host. Hop 1
    (ToolGuard) refuses the second script before anything reaches the host."""
    fake_browser = FakeBrowser(runtime_dir, attested=True)
    try:
        _node_mcp_chain(fake_browser, tmp_path)
    finally:
        fake_browser.close()


def _node_mcp_chain(fake_browser: FakeBrowser, tmp_path: Path) -> None:
    pair_record(config_of(fake_browser))
    fake_browser.wait_socket()
    fake_browser.hello()
    node, node_image = _interpreter("node")
    paired, other = tmp_path / "agent.js", tmp_path / "other.js"
    for path, name in ((paired, "agent"), (other, "other")):
        path.write_text(NODE_MCP_CLIENT.format(name=name))
    _pair(fake_browser, _measure_held(node, paired))

    def run(script: Path) -> dict[str, object]:
        done = subprocess.run(  # noqa: S603
            [node, str(script), PYTHON, "-I", "-m", "tabwarden", "mcp"],
            capture_output=True,
            text=True,
            env=host_env(fake_browser.runtime),
            timeout=GUARD,
        )
        assert done.returncode == 0, done.stderr
        result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
        return result

    answering = threading.Thread(target=answer_one_tab_list, args=(fake_browser,), daemon=True)
    answering.start()
    deadline = time.monotonic() + GUARD
    served = run(paired)
    while served.get("isError") and "extension_not_connected" in json.dumps(served):
        assert time.monotonic() < deadline, served  # the server had not seen the hello yet
        served = run(paired)
    assert not served.get("isError"), served
    answering.join(GUARD)

    refused = run(other)
    assert refused.get("isError") is True, refused
    text = json.dumps(refused)
    assert "client_not_paired" in text
    assert f"{node_image} {other} is not a paired MCP client" in text
    nothing_relayed(fake_browser)
