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
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from tabwarden.errors import UsageError
from tabwarden.manifests import EXTENSION_ID

if TYPE_CHECKING:
    from tabwarden.trust.verify import Effective

#: The browsers' own launchers on PATH, by install label (the first found names it).
LAUNCHERS: Mapping[str, tuple[str, ...]] = {
    "chrome": ("google-chrome", "google-chrome-stable", "google-chrome-beta"),
    "chromium": ("chromium", "chromium-browser"),
    "brave": ("brave-browser", "brave"),
    "edge": ("microsoft-edge", "microsoft-edge-stable"),
    "vivaldi": ("vivaldi", "vivaldi-stable"),
}

OPTIONS_URL = f"chrome-extension://{EXTENSION_ID}/options.html"
#: How often a wait re-checks its condition, and how often it says so when not on a terminal.
POLL_S = 1.0
PLAIN_EVERY_S = 30.0
RERUN = "run `tabwarden setup` again to continue where you stopped"


@dataclass(frozen=True, slots=True)
class Found:
    """A Chromium-family browser on this machine, and how we know."""

    label: str
    how: str


def detect_browsers(
    path: str | None = None,
    running: Iterable[tuple[str, int]] | None = None,
) -> list[Found]:
    """The supported browsers installed (a launcher on ``path``) or running (``running``: label,
    pid pairs; default: this user's processes), one per label, in the table's order."""
    from tabwarden.cli.install import supported_browsers

    if running is None:
        from tabwarden.cli.install.running import running_browsers

        running = [(b.label, b.pid) for b in running_browsers()]
    pids: dict[str, int] = {}
    for label, pid in running:
        pids.setdefault(label, pid)
    found = []
    for label in supported_browsers():
        launcher = next(
            (hit for name in LAUNCHERS.get(label, ()) if (hit := shutil.which(name, path=path))),
            None,
        )
        if label in pids:
            found.append(Found(label, f"running (pid {pids[label]})"))
        elif launcher:
            found.append(Found(label, launcher))
    return found


# ----------------------------------------------------------------------------------- output


class Out:
    """Step lines and waits, shaped for a terminal or for a log."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = sys.stdout if stream is None else stream
        self.tty = self.stream.isatty()
        encoding = self.stream.encoding or "ascii"
        try:
            "✓→".encode(encoding)
            self.done_mark, self.todo_mark = "✓", "→"
        except (UnicodeEncodeError, LookupError):
            self.done_mark, self.todo_mark = "ok", "->"

    def line(self, text: str = "") -> None:
        print(text, file=self.stream, flush=True)

    def already(self, what: str) -> None:
        self.line(f"{self.done_mark} {what} (already done)")

    def done(self, what: str) -> None:
        self.line(f"{self.done_mark} {what}")

    def step(self, what: str) -> None:
        self.line(f"{self.todo_mark} {what}")

    def wait(self, what: str, condition: Callable[[], bool]) -> None:
        """Return once ``condition()`` holds; progress meanwhile. Ctrl-C propagates."""
        start = time.monotonic()
        spinner = "|/-\\"
        said = -PLAIN_EVERY_S
        turn = 0
        try:
            while not condition():
                elapsed = time.monotonic() - start
                if self.tty:
                    self.stream.write(
                        f"\r{spinner[turn % 4]} waiting for {what}: {int(elapsed)} s "
                        "(Ctrl-C stops; a rerun continues)\x1b[K"
                    )
                    self.stream.flush()
                    turn += 1
                elif elapsed - said >= PLAIN_EVERY_S:
                    self.line(f"waiting for {what} ({int(elapsed)} s so far; Ctrl-C stops)")
                    said = elapsed
                time.sleep(POLL_S)  # a person's pace: the condition is a local check
        finally:
            if self.tty:
                self.stream.write("\r\x1b[K")
                self.stream.flush()


# ------------------------------------------------------------------------------------ steps


def choose_browser(args: argparse.Namespace, out: Out) -> str:
    """``--browser``, else the one detected browser (one already registered first), else ask."""
    from tabwarden.cli.install import manifest_status

    if args.browser:
        out.done(f"browser: {args.browser} (--browser)")
        return str(args.browser)
    found = detect_browsers()
    if not found:
        raise UsageError(
            "no Chromium-family browser found (none running, no chrome, chromium, brave, edge or "
            "vivaldi launcher on PATH)",
            hint="Install one, or name it: `tabwarden setup --browser LABEL` (LABEL one of "
            "chrome, chromium, brave, edge, vivaldi).",
        )
    registered = {m.browser for m in manifest_status() if m.ok}
    ready = [f for f in found if f.label in registered]
    if len(ready) == 1 or len(found) == 1:
        pick = (ready or found)[0]
        out.done(f"browser: {pick.label} ({pick.how})")
        return pick.label
    if not (out.tty and sys.stdin.isatty()):
        raise UsageError(
            "several browsers found: " + ", ".join(f.label for f in found),
            hint="Name the one to use: `tabwarden setup --browser LABEL`.",
        )
    out.line("browsers found:")
    for number, f in enumerate(found, 1):
        out.line(f"  [{number}] {f.label}  ({f.how})")
    answer = input("use which one? number: ").strip()
    if not answer.isdigit() or not 1 <= int(answer) <= len(found):
        raise UsageError(f"no entry {answer!r}", hint="Rerun and type one of the numbers shown.")
    pick = found[int(answer) - 1]
    out.done(f"browser: {pick.label}")
    return pick.label


def host_step(label: str, manifest_dir: Path | None, out: Out) -> None:
    """Register the native-messaging host for ``label`` (what ``tabwarden install`` does)."""
    from tabwarden.cli.install import install, manifest_directory, status_for
    from tabwarden.cli.install.running import registration_problems, running_browsers

    directory = manifest_dir or manifest_directory(label)
    if status_for(label, directory).ok:
        out.already(f"host registered for {label} ({directory})")
    else:
        out.step(f"registering the host for {label}")
        report = install(label, manifest_dir)
        out.done(f"host registered for {label} ({report.manifest_path})")
    # A profile started with its own --user-data-dir reads its own directory: name the command.
    if manifest_dir is None:
        for problem in registration_problems(b for b in running_browsers() if b.label == label):
            out.line(f"  note: {problem.as_line()}")


def tabwarden(*args: str, capture: bool = False) -> subprocess.CompletedProcess[str]:
    """Another ``tabwarden`` command, run as its own process exactly as a person would run it
    (isolated, the shape the host attests), on this terminal unless ``capture``."""
    return subprocess.run(  # noqa: S603 - our own interpreter and our own CLI
        [sys.executable, "-I", "-m", "tabwarden", *args],
        check=False,
        text=True,
        capture_output=capture,
        stdin=subprocess.DEVNULL if capture else None,
    )


def connected(label: str) -> bool:
    """``tabwarden status``'s own check: its real handshake as role ``cli`` with the host that
    browser ``label`` started, and whether that host's extension said hello."""
    proc = tabwarden("status", "--json", capture=True)
    try:
        hosts = json.loads(proc.stdout)["hosts"]
    except (ValueError, KeyError, TypeError):
        return False
    return any(h.get("label") == label and h.get("extensionConnected") for h in hosts)


class StepFailed(Exception):
    """A command a step ran failed; it has said why on this terminal."""

    def __init__(self, command: str, status: int) -> None:
        super().__init__(command)
        self.command = command
        self.status = status


def run_step(*args: str) -> None:
    status = tabwarden(*args).returncode
    if status != 0:
        raise StepFailed("tabwarden " + " ".join(args), status)


def extension_step(label: str, out: Out) -> None:
    """The one thing only the person can do: load the unpacked extension; then wait for it."""
    from tabwarden.cli.install.extension import extension_to_load

    if connected(label):
        out.already(f"extension connected in {label}")
        return
    extension = extension_to_load(place=True)
    out.step(f"load the extension in {label} (once):")
    out.line(f"    1. open chrome://extensions in {label}")
    out.line("    2. turn on Developer mode (top right)")
    out.line(f"    3. click Load unpacked and choose {extension}")
    out.line(f"    its ID must be {EXTENSION_ID}; already loaded? click its reload arrow")
    out.wait(f"the extension in {label} to connect", lambda: connected(label))
    out.done(f"extension connected in {label}")


def _effective() -> Effective:
    from tabwarden.trust.gate import TrustGate

    return TrustGate().current()


def _paired_browser(label: str) -> bool:
    return any(b.label == label for b in _effective().browsers)


def pair_step(label: str, args: argparse.Namespace, out: Out) -> None:
    """The host key (``tabwarden pair``: a phrase typed once), then browser ``label`` enrolled
    with the one-time code in its options page (an authenticator, or window-only)."""
    from tabwarden.trust.gate import TrustGate, load_host_public

    gate = TrustGate()
    fresh = False
    if load_host_public(gate.config) is not None and os.path.lexists(gate.path):
        out.already("host key made and paired")
    else:
        out.step("pairing this computer (`tabwarden pair`: type the phrase it shows)")
        run_step("pair", *(["--file-store"] if args.file_store else []))
        fresh = True
    if _paired_browser(label):
        mode = next(b for b in _effective().browsers if b.label == label)
        how = "window-only" if mode.window_only else "with an authenticator"
        out.already(f"browser {label} paired ({how})")
        return
    if not fresh:
        out.step(f"a new one-time code for {label} (`tabwarden pair --browser {label}`)")
        run_step("pair", "--browser", label)
    how = (
        'tick "no authenticator" (window-only: every confirmation in a window)'
        if args.window_only
        else 'touch your authenticator (or tick "no authenticator" for window-only)'
    )
    out.step(f"enrol {label}: open {OPTIONS_URL} in {label}, enter the code above and {how}")
    out.wait(f"{label} to enrol", lambda: _paired_browser(label))
    out.done(f"browser {label} paired")


def next_lines(out: Out) -> None:
    """What is left after the steps built so far: the MCP client, by the lines status prints."""
    from tabwarden.cli.status import mcp_config_lines

    if _effective().paired_clients:
        out.already("MCP client paired")
        return
    out.step("point your MCP client at tabwarden, start it once, then `tabwarden pair-client`:")
    for line in mcp_config_lines():
        out.line(f"    {line}")


def run(args: argparse.Namespace) -> int:
    out = Out()
    try:
        label = choose_browser(args, out)
        host_step(label, args.manifest_dir, out)
        extension_step(label, out)
        pair_step(label, args, out)
        next_lines(out)
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
    out.line("setup: done. `tabwarden status` shows the whole state.")
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
or tick "no authenticator" for window-only; then print how to point your MCP client at
`tabwarden mcp`.
"""

EXAMPLES: Sequence[tuple[str, str]] = [
    ("tabwarden setup", "guided: detect the browser, then step by step"),
    ("tabwarden setup --browser chrome", "for Google Chrome, without asking"),
    ("tabwarden setup --file-store", "no desktop keyring: keep the host key in a 0600 file"),
    ("tabwarden setup --window-only", "no authenticator: confirm every action in a window"),
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
