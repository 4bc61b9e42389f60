"""``tabwarden tabs`` — the tabs agents opened, at the terminal: session, origin, masked title,
orphaned or not; ``--close-orphans`` closes the orphaned ones (narrowing: free, no phrase).

It reaches the browser the way every terminal command reaches the host: over the bridge as role
``cli`` — the host attested, the mutual handshake keyed by the run secret, and the host attests
this process as our own ``tabwarden tabs`` in turn. The host relays only the two terminal
requests (``agent_tabs``, ``agent_tabs_close``: ``host/sessions.py``) from such a connection;
it never opens another channel. The list is what the extension sends: origins (never paths or
queries) and titles with card-like numbers masked. It never prints a secret, and never runs
without a real terminal (``require_real_terminal``, before anything is asked or printed); the host
refuses both requests while the kill switch is engaged or the record is refused.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

__all__ = ["add_parser", "run"]


async def _ask(label: str | None, close_orphans: bool) -> dict[str, Any]:
    from tabwarden.bridge.attest import make_attestor
    from tabwarden.mcp_server.bridge_client import BridgeClient

    client = BridgeClient(label=label, role="cli", attest=make_attestor({"host"}))
    try:
        closed = None
        if close_orphans:
            closed = (await client.call("agent_tabs_close")).get("closed")
        listing = await client.call("agent_tabs")
    finally:
        await client.close()
    tabs = listing.get("tabs")
    return {
        "tabs": tabs if isinstance(tabs, list) else [],
        "terminalSessions": _terminal_sessions(),
        **({"closed": closed} if close_orphans else {}),
    }


def _terminal_sessions() -> list[dict[str, Any]]:
    """The live ``tabwarden call --session`` sessions, each with the host's name for its MCP
    server (the ``session`` its tabs carry). Display only: measured from ``/proc``."""
    from tabwarden.cli.call_session import live_sessions
    from tabwarden.host.sessions import SessionUnmeasurable, measure_session

    found = []
    for live in live_sessions():
        mcp_session = None
        if live.mcp_pid is not None:
            try:
                mcp_session = measure_session(live.mcp_pid)
            except (SessionUnmeasurable, OSError):
                mcp_session = None
        found.append(
            {
                "name": live.name,
                "session": mcp_session,
                "started": live.started,
                "idleTimeoutS": live.idle_timeout_s,
            }
        )
    return found


def _line(tab: dict[str, Any], named: dict[str, str]) -> str:
    state = "orphaned" if tab.get("orphaned") is True else "in use"
    viewed = " (seen)" if tab.get("viewed") is True else ""
    origin = str(tab.get("origin") or "(no site)")
    title = str(tab.get("title") or "(no title)").replace("\n", " ")
    session = str(tab.get("session"))
    if session in named:
        session = f"--session {named[session]}"
    return f"  {tab.get('id')!s:>6}  {state + viewed:<16} {session:<28} {origin}  {title}"


def _clock(ts: float) -> str:
    import time

    return time.strftime("%H:%M:%S", time.localtime(ts))


def run(args: argparse.Namespace) -> int:
    from tabwarden.cli.ceremony import require_real_terminal

    # Every session's tabs are the person's business: at their terminal, never a pipe's. Checked
    # before the bridge is reached; the host refuses both requests while killed (host/bridge.py).
    require_real_terminal()
    report = asyncio.run(_ask(args.browser, args.close_orphans))
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    if args.close_orphans:
        print(f"closed {report['closed']} orphaned tab(s)")
    tabs: list[dict[str, Any]] = [t for t in report["tabs"] if isinstance(t, dict)]
    sessions = report["terminalSessions"]
    named = {s["session"]: s["name"] for s in sessions if s["session"]}
    for live in sessions:
        print(
            f"terminal session {live['name']}: open since {_clock(live['started'])}, ends after "
            f"{live['idleTimeoutS']} s without a call (`tabwarden call --session "
            f"{live['name']} --close` ends it now)"
        )
    if not tabs:
        print("no agent tabs open")
        return 0
    print(f"  {'TAB':>6}  {'STATE':<16} {'SESSION':<28} ORIGIN  TITLE")
    for tab in tabs:
        print(_line(tab, named))
    orphans = sum(1 for t in tabs if t.get("orphaned") is True)
    if orphans:
        print(
            f"{orphans} orphaned (their MCP session ended; nothing drives them): "
            "close them with `tabwarden tabs --close-orphans`"
        )
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from tabwarden.cli.help import JSON_HELP, add_command

    p = add_command(
        sub,
        "tabs",
        summary="the tabs agents opened: session, site, orphaned or not",
        description="List the tabs your agents opened in the running browser: the session (one "
        "MCP server process) that opened each, its site and its title (card-like numbers "
        "masked), and whether it is orphaned (its session ended). --close-orphans closes the "
        "orphaned ones (free: removing power needs no proof). Needs the browser running with "
        "the extension connected, a real terminal (not a pipe: an agent cannot run it), and "
        "the kill switch released. It also lists the open terminal sessions (`tabwarden call "
        "--session NAME`); their tabs show the session's name.",
        examples=[
            ("tabwarden tabs", "every agent tab"),
            ("tabwarden tabs --close-orphans", "close the tabs no session drives any more"),
            ("tabwarden tabs --browser chrome --json", "Chrome's agent tabs, as JSON"),
        ],
    )
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.add_argument("--close-orphans", action="store_true", help="close every orphaned tab first")
    p.add_argument(
        "--browser",
        metavar="LABEL",
        help="which browser's host, when several run (default: the one)",
    )
    p.set_defaults(func=run)
