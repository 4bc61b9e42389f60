"""``tabwarden setup`` — one guided terminal session from a fresh install to a paired browser.

Orchestration only: every step is done by the code that does it alone, never a second copy —
``install``'s function for the host registration, and as their own processes (so the host
attests them as what they are) ``tabwarden status --json`` for "is the extension connected" and
``tabwarden pair`` / ``pair --browser`` for the key and the one-time code, with their typed
phrase on this terminal.

Each step first reads its state: a step already done says so ("✓ … (already done)") and the
session moves on, which is what makes ``setup`` resumable and idempotent — a rerun after Ctrl-C,
a crash or a closed terminal continues where the person stopped, and a rerun of a finished setup
writes nothing. A step the person must do (load the extension, enter the code) is said once,
exactly, and then waited for with visible progress (a spinner and the elapsed time on a
terminal, a plain line every 30 s otherwise) until its condition holds or the person presses
Ctrl-C, which leaves everything as the last finished step left it.

Here: the order of the steps and the command's help. ``steps`` holds the steps up to a paired
browser, ``clients`` the MCP client's registration and pinning, ``output`` the step lines and
waits.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from tabwarden.cli.setup.clients import client_step, codex_block
from tabwarden.cli.setup.output import Out
from tabwarden.cli.setup.steps import (
    OPTIONS_URL,
    StepFailed,
    choose_browser,
    detect_browsers,
    extension_step,
    host_step,
    live_check,
    pair_step,
)

__all__ = ["OPTIONS_URL", "add_parser", "codex_block", "detect_browsers", "run"]

RERUN = "run `tabwarden setup` again to continue where you stopped"


def run(args: argparse.Namespace) -> int:
    out = Out()
    try:
        label = choose_browser(args, out)
        host_step(label, args.manifest_dir, out)
        extension_step(label, out)
        pair_step(label, args, out)
        client_step(args, out)
    except KeyboardInterrupt:
        out.line()
        out.line(f"stopped: every finished step stays done; {RERUN}.")
        return 130
    except StepFailed as exc:
        if exc.status == 130:  # Ctrl-C reached the command first
            out.line(f"stopped: every finished step stays done; {RERUN}.")
            return 130
        out.line(f"stopped: `{exc.command}` failed (above); once that is fixed, {RERUN}.")
        return exc.status
    if not live_check(label, out):
        out.line(f"setup: not done yet (`tabwarden status` says what is left); then {RERUN}.")
        return 1
    out.line(f"setup: done. Your options page (sites, permissions, audit log): {OPTIONS_URL}")
    out.line("`tabwarden status` shows the whole state.")
    return 0


# ----------------------------------------------------------------------------------- parser

DESCRIPTION = """\
One guided terminal session from an installed package to a browser that is connected and
paired. Each step first checks whether it is already done and says so ("✓ … (already done)"), so
you can stop at any time (Ctrl-C) and run `tabwarden setup` again to continue; a finished setup
run again changes nothing.

The steps: pick the browser (detected, or --browser); register the native-messaging host for
it (as `tabwarden install`); tell you how to load the extension and wait until it connects;
pair this computer (as `tabwarden pair`: you type a phrase, once) and wait while you enter the
printed code in the extension's options page (its URL is printed) and touch your authenticator,
or tick "no authenticator" for window-only; then, with --client, register your MCP client the
way it reads its config (Claude Code: `claude mcp add --scope user`; Codex: a
[mcp_servers.tabwarden] table appended to ~/.codex/config.toml; json: the lines to add) and pin
it before it ever runs (`tabwarden pair-client --program`: the identity `tabwarden mcp` will
measure when that client starts it, through symlinks, #! lines and launchers; for json name the
command with --program), so its first call is served. A client that cannot be pinned that way
(a wrapper, a shell script) is measured instead: you start it once while setup waits, then
`tabwarden pair-client`. Without --client it prints the lines for each.
Last, a live check: a fresh `tabwarden status` must find the host answering with the extension
connected and the browser paired (exit status 1 and its next steps otherwise).
"""

EXAMPLES: Sequence[tuple[str, str]] = [
    ("tabwarden setup", "guided: detect the browser, then step by step"),
    ("tabwarden setup --browser chrome", "for Google Chrome, without asking"),
    ("tabwarden setup --file-store", "no desktop keyring: keep the host key in a 0600 file"),
    ("tabwarden setup --window-only", "no authenticator: confirm every action in a window"),
    ("tabwarden setup --client claude", "then register and pin Claude Code"),
    ("tabwarden setup --client codex", "then add tabwarden to ~/.codex/config.toml and pin Codex"),
    ("tabwarden setup --client json --program my-agent", "print the lines; pin my-agent"),
]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from tabwarden.cli.help import add_command
    from tabwarden.cli.install import supported_browsers

    p = add_command(
        sub,
        "setup",
        summary="guided, resumable setup: host, extension, pairing, then your MCP client",
        description=DESCRIPTION,
        examples=EXAMPLES,
    )
    p.add_argument(
        "--browser",
        choices=sorted(supported_browsers()),
        help="the browser to set up (default: the one detected, or ask)",
    )
    p.add_argument(
        "--manifest-dir",
        type=lambda v: Path(v).expanduser().absolute(),
        metavar="DIR",
        help="register the host here (e.g. <profile>/NativeMessagingHosts), as install does",
    )
    p.add_argument(
        "--client",
        choices=("claude", "codex", "json"),
        help="the MCP client to register and pin: Claude Code (claude mcp add --scope user), "
        "Codex (~/.codex/config.toml) or any other (json: print the lines to add)",
    )
    p.add_argument(
        "--program",
        metavar="CMD",
        help="with --client: the command the client is started as (default: claude, codex on "
        "PATH); pinned before it runs",
    )
    p.add_argument(
        "--file-store",
        action="store_true",
        help="when pairing, keep the host key in a 0600 file instead of the OS keyring",
    )
    p.add_argument(
        "--window-only",
        action="store_true",
        help='you have no authenticator: the options page step says to tick "no authenticator"',
    )
    p.set_defaults(func=_cmd_setup)


def _cmd_setup(args: argparse.Namespace) -> int:
    return run(args)
