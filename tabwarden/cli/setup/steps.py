"""``tabwarden setup``'s steps up to a paired browser: choose the browser, register the host,
wait for the extension, pair and wait for the browser to enrol. Each reads its state first."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tabwarden.cli.setup.output import Out
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


def status_report() -> dict[str, Any]:
    """``tabwarden status --json``, run as its own process (so the host attests it); {} when it
    printed no report."""
    proc = tabwarden("status", "--json", capture=True)
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        return {}
    return report if isinstance(report, dict) else {}


def connected(label: str, report: dict[str, Any] | None = None) -> bool:
    """``tabwarden status``'s own check: its real handshake as role ``cli`` with the host that
    browser ``label`` started, and whether that host's extension said hello."""
    hosts = (status_report() if report is None else report).get("hosts") or []
    return any(h.get("label") == label and h.get("extensionConnected") for h in hosts)


def live_check(label: str, out: Out) -> bool:
    """The end: one fresh ``tabwarden status`` and what it says about each thing setup did."""
    report = status_report()
    trust = report.get("trust") or {}
    checks = [
        (f"host for {label} answers and its extension is connected", connected(label, report)),
        (f"browser {label} paired", label in (trust.get("browsers") or [])),
        ("not killed, trust record accepted", not trust.get("killed") and not trust.get("refused")),
    ]
    for what, ok in checks:
        out.line(f"  {out.done_mark if ok else 'x'} live check: {what}")
    if not all(ok for _, ok in checks):
        for step in report.get("next") or []:
            out.line(f"    - {step}")
    return all(ok for _, ok in checks)


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
    from tabwarden.cli.install.extension import place_extension

    placed = place_extension()
    if placed.state == "updated":
        out.done(f"extension updated to this version at {placed.path}")
    if connected(label):
        if placed.state == "updated":
            out.line(f"  press Reload on tabwarden in {label}'s chrome://extensions: until then it")
            out.line("  runs the version it loaded before")
        out.already(f"extension connected in {label}")
        return
    extension = placed.path
    out.step(f"load the extension in {label} (once):")
    out.line(f"    1. open chrome://extensions in {label}")
    out.line("    2. turn on Developer mode (top right)")
    out.line(f"    3. click Load unpacked and choose {extension}")
    out.line(f"    its ID must be {EXTENSION_ID}; already loaded? click its reload arrow")
    out.wait(f"the extension in {label} to connect", lambda: connected(label))
    out.done(f"extension connected in {label}")


def effective() -> Effective:
    from tabwarden.trust.gate import TrustGate

    return TrustGate().current()


def _paired_browser(label: str) -> bool:
    return any(b.label == label for b in effective().browsers)


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
        mode = next(b for b in effective().browsers if b.label == label)
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
