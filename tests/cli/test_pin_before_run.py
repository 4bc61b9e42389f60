"""Pinning an MCP client before it ever ran: ``tabwarden setup --client claude|codex`` and
``pair-client --program CMD`` compute, from the command a person starts the client with, the
identity ``tabwarden mcp`` will measure when that client spawns it (``program_identity`` in
tabwarden/bridge/client_identity.py), so the client's first call is served with no pair-client
round after a refused start.

With the real clients scripts/setup installs for the suite (tests/agent/node_modules/.bin):
Claude Code (a native program behind npm's ``.bin`` symlink) and Codex (npm's ``bin/codex.js``
under node, which starts its platform package's native ``codex``, the process that spawns the
MCP servers). Each is pinned before it runs, then run for real, offline, its model a scripted
API (tests/browser/scripted_api.py, a loopback HTTP server: no Chromium), and its first call
(``bridge_status``) must be served. The browser is ``FakeBrowser`` (Chrome's half of native
messaging) in front of the real host. A node CLI laid out as npm installs one (``.bin`` symlink,
``#!/usr/bin/env node``, ``node_modules/<pkg>/package.json``) is pinned the same way and run as
its own MCP client; a different program of the same name first on PATH is refused
``client_not_paired``; a command whose client cannot be known before it runs (a wrapper, a shell
script) is refused before any phrase, with a hint naming ``tabwarden pair-client``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tabwarden.cli import ceremony
from tests.browser.scripted_api import (
    Script,
    Step,
    ToolResult,
    scripted_messages_api,
    scripted_responses_api,
)
from tests.cli.world import CODE_RE, World, host_reply
from tests.fakes import FakeBrowser
from tests.pty_cli import PROMPT, Pty

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="/proc and pty: Linux")

AGENT_BIN = Path(__file__).resolve().parents[2] / "tests" / "agent" / "node_modules" / ".bin"
RUN_S = 240  # one agent run's hang guard; generous for a busy 2-core machine


@pytest.fixture
def browser(world: World) -> Iterator[FakeBrowser]:
    """The extension loaded: the browser started the real host for label chromium."""
    found = FakeBrowser(world.runtime, label="chromium", attested=True)
    try:
        found.wait_socket()
        found.hello()
        yield found
    finally:
        found.close()


def _agents_on_path(world: World) -> None:
    assert (AGENT_BIN / "claude").exists(), "Claude Code is missing: run scripts/setup"
    assert (AGENT_BIN / "codex").exists(), "Codex is missing: run scripts/setup"
    world.env["PATH"] = os.pathsep.join(
        [str(AGENT_BIN), str(Path(sys.executable).parent), world.env["PATH"]]
    )


def _expect_nth(child: Pty, text: bytes, n: int, timeout: float = 120.0) -> None:
    """Until ``text`` has appeared ``n`` times (a hang guard, not a timing assertion)."""
    deadline = time.monotonic() + timeout
    while child.output.count(text) < n:
        if child.master is None or time.monotonic() > deadline:
            raise AssertionError(f"{text!r} appeared fewer than {n} times: {child.output!r}")
        child._pump(0.1)


def _setup(world: World, browser: FakeBrowser, client: str) -> bytes:
    """``tabwarden setup --client CLIENT`` as a person answers it: the pairing phrase, the code
    entered window-only in the options page, then pair-client's phrase for the pin."""
    child = world.spawn(
        "setup", "--browser", "chromium", "--file-store", "--window-only", "--client", client
    )
    child.expect(PROMPT)
    child.send(ceremony.phrase_for("pair") + "\n")
    child.expect(b"enrol chromium: open ")
    code = CODE_RE.search(child.output)
    assert code, child.output
    begun = host_reply(browser, "pair_begin", {"code": code.group(1).decode()})
    host_reply(browser, "pair_complete", {"challengeId": begun["challengeId"], "windowOnly": True})
    _expect_nth(child, PROMPT, 2)  # pair's phrase prompt was the first
    child.send(ceremony.phrase_for("pair-client") + "\n")
    status, out = child.finish(timeout=120)
    assert status == 0, out
    assert b"pair which one" not in out and b"waiting for your MCP client" not in out, out
    assert b"setup: done" in out, out
    return out


def _nothing_ran_yet(world: World) -> None:
    """No client has started ``tabwarden mcp`` in this world (none remembered)."""
    assert world.json("clients", "--json")["recent"] == []


def _served(result: ToolResult) -> None:
    assert not result.is_error, result.text[:500]
    assert result.json()["extensionConnected"] is True, result.text[:500]


def _run(argv: list[str], env: dict[str, str], cwd: Path) -> str:
    done = subprocess.run(  # noqa: S603 - the real client, as a person starts it
        argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=RUN_S, check=False,
    )  # fmt: skip
    return done.stdout + done.stderr


@pytest.mark.promise("H1-15")
def test_claude_code_pinned_by_setup_before_it_ran_is_served_on_its_first_call(
    world: World, browser: FakeBrowser, tmp_path: Path
) -> None:
    _agents_on_path(world)
    out = _setup(world, browser, "claude")
    assert b"pinning claude-code before it runs" in out, out
    _nothing_ran_yet(world)
    [paired] = world.json("clients", "--json")["paired"]
    assert paired["exe"].endswith("/@anthropic-ai/claude-code/bin/claude.exe"), paired

    project = tmp_path / "project"
    project.mkdir()
    first = Script([Step("bridge_status", lambda _: {}, _served)])
    with scripted_messages_api(first) as api:
        env = dict(
            world.env,
            ANTHROPIC_BASE_URL=api,
            ANTHROPIC_API_KEY="sk-ant-scripted-not-a-key",
            DISABLE_TELEMETRY="1",
            DISABLE_AUTOUPDATER="1",
            DISABLE_ERROR_REPORTING="1",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            ENABLE_TOOL_SEARCH="false",
        )
        shown = _run(
            ["claude", "-p", "Check the bridge.", "--allowedTools", "mcp__tabwarden"], env, project
        )
    assert first.failures == [] and first.finished, (first.failures, shown[-3000:])


CODEX_PROVIDER = """\
model = "scripted"
model_provider = "scripted"
[model_providers.scripted]
name = "scripted"
base_url = "{api}"
wire_api = "responses"
env_key = "TABWARDEN_SCRIPTED_MODEL_KEY"
"""


@pytest.mark.promise("H1-15")
def test_codex_pinned_by_setup_before_it_ran_is_served_on_its_first_call(
    world: World, browser: FakeBrowser, tmp_path: Path
) -> None:
    _agents_on_path(world)
    first = Script([Step("bridge_status", lambda _: {}, _served)])
    with scripted_responses_api(first) as api:
        config = world.home / ".codex" / "config.toml"
        config.parent.mkdir()
        config.write_text(CODEX_PROVIDER.format(api=api))  # the person's own lines
        out = _setup(world, browser, "codex")
        assert b"pinning codex before it runs" in out, out
        assert config.read_text().startswith(CODEX_PROVIDER.format(api=api))
        _nothing_ran_yet(world)
        [paired] = world.json("clients", "--json")["paired"]
        assert "/vendor/" in paired["exe"] and paired["exe"].endswith("/bin/codex"), paired

        project = tmp_path / "project"
        project.mkdir()
        env = dict(world.env, TABWARDEN_SCRIPTED_MODEL_KEY="scripted-not-a-key")
        env.pop("CODEX_HOME", None)
        env.pop("OPENAI_API_KEY", None)
        shown = _run(
            ["codex", "exec", "--skip-git-repo-check", "--json", "Check the bridge."], env, project
        )
    assert first.failures == [] and first.finished, (first.failures, shown[-3000:])


#: A minimal MCP client over stdio, as a node CLI: it starts `tabwarden mcp` (the first
#: `tabwarden` on PATH), initializes, calls bridge_status and prints the result as one line.
NODE_CLIENT = """\
#!/usr/bin/env node
const { spawn } = require("node:child_process");
const server = spawn("tabwarden", ["mcp"], { stdio: ["pipe", "pipe", "inherit"] });
let buffer = "";
const send = (m) => server.stdin.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\\n");
server.stdout.on("data", (chunk) => {
  buffer += chunk;
  let at;
  while ((at = buffer.indexOf("\\n")) >= 0) {
    const message = JSON.parse(buffer.slice(0, at));
    buffer = buffer.slice(at + 1);
    if (message.id === 1) {
      send({ method: "notifications/initialized" });
      send({ id: 2, method: "tools/call", params: { name: "bridge_status", arguments: {} } });
    } else if (message.id === 2) {
      console.log(JSON.stringify(message.result));
      server.kill();
      process.exit(0);
    }
  }
});
send({ id: 1, method: "initialize", params: {
  protocolVersion: "2025-03-26", capabilities: {},
  clientInfo: { name: "pin-test", version: "1" } } });
"""


def _npm_cli(root: Path, name: str, body: str) -> Path:
    """A CLI laid out as npm installs one: node_modules/<name>/{package.json,cli.js} and the
    .bin symlink to it. Returns the .bin directory."""
    package = root / "node_modules" / name
    package.mkdir(parents=True)
    (package / "package.json").write_text(json.dumps({"name": name, "version": "1.0.0"}))
    script = package / "cli.js"
    script.write_text(body)
    script.chmod(0o755)
    bin_dir = root / "node_modules" / ".bin"
    bin_dir.mkdir()
    (bin_dir / "my-agent").symlink_to(Path("..") / name / "cli.js")
    return bin_dir


def _call(world: World, env: dict[str, str], tmp_path: Path) -> dict[str, object]:
    proc = subprocess.run(  # noqa: S603 - the client as a person starts it: by name on PATH
        ["my-agent"], cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, capture_output=True,
        text=True, timeout=RUN_S, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def _pin(world: World, *args: str) -> tuple[int, bytes]:
    child = world.spawn("pair-client", *args)
    child.expect(PROMPT)
    child.send(ceremony.phrase_for("pair-client") + "\n")
    return child.finish()


@pytest.mark.promise("H1-15")
def test_a_node_cli_pinned_before_it_ran_is_served_and_its_namesake_is_refused(
    paired: World, browser: FakeBrowser, tmp_path: Path
) -> None:
    world = paired
    bin_dir = _npm_cli(tmp_path / "real", "my-agent", NODE_CLIENT)
    env = dict(world.env)
    env["PATH"] = os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), env["PATH"]])
    world.env = env
    status, out = _pin(world, "--program", "my-agent", "--label", "my-agent")
    assert status == 0, out
    _nothing_ran_yet(world)
    [pinned] = world.json("clients", "--json")["paired"]
    assert pinned["exe"].endswith("/node_modules/my-agent/cli.js"), pinned

    result = _call(world, env, tmp_path)
    assert not result.get("isError"), result
    assert '"extensionConnected": true' in json.dumps(result).replace('\\"', '"'), result

    # The same name, another program (one byte differs), first on PATH: refused.
    other = _npm_cli(tmp_path / "other", "my-agent", NODE_CLIENT + "// another program\n")
    env["PATH"] = os.pathsep.join([str(other), env["PATH"]])
    result = _call(world, env, tmp_path)
    assert result.get("isError") is True and "client_not_paired" in json.dumps(result), result
    assert world.json("clients", "--json")["paired"] == [pinned]


@pytest.mark.promise("H1-15")
def test_a_client_that_cannot_be_known_before_it_runs_is_refused_before_the_phrase(
    paired: World, tmp_path: Path
) -> None:
    world = paired
    shell = tmp_path / "agent.sh"
    shell.write_text('#!/bin/sh\nexec my-real-agent "$@"\n')
    shell.chmod(0o755)
    env_wrapper = tmp_path / "agent-env"
    env_wrapper.symlink_to("/usr/bin/env")
    before = world.snapshot()
    for command, why in (
        (str(shell), b"a shell script usually starts something else"),
        (str(env_wrapper), b"is a wrapper (env)"),
        ("node", b"is the interpreter node"),
        ("no-such-agent-anywhere", b"no program 'no-such-agent-anywhere'"),
    ):
        child = world.spawn("pair-client", "--program", command)
        status, out = child.finish()
        assert status != 0, out
        assert why in out and b"client_not_paired" in out, out
        assert b"`tabwarden pair-client`" in out, out  # the next step: measure it running
        assert PROMPT not in out, out
    assert world.snapshot() == before


def test_setup_with_an_unpinnable_program_says_so_and_waits_for_it_to_run(
    world: World, browser: FakeBrowser, tmp_path: Path
) -> None:
    shell = tmp_path / "agent.sh"
    shell.write_text('#!/bin/sh\nexec my-real-agent "$@"\n')
    shell.chmod(0o755)
    child = world.spawn(
        "setup", "--browser", "chromium", "--file-store", "--window-only",
        "--client", "json", "--program", str(shell),
    )  # fmt: skip
    child.expect(PROMPT)
    child.send(ceremony.phrase_for("pair") + "\n")
    child.expect(b"enrol chromium: open ")
    code = CODE_RE.search(child.output)
    assert code, child.output
    begun = host_reply(browser, "pair_begin", {"code": code.group(1).decode()})
    host_reply(browser, "pair_complete", {"challengeId": begun["challengeId"], "windowOnly": True})
    child.expect(b"waiting for your MCP client to start `tabwarden mcp`", timeout=120)
    text = child.output.decode(errors="replace")
    assert "cannot pin" in text and "before it runs" in text, text
    assert "`tabwarden pair-client`" in text, text
    child.send("\x03")
    status, out = child.finish()
    assert status == 130, out
    assert world.json("clients", "--json")["paired"] == []
