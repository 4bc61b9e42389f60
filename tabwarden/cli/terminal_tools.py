"""``tabwarden tools`` and ``tabwarden call`` — every MCP tool at the terminal.

``tools`` prints the catalogue (``mcp_server/catalogue/``) offline: name, gate, risk and title
(``--json``: also the description and the argument schema). It touches no socket and no file.

``call TOOL key=value …`` makes one tool call through the whole chain as an MCP client would: it
spawns ``tabwarden mcp`` over stdio with the SDK's client (exactly what ``tabwarden demo`` and an
agent do), so hop 1's gate measures *this* process as the client — paired or not, killed or not,
it is refused exactly as any client would be — and the server's own bridge client does the
attestation and the handshake; nothing here talks to the host or reads the trust record. It
prints the structured result as JSON on stdout; image content is written to a new file (0600,
never overwriting) whose path it names on stderr. Arguments come only from the command line
(``key=value``: the value parsed as JSON when it parses, else the string; ``--json-args``);
stdin must be this process's controlling terminal (``ceremony.require_real_terminal`` against
stderr, so stdout may be piped): a program without a terminal cannot use a pairing of ``tabwarden
call`` to drive the browser. Each call is its own MCP session (one ``tabwarden mcp`` process),
so calls cannot chain tabs, unless they name one ``--session`` (``call_session``: a keeper holds
that session's MCP server between calls, attested both ways). Nothing here may print an
argument's value except as the tool's own result does.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from tabwarden.errors import TabwardenError, UsageError

#: A session's default idle timeout, in seconds (``call_session.DEFAULT_IDLE_S``, without its
#: imports: the parser is built for every command).
DEFAULT_IDLE_S = 600

__all__ = ["add_parsers", "parse_arguments"]

#: File name extensions for the image types tools return.
_EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp"}


class CallFailed(TabwardenError):
    """The tool answered with an error; ``code`` is the tool error's, set per instance."""

    def __init__(self, code: str, message: str, hint: str) -> None:
        self.code = code  # type: ignore[misc]
        super().__init__(message, hint=hint)


def parse_arguments(pairs: list[str], json_args: str | None) -> dict[str, Any]:
    """The call's arguments: ``--json-args`` (an object), then each ``key=value`` over it."""
    arguments: dict[str, Any] = {}
    if json_args is not None:
        try:
            given = json.loads(json_args)
        except ValueError:
            raise UsageError("--json-args is not valid JSON") from None
        if not isinstance(given, dict):
            raise UsageError("--json-args must be a JSON object")
        arguments.update(given)
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"arguments are key=value, and {pair.split('=')[0][:40]!r} is not")
        try:
            value: Any = json.loads(text)
        except ValueError:
            value = text
        arguments[key] = value
    return arguments


def _tools(args: argparse.Namespace) -> int:
    from tabwarden.mcp_server.catalogue import CATALOGUE

    if args.json:
        rows = [
            {
                "name": spec.name,
                "title": spec.title,
                "gate": spec.gate.value,
                "risk": spec.risk.value,
                "readOnly": spec.read_only,
                "description": spec.description,
                "inputSchema": spec.arguments.model_json_schema(),
            }
            for spec in CATALOGUE
        ]
        print(json.dumps({"tools": rows}, indent=2))
        return 0
    width = max(len(spec.name) for spec in CATALOGUE)
    print(f"{'TOOL':<{width}}  {'GATE':<16} {'RISK':<8} WHAT")
    for spec in CATALOGUE:
        print(f"{spec.name:<{width}}  {spec.gate.value:<16} {spec.risk.value:<8} {spec.title}")
    print(
        f"{len(CATALOGUE)} tools. Call one: `tabwarden call TOOL key=value …` "
        "(`tabwarden tools --json` shows each one's arguments)."
    )
    return 0


async def _one_call(tool: str, arguments: dict[str, Any]) -> Any:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    # every tool `tabwarden tools` lists, the opt-in families' too (docs/adr/0012)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-I", "-m", "tabwarden", "mcp", "--caps", "all"],
        env=dict(os.environ),
    )
    async with Client(params) as client:
        return await client.call_tool(tool, arguments)


def _save_image(directory: Path, tool: str, mime_type: str, data: str, n: int) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    suffix = f"-{n}" if n else ""
    path = directory / f"tabwarden-{tool}-{stamp}{suffix}.{_EXTENSIONS.get(mime_type, 'bin')}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        raise TabwardenError(f"could not create {path}: {exc.strerror}") from None
    with os.fdopen(fd, "wb") as fh:
        fh.write(base64.b64decode(data))
    return path


def _call(args: argparse.Namespace) -> int:
    from tabwarden.cli.call_session import Outcome, call_in_session
    from tabwarden.cli.ceremony import require_real_terminal
    from tabwarden.mcp_server.catalogue import BY_NAME

    if args.close:
        if args.session is None:
            raise UsageError("--close ends a session: name it with --session NAME")
        if args.tool is not None or args.arguments or args.json_args is not None:
            raise UsageError("--close takes no tool and no arguments")
    elif args.tool is None:
        raise UsageError("name a TOOL to call (`tabwarden tools` lists them)")
    elif args.tool not in BY_NAME:
        raise UsageError(f"no tool is called {args.tool!r}; `tabwarden tools` lists them")
    if args.idle_timeout is not None and args.session is None:
        raise UsageError("--idle-timeout is a session's: name it with --session NAME")
    arguments = parse_arguments(args.arguments, args.json_args)
    require_real_terminal(sys.stdin, sys.stderr)
    tool: str = args.tool or ""
    if args.session is None:
        outcome: Outcome | None = Outcome.of(asyncio.run(_one_call(tool, arguments)))
    else:
        outcome = asyncio.run(
            call_in_session(
                args.session,
                args.tool,
                arguments,
                close=args.close,
                idle_s=args.idle_timeout or DEFAULT_IDLE_S,
            )
        )
    if outcome is None:
        print(f"tabwarden: session {args.session!r} closed; its tabs were released")
        return 0
    if outcome.is_error:
        error = outcome.error
        raise CallFailed(
            str(error.get("code") or "internal_error"),
            str(error.get("message") or outcome.text or "the tool failed"),
            str(error.get("hint") or ""),
        )
    print(json.dumps(outcome.structured, indent=2, ensure_ascii=False))
    for n, (mime_type, data) in enumerate(outcome.images):
        path = _save_image(args.image_dir, tool, mime_type, data, n)
        print(f"tabwarden: {mime_type} saved to {path}", file=sys.stderr)
    return 0


def _keeper(args: argparse.Namespace) -> int:
    from tabwarden.cli.call_session import run_keeper

    return run_keeper(args.name, args.idle_timeout)


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from tabwarden.cli.help import JSON_HELP, add_command

    p = add_command(
        sub,
        "tools",
        summary="list every MCP tool: name, gate, risk (offline)",
        description="Print the MCP tools `tabwarden mcp` serves, from the catalogue, without "
        "touching the browser: each tool's name, its gate (the strongest guard every call "
        "passes), its risk and what it does. --json adds each tool's description and argument "
        "schema.",
        examples=[
            ("tabwarden tools", "the table"),
            ("tabwarden tools --json", "with every tool's arguments, for scripts"),
        ],
    )
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(func=_tools)

    p = add_command(
        sub,
        "call",
        summary="make one MCP tool call through the whole chain and print its result",
        description="Start `tabwarden mcp` as an MCP client would, make one call of TOOL and "
        "print its structured result as JSON (an error prints its code and hint). Arguments are "
        "key=value (the value read as JSON when it parses, e.g. tabId=3 or fullPage=true, else "
        "as text) or --json-args. Image content (a screenshot) is saved to a new file, named on "
        "stderr. The MCP server measures this command as its client: once a client is paired, "
        "pair it too (`tabwarden pair-client` after its first refused call). It needs a "
        "terminal on stdin. Without --session each call is its own session (one `tabwarden "
        "mcp` process): a tab one call opens is not the next call's (tab_not_owned) and stays "
        "as an orphan. With --session NAME the calls of that name share one session, kept by "
        "a small keeper process of yours (attested both ways on a private socket): the tabs "
        "one call opens stay the next call's. The session ends with --close, after "
        f"--idle-timeout seconds without a call (default {DEFAULT_IDLE_S}), or if its keeper "
        "dies; its tabs are then released (orphaned) and the next call of that name fails "
        "once with session_gone. `tabwarden tabs` lists the open sessions.",
        examples=[
            ("tabwarden call bridge_status", "is the browser there?"),
            ("tabwarden call tab_open url=https://example.com", "open a tab (a new session)"),
            (
                "tabwarden call --session work tab_open url=https://example.com",
                "open a tab in the session `work` (started if it is not running)",
            ),
            ("tabwarden call --session work page_text tabId=12", "read it in a later command"),
            ("tabwarden call --session work --close", "end the session; its tabs are released"),
            (
                "tabwarden call page_screenshot tabId=12 --image-dir /tmp",
                "save a screenshot into /tmp",
            ),
            (
                'tabwarden call tab_open --json-args \'{"url": "https://example.com"}\'',
                "the arguments as one JSON object",
            ),
        ],
    )
    p.add_argument(
        "tool", nargs="?", metavar="TOOL", help="a tool name (`tabwarden tools` lists them)"
    )
    p.add_argument(
        "arguments", nargs="*", metavar="KEY=VALUE", help="an argument (value: JSON, else text)"
    )
    p.add_argument("--json-args", metavar="JSON", help="every argument as one JSON object")
    p.add_argument(
        "--session",
        metavar="NAME",
        help="call within the session NAME (letters, digits, - and _), starting it if none runs",
    )
    p.add_argument(
        "--close", action="store_true", help="end the session named by --session (no TOOL)"
    )
    p.add_argument(
        "--idle-timeout",
        type=_seconds,
        metavar="SECONDS",
        help=f"when starting a session: end it after this long without a call "
        f"(default {DEFAULT_IDLE_S})",
    )
    p.add_argument(
        "--image-dir",
        type=lambda v: Path(v).expanduser().absolute(),
        default=Path.cwd(),
        metavar="DIR",
        help="where image content is saved (default: the current directory)",
    )
    p.set_defaults(func=_call)

    p = add_command(
        sub,
        "session-keeper",
        summary="keeps a `tabwarden call --session` session (started by it, not by hand)",
        description="The small process `tabwarden call --session NAME` starts to keep that "
        "session's MCP server between calls: it listens on a private socket in the runtime "
        "directory and serves only your own attested `tabwarden call`. It refuses to run from "
        "a terminal; end it with `tabwarden call --session NAME --close`.",
        examples=[
            (
                "tabwarden session-keeper work --idle-timeout 600",
                "what `tabwarden call --session work` starts (refused at a terminal)",
            ),
            ("tabwarden call --session work --close", "end the keeper of `work`"),
        ],
    )
    p.add_argument("name", metavar="NAME", help="the session's name")
    p.add_argument(
        "--idle-timeout",
        type=_seconds,
        default=DEFAULT_IDLE_S,
        metavar="SECONDS",
        help=f"end after this long without a call (default {DEFAULT_IDLE_S})",
    )
    p.set_defaults(func=_keeper)


def _seconds(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of seconds") from None
    if not 1 <= value <= 86400:
        raise argparse.ArgumentTypeError("give 1 to 86400 seconds")
    return value
