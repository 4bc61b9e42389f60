"""``tabwarden status`` — what is installed and running, and what a newcomer must do next.

Read-only, except that, like every enforcement point, it latches the kill switch when it finds
the trust record tampered with (``trust.ratchet``: rolled back, edited, vanished, unsealed) —
narrowing only. It never widens anything and never prints a secret (the run secret is used to
prove the host, never shown). A running host is checked by doing the real handshake as role
``cli``, so "reachable" means exactly what the MCP server would get. It exits non-zero whenever
anything is denied: 3 when the record is refused, 1 when the kill switch is engaged.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tabwarden import __version__
from tabwarden.errors import TabwardenError
from tabwarden.manifests import EXTENSION_ID

#: The extension's options page (manifest.json options_page): pairing, sites, permissions,
#: clients and the audit log. (setup/steps.py prints the same; tests/cli/test_options_url.py.)
OPTIONS_URL = f"chrome-extension://{EXTENSION_ID}/options.html"

if TYPE_CHECKING:
    from tabwarden.trust.verify import BrowserGrant


_WINDOW_ONLY = "window-only: software confirmation"


def _browser_mode(browser: BrowserGrant) -> str:
    """How a paired browser confirms: its authenticator, or the window (software confirmation)."""
    if browser.window_only:
        return "window-only"
    count = len(browser.credentials)
    return f"webauthn, {count} credential{'' if count == 1 else 's'}"


def _extension_dir() -> str:
    """The directory to Load unpacked (install/extension.py), or why there is none."""
    from tabwarden.cli.install.extension import extension_to_load

    try:
        return str(extension_to_load())
    except TabwardenError as exc:
        return f"(none: {exc})"


def _extension_copy() -> str:
    """Whether that directory holds this version's extension: checkout, current, stale, missing."""
    from tabwarden.cli.install.extension import copy_state

    try:
        return copy_state()
    except TabwardenError:
        return "missing"


def collect() -> dict[str, Any]:
    from tabwarden.bridge.away import labels_with_records
    from tabwarden.cli.install import manifest_status
    from tabwarden.cli.install.running import registration_problems, running_browsers
    from tabwarden.mcp_server.bridge_client import BridgeClient
    from tabwarden.paths import config_dir, live_endpoints, runtime_dir, verify_private_dir

    rows = manifest_status()
    # The browsers actually running, and whether each can start the host (its own directory).
    running = running_browsers()
    problems = registration_problems(running)
    run = runtime_dir()
    try:
        verify_private_dir(run)
        run_state = "ok"
    except TabwardenError as exc:
        run_state = "missing" if not run.exists() else f"UNSAFE: {exc}"
    from tabwarden.bridge.attest import make_attestor

    attestor = make_attestor({"host"})
    hosts = []
    # Every label with a socket, and every label whose host left a last-seen record
    # (tabwarden/bridge/away.py): "away, expected back within N s" is worth saying too.
    labels = (
        sorted({ep.label for ep in live_endpoints(run)} | set(labels_with_records(run)))
        if run_state == "ok"
        else []
    )
    for name in labels:

        async def probe(label: str = name) -> dict[str, Any]:
            client = BridgeClient(label=label, role="cli", attest=attestor)
            try:
                return (await client.status()).as_dict()
            finally:
                await client.close()

        hosts.append({"label": name, **asyncio.run(probe())})
    from tabwarden.trust.gate import FILE_STORE_NAME, TrustGate, load_host_public

    gate = TrustGate()
    reading = gate.read()
    eff = reading.effective
    tamper = reading.tamper or gate.latch_note()
    try:
        public = load_host_public(gate.config)
        fingerprint = public.fingerprint if public is not None else None
    except TabwardenError as exc:
        fingerprint = f"unavailable: {exc}"
    trust = {
        "path": str(gate.path),
        "keyStore": "file" if (gate.config / FILE_STORE_NAME).exists() else "keyring",
        "fingerprint": fingerprint,
        "paired": eff.epoch > 0 or bool(eff.refused),
        "refused": eff.refused,
        "tampered": None
        if tamper is None
        else {"kind": tamper.kind, "reason": tamper.reason, "next": tamper.next_step},
        "killed": eff.killed,
        "epoch": eff.epoch,
        "clients": [{"label": c.label, "exe": c.exe} for c in eff.paired_clients],
        "browsers": [b.label for b in eff.browsers],
        "browserModes": {b.label: _browser_mode(b) for b in eff.browsers},
        "enrolledBrowsers": [b.label for b in eff.browsers if b.credentials],
        "policy": eff.policy.to_json(),
        "ignored": list(eff.ignored),
    }
    return {
        "version": __version__,
        "trust": trust,
        "extensionId": EXTENSION_ID,
        "extensionDir": _extension_dir(),
        "extensionCopy": _extension_copy(),
        "optionsUrl": OPTIONS_URL,
        "manifests": [
            {"browser": r.browser, "ok": r.ok, "line": r.as_line(), "path": str(r.manifest_path)}
            for r in rows
        ],
        "running": [
            {"browser": b.label, "pid": b.pid, "userDataDir": str(b.user_data_dir or "")}
            for b in running
        ],
        "hostProblems": [p.as_dict() | {"line": p.as_line()} for p in problems],
        "runtimeDir": {"path": str(run), "state": run_state},
        "configDir": str(config_dir()),
        "hosts": hosts,
    }


#: What tabwarden/paths.py reads to find the socket and the trust record (Codex passes an MCP
#: server only the variables it is told to; Claude Code passes its whole environment).
CODEX_ENV_VARS = (
    "XDG_RUNTIME_DIR",
    "XDG_CONFIG_HOME",
    "TABWARDEN_RUNTIME_DIR",
    "TABWARDEN_CONFIG_DIR",
)


def mcp_config_lines() -> list[str]:
    """How to point the common MCP clients at this installation's server."""
    import shutil
    import sys
    from pathlib import Path

    exe = shutil.which("tabwarden") or str(Path(sys.executable).with_name("tabwarden"))
    server = json.dumps({"mcpServers": {"tabwarden": {"command": exe, "args": ["mcp"]}}})
    return [
        f"Claude Code: claude mcp add tabwarden -- {exe} mcp",
        # Codex starts MCP servers with a short list of variables (HOME, PATH, …): the ones
        # that say where the socket and the trust record are must be passed on by name.
        f'Codex (~/.codex/config.toml): [mcp_servers.tabwarden] command = "{exe}" args = ["mcp"]'
        f" env_vars = {json.dumps(list(CODEX_ENV_VARS))}",
        f"JSON (Cursor, Claude Desktop, …): {server}",
    ]


def next_steps(report: dict[str, Any]) -> list[str]:
    steps = []
    trust = report["trust"]
    tampered = trust.get("tampered")
    if tampered and trust["refused"]:
        steps.append(
            f"The trust record was tampered with ({tampered['reason']}); everything is denied "
            f"and the kill switch is latched. {tampered['next']}"
        )
    elif tampered and trust["killed"]:
        steps.append(
            f"The kill switch was latched because the trust record was tampered with "
            f"({tampered['reason']}). {tampered['next']}"
        )
    elif trust["refused"]:
        steps.append(
            f"The trust record is refused ({trust['refused']}); everything is denied until it is "
            "fixed."
        )
    elif trust["killed"]:
        steps.append(
            "The kill switch is engaged: a person releases it with `tabwarden unkill` at a "
            "terminal."
        )
    # In the order a person does them: the browser side first, since the code `pair` prints
    # is entered in the extension's options page and expires in 10 minutes.
    # A running browser that cannot start the host: its own label and directory. While no
    # extension is connected that is the first thing to fix; once one is, it is only worth saying
    # (another browser or profile of this user), and it does not make a working setup not ready.
    problems = [f"{p['line']}." for p in report["hostProblems"]]
    connected = any(h.get("extensionConnected") for h in report["hosts"])
    if problems and not connected:
        steps.extend(problems)
    elif not problems and not any(m["ok"] for m in report["manifests"]):
        steps.append(
            "Register the host with the browser you use: `tabwarden install --browser LABEL`, "
            "LABEL one of chrome, chromium, brave, edge, vivaldi."
        )
    copy = report.get("extensionCopy")
    registered = [m.get("browser") for m in report["manifests"] if m["ok"] and m.get("browser")]
    if copy == "stale" or (copy == "missing" and registered):
        browser = registered[0] if registered else "LABEL"
        steps.append(
            f"The extension at {report['extensionDir']} is "
            + ("not this version" if report["extensionCopy"] == "stale" else "missing")
            + f": run `tabwarden install --browser {browser}` to update it, then press Reload "
            "on tabwarden in chrome://extensions."
        )
    if not report["hosts"]:
        steps.append(
            "Load the extension: chrome://extensions → Developer mode → Load unpacked → "
            f"{report['extensionDir']} (its ID must be {EXTENSION_ID}); the browser then "
            "starts the host."
        )
    elif any(h.get("extensionAway") for h in report["hosts"]) and not any(
        h.get("extensionConnected") for h in report["hosts"]
    ):
        steps.append(
            "The extension is reconnecting by itself (its wake alarm restarts the service "
            "worker); wait the time shown above, then retry."
        )
    elif not any(h.get("hostReachable") for h in report["hosts"]):
        steps.append(
            "No host is running: open the browser with the tabwarden extension enabled "
            "(the extension then starts the host)."
        )
    elif not any(h.get("extensionConnected") for h in report["hosts"]):
        steps.append(
            "A host runs but no extension is connected: reload the extension in "
            "chrome://extensions."
        )
    if not trust["paired"]:
        steps.append(
            "Pair this computer: `tabwarden pair` in a terminal (add --file-store without a "
            "keyring)."
        )
    elif not trust["refused"]:
        if not trust["browsers"]:
            steps.append(
                "No browser is paired: open the tabwarden extension's options page, enter the "
                "one-time code `tabwarden pair` printed and touch your authenticator (or tick "
                '"no authenticator"). The code lasts 10 minutes; `tabwarden pair --browser '
                "LABEL` prints a new one for browser LABEL."
            )
        elif not trust["enrolledBrowsers"]:
            steps.append(
                "No browser is enrolled with an authenticator: confirmations are software "
                "confirmation (the window). To enrol one: `tabwarden pair --browser LABEL`, then "
                "enter its code in that browser's options page and touch the authenticator."
            )
        if not trust["clients"]:
            steps.append(
                "No MCP client is paired, so every call is refused: `tabwarden pair-client "
                "--program claude` (or `codex`, or the command your client runs) pins it before it "
                "runs; or start your client once, then `tabwarden pair-client`."
            )
    if report["runtimeDir"]["state"].startswith("UNSAFE"):
        steps.append(
            "Fix the runtime directory (yours, mode 0700, not a symlink) or set "
            "TABWARDEN_RUNTIME_DIR."
        )
    if not steps:
        steps.append(
            "Ready: paired, a browser enrolled with an authenticator, an MCP client paired and "
            "the extension connected."
        )
    if connected:
        steps.extend(problems)
    steps.extend(mcp_config_lines())
    return steps


def _clock(ts: object) -> str:
    import time

    if not isinstance(ts, (int, float)):
        return "?"
    return time.strftime("%H:%M:%S", time.localtime(ts))


def _seen_text(h: dict[str, Any]) -> str:
    """Connected since / away (reason, expected back) / last seen, from bridge_status fields."""
    parts = []
    if h.get("extensionConnected") and h.get("connectedSince") is not None:
        parts.append(f"since {_clock(h['connectedSince'])}")
    if h.get("extensionAway"):
        parts.append(f"AWAY, expected back within {h.get('expectedBackWithinS')} s")
    if h.get("lastDisconnectAt") is not None:
        reason = h.get("lastDisconnectReason") or "unknown reason"
        parts.append(f"last disconnect {_clock(h['lastDisconnectAt'])}: {reason}")
    return "; " + "; ".join(parts) if parts else ""


def run(args: argparse.Namespace) -> int:
    report = collect()
    report["next"] = next_steps(report)
    status = 3 if report["trust"]["refused"] else (1 if report["trust"]["killed"] else 0)
    if getattr(args, "json", False):
        print(json.dumps(report, indent=2))
        return status
    print(f"tabwarden {report['version']}  (extension ID {report['extensionId']})")
    print(f"options page: {report['optionsUrl']}")
    print("browsers:")
    for m in report["manifests"]:
        print(f"  {m['line']}")
    for b in report["running"]:
        where = f", user data dir {b['userDataDir']}" if b["userDataDir"] else ""
        print(f"running: {b['browser']} (pid {b['pid']}{where})")
    rd = report["runtimeDir"]
    print(f"runtime dir: {rd['path']} ({rd['state']})")
    print(f"config dir:  {report['configDir']}")
    print(f"extension (Load unpacked): {report['extensionDir']} ({report['extensionCopy']})")
    t = report["trust"]
    state = (
        "REFUSED: " + t["refused"]
        if t["refused"]
        else ("KILLED" if t["killed"] else "ok" if t["paired"] else "none yet")
    )
    print(f"trust record: {t['path']} ({state}; epoch {t['epoch']}; key store {t['keyStore']})")
    print(f"host key: {t['fingerprint'] or 'none (not paired)'}")
    print(
        "paired browsers: "
        + (
            ", ".join(
                f"{label} ({_WINDOW_ONLY if mode == 'window-only' else mode})"
                for label, mode in t["browserModes"].items()
            )
            or "none"
        )
    )
    if t["paired"] and not t["refused"] and not t["enrolledBrowsers"]:
        print(
            "enrolled browsers: none — no browser is enrolled with an authenticator, so every "
            "confirmation is software confirmation (the window); "
            "`tabwarden pair --browser LABEL` lets one enrol"
        )
    print(
        "paired clients: "
        + (
            ", ".join(f"{c['label']} ({c['exe']})" for c in t["clients"])
            or "none (every call is refused until one is paired: `tabwarden pair-client`)"
        )
    )
    print("policy: " + json.dumps(t["policy"], sort_keys=True))
    if report["hosts"]:
        for h in report["hosts"]:
            version = f" (extension v{h['extensionVersion']})" if h.get("extensionVersion") else ""
            state = (
                f"extension connected{version}"
                if h["extensionConnected"]
                else (
                    "host reachable, extension NOT connected"
                    if h["hostReachable"]
                    else "no host (extension away)"
                    if h.get("extensionAway")
                    else "no host"
                    if h.get("socket") is None or not Path(h["socket"]).exists()
                    else f"host NOT reachable ({h['lastHandshakeError'] or 'stale socket'})"
                )
            )
            print(f"host {h['label']}: {state}{_seen_text(h)}")
    else:
        print("hosts: none running")
    print("next:")
    for step in report["next"]:
        print(f"  - {step}")
    return status
