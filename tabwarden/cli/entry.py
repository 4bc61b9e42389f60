"""The ``tabwarden`` command line: one entry point, lazily imported subcommands.

This is the one place where errors become exit codes and hints: every subcommand raises a
``TabwardenError`` subclass and ``main`` prints ``tabwarden: error[<code>]: <message>`` and the
hint to stderr, then exits with the class's status. Subcommand modules are imported only when
that subcommand runs, so ``tabwarden --help`` never pays for importing the MCP SDK.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tabwarden import __version__

if TYPE_CHECKING:  # imported where used: ``tabwarden mcp`` re-executes before it needs them
    import argparse
    from pathlib import Path

    from tabwarden.errors import TabwardenError

DESCRIPTION = """\
tabwarden — a guarded bridge between MCP clients (Claude Code, Codex, Cursor, ...) and your browser.

  MCP client ─stdio─▶ tabwarden mcp ─Unix socket─▶ tabwarden host ─native messaging─▶ extension

Getting started:
  tabwarden setup                         one guided session: host, extension, pairing, client
  tabwarden demo                          see every hop work, in a throwaway headless Chromium
  tabwarden install --browser chrome      register the host with your own Chrome, then load the
                                          extension from the path it prints (chrome://extensions)
  tabwarden pair                          make the host key; enter the code it prints in the
                                          extension's options page within 10 minutes
  tabwarden pair-client                   after your MCP client started `tabwarden mcp` once
  tabwarden status                        what is installed and running, and what to do next

`tabwarden COMMAND --help` explains a command, with examples.
"""

EPILOG = """\
Environment: TABWARDEN_CONFIG_DIR (config, default $XDG_CONFIG_HOME/tabwarden),
TABWARDEN_RUNTIME_DIR (sockets, default $XDG_RUNTIME_DIR/tabwarden), TABWARDEN_BROWSER (which
browser's host the MCP server uses when several run).
Exit status: 0 ok, 1 failure, 2 usage, 3 unsafe environment, 4 refused caller.
"""


def _cmd_host(args: argparse.Namespace) -> int:
    from tabwarden.host.main import run

    return run(args)


def _cmd_mcp(args: argparse.Namespace) -> int:
    import gc

    gc.disable()  # no collection walks the start's ~120k new objects; server.run freezes them
    from tabwarden.mcp_server.sdk import defer_package_inits

    defer_package_inits()  # the SDK's server half only: not the client its package imports
    from tabwarden.mcp_server.server import run

    return run(host_problems=_host_problems, caps=tuple(getattr(args, "caps", None) or ()))


#: ``tabwarden mcp --help``'s words on the tool families (``--caps``): the catalogue's
#: ``published.PROFILES``, written here so the parser imports nothing heavy;
#: tests/mcp_server/test_tools_list_budget.py holds them to it (each family and tool named).
CAPS_NOTES = """\
tool families (--caps): the default tool list is what most tasks need (tabs, navigate, history,
reload, follow, text, snapshot, find, screenshot, wait_for, click, fill, press, select, check,
dialog, frames, eval, bridge_status), about 27 kB of tools/list. Each family below is listed
only when named; a call to a tool of a family not named answers tool_not_enabled with the
--caps to add.
Families never loosen the policy: page_eval, page_fetch and page_upload stay off until the
signed policy turns them on.

  input     page_type, page_keys, page_mouse, page_hover, page_drag, page_clear, page_fill_form
            (trusted keyboard and mouse, forms in one call)
  layout    page_scroll, page_reveal, page_settle, page_viewport, page_emulate
            (scroll, lazy lists, settle, screen size, user agent, place, locale, timezone)
  read      page_markdown, page_scrape, page_get_state, cookie_get, storage_get
  devtools  page_console, page_network, page_fetch
  files     page_upload, page_pdf, page_wait_download
  all       every tool"""


def _caps(text: str) -> list[str]:
    """An argparse ``type``: comma-separated tool families (``--caps input,files``)."""
    import argparse

    from tabwarden.mcp_server.catalogue.published import ALL_CAPS, PROFILES, unknown_caps

    caps = [cap.strip() for cap in text.split(",") if cap.strip()]
    unknown = unknown_caps(caps)
    if unknown or not caps:
        raise argparse.ArgumentTypeError(
            f"no tool family {', '.join(unknown) or repr(text)}: "
            f"choose from {', '.join([*PROFILES, ALL_CAPS])}"
        )
    return caps


def _host_problems(env: Mapping[str, str] | None) -> list[dict[str, str]]:
    """For ``bridge_status`` while no host answers: which running browser cannot start one."""
    from tabwarden.cli.install.running import registration_problems, running_browsers

    return [p.as_dict() for p in registration_problems(running_browsers(), env=env)]


def _cmd_install(args: argparse.Namespace) -> int:
    from tabwarden.cli.install import install
    from tabwarden.cli.install.extension import place_extension

    report = install(args.browser, args.manifest_dir, force=args.force)
    for line in report.as_lines() + place_extension().as_lines(args.browser):
        print(line)
    return 0


def _cmd_uninstall(args: argparse.Namespace) -> int:
    from tabwarden.cli.install import uninstall
    from tabwarden.cli.install.extension import remove_extension_copy, stable_extension_dir

    result = uninstall(args.browser, args.manifest_dir)
    for line in result.as_lines():
        print(line)
    if args.browser is None and args.manifest_dir is None:  # every browser: the copy too
        removed = remove_extension_copy()
        if removed is not None:
            print(f"removed {removed} (remove tabwarden in chrome://extensions too)")
    elif stable_extension_dir().is_dir():
        print(f"kept {stable_extension_dir()}: other browsers may load it (`tabwarden uninstall`)")
    return 0


def _cmd_status(args: argparse.Namespace) -> int:
    from tabwarden.cli.status import run

    return run(args)


def _cmd_demo(args: argparse.Namespace) -> int:
    from tabwarden.cli.demo import run

    return run(args)


STATUS_DESCRIPTION = """\
Say what is installed, paired and running, and what is missing, in order: the host manifests
per browser, the runtime and config directories, the trust record (paired? killed? tampered?),
the host key's fingerprint, the paired browsers and how each confirms, the paired MCP clients,
the policy, every running host (checked with the real handshake, as the MCP server would see
it) — then the next step for each thing that is missing, and the lines that point your MCP
client at `tabwarden mcp`. Read-only. Exit status 0, or 1 while the kill switch is engaged, 3
while the trust record is refused.
"""

STATUS_EXAMPLES = [
    ("tabwarden status", "what works and what to do next"),
    ("tabwarden status --json", 'the same report as JSON ("next" holds the steps)'),
    ("tabwarden doctor", "the same as `tabwarden status`"),
]


def _add_mcp(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from tabwarden.cli.help import add_command

    p = add_command(
        sub,
        "mcp",
        summary="run the MCP server on stdio (what your MCP client spawns)",
        description="Run the MCP server over stdio: configure your MCP client to spawn "
        "`tabwarden mcp` (`tabwarden status` prints the exact line for Claude Code, Codex and "
        "JSON configs). stdout carries JSON-RPC only; logs go to stderr. Once a client is paired "
        "(`tabwarden pair-client`) only that program is served.",
        examples=[
            (
                'claude mcp add tabwarden -- "$(command -v tabwarden)" mcp',
                "register it with Claude Code",
            ),
            ("tabwarden mcp", "what the client runs; not for a terminal"),
            ("tabwarden mcp --caps input,files", "also list the input and files tool families"),
            ("tabwarden mcp --caps all", "list every tool"),
        ],
        notes=CAPS_NOTES,
    )
    p.add_argument(
        "--caps",
        type=_caps,
        action="extend",
        metavar="FAMILY[,FAMILY]",
        help="also list these tool families (input, layout, read, devtools, files; all: every "
        "tool); see below",
    )
    p.set_defaults(func=_cmd_mcp)


def _add_host(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from tabwarden.cli.help import add_command
    from tabwarden.host.main import build_parser  # argparse only; no heavy imports
    from tabwarden.manifests import EXTENSION_ID

    parser = add_command(
        sub,
        "host",
        summary="the native-messaging host (Chrome starts this; you do not)",
        description="Run the native-messaging host. The browser starts it through the manifest "
        "`tabwarden install` wrote, when the extension's service worker opens its native port, "
        "and passes the caller origin, which must be the pinned tabwarden extension; it exits "
        "when the port closes. Started any other way it refuses (exit 4).",
        examples=[
            (
                f"tabwarden host --browser chrome chrome-extension://{EXTENSION_ID}/",
                "what Chrome runs (through the installed wrapper)",
            )
        ],
    )
    build_parser(parser)
    parser.set_defaults(func=_cmd_host)


def _root_parser() -> tuple[argparse.ArgumentParser, argparse._SubParsersAction[Any]]:
    import argparse

    parser = argparse.ArgumentParser(
        prog="tabwarden",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"tabwarden {__version__}")
    return parser, parser.add_subparsers(dest="command", metavar="COMMAND")


#: The commands other programs start, at every start: Chrome the host (each time the extension
#: opens its port), an MCP client the server. ``main`` builds only that command's parser for
#: them (the whole one imports every subcommand's options: ~0.1 s of CPU at each start).
SPAWNED_COMMANDS: dict[str, Callable[[argparse._SubParsersAction[Any]], None]] = {
    "mcp": _add_mcp,
    "host": _add_host,
}


def build_parser() -> argparse.ArgumentParser:
    from tabwarden.cli.help import JSON_HELP, add_command
    from tabwarden.manifests import browser_locations

    BROWSERS = sorted(browser_locations())

    parser, sub = _root_parser()

    for add_spawned in SPAWNED_COMMANDS.values():
        add_spawned(sub)

    p = add_command(
        sub,
        "install",
        summary="register the native-messaging host with a browser",
        description="Write the host manifest (allowed_origins pinned to the tabwarden extension's "
        "ID) and its wrapper for one browser, at the browser's per-user location (Linux, macOS) "
        "or into --manifest-dir; and name the extension directory to load (an installed "
        "package's is copied to ~/.local/share/tabwarden/extension first, so that path stays the "
        "same across upgrades). Then load the extension from that path in the browser.",
        examples=[
            ("tabwarden install --browser chrome", "register with your Chrome"),
            (
                "tabwarden install --browser chromium --manifest-dir ~/p/NativeMessagingHosts",
                "into one profile's directory instead",
            ),
        ],
    )
    p.add_argument(
        "--browser", required=True, choices=BROWSERS, help="which browser to register with"
    )
    p.add_argument(
        "--manifest-dir",
        type=_path,
        metavar="DIR",
        help="write here instead (e.g. <profile>/NativeMessagingHosts)",
    )
    p.add_argument(
        "--force", action="store_true", help="replace a manifest of the same name that is not ours"
    )
    p.set_defaults(func=_cmd_install)

    p = add_command(
        sub,
        "uninstall",
        summary="remove what install wrote (and nothing it cannot verify as ours)",
        description="Remove tabwarden's host manifest and wrapper (from every browser: also the "
        "extension copy install made). Files that are not verifiably ours are left in place and "
        "reported. Pairing, policy and the audit log stay.",
        examples=[
            ("tabwarden uninstall", "from every browser"),
            ("tabwarden uninstall --browser chrome", "from Chrome only"),
        ],
    )
    p.add_argument("--browser", choices=BROWSERS, help="only this browser (default: all)")
    p.add_argument(
        "--manifest-dir", type=_path, metavar="DIR", help="the directory given to install"
    )
    p.set_defaults(func=_cmd_uninstall)

    from tabwarden.cli.commands import add_subcommands

    add_subcommands(sub)

    # `doctor` is its own parser (not an alias), so `tabwarden doctor --help` names itself.
    for name in ("status", "doctor"):
        p = add_command(
            sub,
            name,
            summary="what is installed, paired and running, and what to do next"
            if name == "status"
            else "the same as `tabwarden status`",
            description=STATUS_DESCRIPTION,
            examples=STATUS_EXAMPLES,
        )
        p.add_argument("--json", action="store_true", help=JSON_HELP)
        p.set_defaults(func=_cmd_status)

    from tabwarden.cli.setup import add_parser as add_setup

    add_setup(sub)

    from tabwarden.cli.tabs import add_parser as add_tabs

    add_tabs(sub)

    from tabwarden.cli.terminal_tools import add_parsers as add_terminal_tools

    add_terminal_tools(sub)

    p = add_command(
        sub,
        "demo",
        summary="drive a throwaway headless Chromium through every hop and print a transcript",
        description="Start headless Chromium on a throwaway profile with the extension loaded and "
        "the host installed into it, serve a local page, then act as an MCP client: spawn "
        "`tabwarden mcp` over stdio and call bridge_status and tab_list. Cleans up everything, "
        "also on Ctrl-C. Touches neither your browser nor your pairing.",
        examples=[
            ("tabwarden demo", "the whole chain, in about a minute"),
            ("tabwarden demo --keep-open", "then try `tabwarden status` against it"),
            ("tabwarden demo --chrome /usr/bin/chromium", "with this Chromium binary"),
        ],
    )
    p.add_argument(
        "--chrome",
        metavar="PATH",
        help="Chromium binary (default $CHROME_BIN or /usr/lib/chromium/chromium)",
    )
    p.add_argument(
        "--keep", action="store_true", help="keep the temp dir (profile, logs) for inspection"
    )
    p.add_argument(
        "--keep-open",
        action="store_true",
        help="after the run, leave the browser and host running until Ctrl-C (then clean up), "
        "e.g. to try `tabwarden status` against them",
    )
    p.set_defaults(func=_cmd_demo)
    return parser


def _path(value: str) -> Path:
    from pathlib import Path

    return Path(value).expanduser().absolute()


def _report(exc: TabwardenError, out: Callable[[str], None]) -> None:
    out(f"tabwarden: error[{exc.code}]: {exc}")
    if exc.hint:
        out(f"  hint: {exc.hint}")


#: Subcommands that talk to the bridge run as ``python -I -m tabwarden <command>``: that is the
#: exact shape the other end attests (docs/adr/0001-attestation.md), and -I keeps PYTHON*
#: variables, the working directory and the user site out of the import path. The granting
#: commands are among them: with an authenticator enrolled they ask the host for a tap
#: (``tabwarden.cli.terminal_tap``).
ISOLATED_COMMANDS = frozenset(
    {"mcp", "status", "doctor", "tabs", "call", "unkill", "policy", "pair-client", "pair"}
)


def _reexec_isolated(argv: Sequence[str] | None) -> None:
    import os

    args = list(sys.argv[1:] if argv is None else argv)
    os.execv(sys.executable, [sys.executable, "-I", "-m", "tabwarden", *args])  # noqa: S606 - our own interpreter


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    if given and given[0] in ISOLATED_COMMANDS and not sys.flags.isolated:
        _reexec_isolated(argv)  # before anything is parsed or imported: the parse runs once
    if given == ["mcp"]:
        # An agent's spawn, on every start: run without building the parser (it imports every
        # subcommand's options).
        import argparse

        return _run(_cmd_mcp, argparse.Namespace(command="mcp"))
    spawned = SPAWNED_COMMANDS.get(given[0]) if given else None
    if spawned is not None:
        parser, sub = _root_parser()
        spawned(sub)
    else:
        parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    if args.command in ISOLATED_COMMANDS and not sys.flags.isolated:
        _reexec_isolated(argv)  # same PID, so the MCP client stays our parent
    return _run(args.func, args)


def _run(func: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Run a subcommand: a ``TabwardenError`` becomes its hint and exit status, here alone."""
    from tabwarden.errors import TabwardenError

    try:
        return int(func(args))
    except TabwardenError as exc:
        _report(exc, lambda line: print(line, file=sys.stderr))
        return exc.exit_status
    except KeyboardInterrupt:
        print("tabwarden: interrupted", file=sys.stderr)
        return 130
