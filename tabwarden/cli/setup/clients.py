"""``tabwarden setup --client``: register the MCP client the way it reads its config, then pin it
with ``tabwarden pair-client``."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from tabwarden.cli.setup.output import Out
from tabwarden.cli.setup.steps import StepFailed, effective, run_step
from tabwarden.errors import UsageError


def _tabwarden_exe() -> str:
    """The ``tabwarden`` a client should start (as ``tabwarden status`` prints it)."""
    return shutil.which("tabwarden") or str(Path(sys.executable).with_name("tabwarden"))


def _home() -> Path:
    return Path(os.environ.get("HOME") or Path.home())


def claude_registered(home: Path, cwd: Path) -> bool:
    """Whether Claude Code's own config (``~/.claude.json``) names a ``tabwarden`` server for
    every project (user scope) or for ``cwd`` (local scope)."""
    try:
        config = json.loads((home / ".claude.json").read_text("utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(config, dict):
        return False
    scopes = [config.get("mcpServers")]
    projects = config.get("projects")
    if isinstance(projects, dict) and isinstance(projects.get(str(cwd)), dict):
        scopes.append(projects[str(cwd)].get("mcpServers"))
    return any(isinstance(s, dict) and "tabwarden" in s for s in scopes)


def codex_config(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    codex_home = env.get("CODEX_HOME")
    return (Path(codex_home) if codex_home else _home() / ".codex") / "config.toml"


_CODEX_TABLE = re.compile(r'^\s*\[\s*mcp_servers\s*\.\s*"?tabwarden"?\s*\]', re.M)


def codex_block(exe: str) -> str:
    """The ``[mcp_servers.tabwarden]`` table Codex reads; the variables that say where the socket
    and the trust record are passed on by name (Codex passes a short list otherwise)."""
    from tabwarden.cli.status import CODEX_ENV_VARS

    return (
        "\n[mcp_servers.tabwarden]\n"
        f"command = {json.dumps(exe)}\n"
        'args = ["mcp"]\n'
        f"env_vars = {json.dumps(list(CODEX_ENV_VARS))}\n"
    )


def register_client(client: str, out: Out) -> None:
    """Point the named client at ``tabwarden mcp``, the way that client reads its config."""
    exe = _tabwarden_exe()
    if client == "claude":
        if claude_registered(_home(), Path.cwd()):
            out.already("Claude Code starts `tabwarden mcp` (~/.claude.json)")
            return
        claude = shutil.which("claude")
        if claude is None:
            raise UsageError(
                "Claude Code (`claude`) is not on PATH",
                hint="Install Claude Code, or use `tabwarden setup --client json` and add the "
                "printed lines to your client's config yourself.",
            )
        out.step("registering tabwarden with Claude Code (claude mcp add --scope user)")
        command = [claude, "mcp", "add", "--scope", "user", "tabwarden", "--", exe, "mcp"]
        done = subprocess.run(command, check=False, stdin=subprocess.DEVNULL)  # noqa: S603
        if done.returncode != 0:
            raise StepFailed(" ".join(command), done.returncode)
        out.done("Claude Code starts `tabwarden mcp` (~/.claude.json)")
    elif client == "codex":
        path = codex_config()
        try:
            text = path.read_text("utf-8")
        except FileNotFoundError:
            text = ""
        if _CODEX_TABLE.search(text):
            out.already(f"Codex starts `tabwarden mcp` ({path})")
            return
        out.step(f"adding [mcp_servers.tabwarden] to {path}")
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:  # the person's own lines stay
            handle.write(("\n" if text and not text.endswith("\n") else "") + codex_block(exe))
        out.done(f"Codex starts `tabwarden mcp` ({path})")
    else:
        server = {"mcpServers": {"tabwarden": {"command": exe, "args": ["mcp"]}}}
        out.step("add this to your client's MCP config (Cursor, Claude Desktop, …):")
        out.line(f"    {json.dumps(server)}")


def _spawners() -> list[tuple[str, str]]:
    from tabwarden.bridge.spawner import recent_spawners
    from tabwarden.paths import config_dir

    return [(e.path, e.sha256) for e in recent_spawners(config_dir())]


#: The command each named client is started as, and the label it is paired under.
PROGRAMS = {"claude": ("claude", "claude-code"), "codex": ("codex", "codex")}


def _label_for(client: str, program: str) -> str:
    if client in PROGRAMS:
        return PROGRAMS[client][1]
    import re

    name = re.sub(r"[^a-z0-9_-]+", "-", Path(program).name.lower()).strip("-_")[:32]
    return name.rstrip("-_") or "client"


def pin_before_run(client: str, program: str | None, out: Out) -> bool:
    """Pin the client by the command that starts it, before it ever ran: the identity
    ``tabwarden mcp`` will measure when it is spawned (``program_identity``), with
    ``pair-client --program`` and its phrase. False (said why) when it cannot be computed:
    nothing is pinned, the caller falls back to measuring the running client."""
    from tabwarden.bridge.client_identity import SpawnerUnmeasurable, program_identity

    command = program or (PROGRAMS[client][0] if client in PROGRAMS else None)
    if command is None:
        return False
    try:
        identity = program_identity(command)
    except SpawnerUnmeasurable as exc:
        out.line(f"  x cannot pin {command!r} before it runs: {exc}")
        out.line("    so it is measured when it runs: `tabwarden pair-client` once it started")
        return False
    paired = {c.sha256: c for c in effective().paired_clients}
    if identity.sha256 in paired:
        out.already(f"MCP client paired: {paired[identity.sha256].label} ({identity.exe})")
        return True
    label = _label_for(client, command)
    out.step(
        f"pinning {label} before it runs ({identity.exe}; `tabwarden pair-client --program`: "
        "type the phrase it shows, then Tap in tabwarden's window if your browser asks)"
    )
    run_step("pair-client", "--program", command, "--label", label)
    out.done(f"MCP client paired: {label}, its first call is served")
    return True


def pin_client(client: str, out: Out, program: str | None = None) -> None:
    """Pin the program that starts ``tabwarden mcp``: by its command before it runs when that
    can be computed; else ``tabwarden pair-client`` on the running client (for Claude Code setup
    starts it once, ``claude mcp list``; for the others it asks the person and waits)."""
    if pin_before_run(client, program, out):
        return
    paired = effective().paired_clients
    if paired:
        names = ", ".join(f"{c.label} ({c.exe})" for c in paired)
        out.already(f"MCP client paired: {names}")
        return
    if not _spawners() and client == "claude" and (claude := shutil.which("claude")):
        out.step("starting Claude Code's server check once (claude mcp list)")
        subprocess.run(  # noqa: S603 - the person's own Claude Code, which starts `tabwarden mcp`
            [claude, "mcp", "list"], check=False, capture_output=True, stdin=subprocess.DEVNULL
        )
    if not _spawners():
        out.step("start your MCP client once with tabwarden configured (it starts `tabwarden mcp`)")
        out.wait("your MCP client to start `tabwarden mcp`", lambda: bool(_spawners()))
    out.step("pinning it (`tabwarden pair-client`: pick your client, then type the phrase)")
    run_step("pair-client")
    out.done("MCP client paired")


def client_step(args: argparse.Namespace, out: Out) -> None:
    """Register the client named by ``--client`` and pin it; without one, say how."""
    if args.client is None:
        from tabwarden.cli.status import mcp_config_lines

        if effective().paired_clients:
            out.already("MCP client paired")
            return
        out.step(
            "point your MCP client at tabwarden (or rerun with --client claude|codex|json), "
            "start it once, then `tabwarden pair-client`:"
        )
        for line in mcp_config_lines():
            out.line(f"    {line}")
        return
    register_client(args.client, out)
    pin_client(args.client, out, getattr(args, "program", None))
