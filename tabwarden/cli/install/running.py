"""Which browsers this user is running, and whether each one can start our host.

A browser reads host manifests from ``<its user data dir>/NativeMessagingHosts`` (Chrome's
DIR_USER_NATIVE_MESSAGING; the table's directories are the default user data dirs'), so the
answer for a running browser comes from its own process: its label from its executable, its user
data dir from ``--user-data-dir=`` (else the table's default). ``registration_problems`` turns
that into what is missing, each with a stable code and the exact ``tabwarden install`` command
for that browser. ``browsers_in`` is pure over process rows; ``running_browsers`` reads the
process table (this user's processes only). Nothing here writes, and nothing is trusted beyond
wording: a process list can be forged by the user who owns it, and that user is the reader.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tabwarden import osapi
from tabwarden.protocol.codes import HOST_CANNOT_START, HOST_NOT_INSTALLED

if TYPE_CHECKING:
    from tabwarden.cli.install import ManifestStatus

__all__ = [
    "Problem",
    "RunningBrowser",
    "browsers_in",
    "install_command",
    "label_of",
    "registration_problems",
    "running_browsers",
]

#: A browser's own executable (its basename, lowercased) → install label. ``chrome`` is Google
#: Chrome's, unless its path says Chromium (the snap's and some distributions' Chromium).
_EXECUTABLES: Mapping[str, str] = {
    "chrome": "chrome",
    "google chrome": "chrome",
    "chromium": "chromium",
    "chromium-browser": "chromium",
    "brave": "brave",
    "brave browser": "brave",
    "msedge": "edge",
    "microsoft edge": "edge",
    "vivaldi-bin": "vivaldi",
    "vivaldi": "vivaldi",
}


@dataclass(frozen=True, slots=True)
class RunningBrowser:
    label: str
    pid: int
    #: From ``--user-data-dir=``; None: the browser's default one.
    user_data_dir: Path | None


@dataclass(frozen=True, slots=True)
class Problem:
    """One running browser that cannot start the host: why, and the command that fixes it."""

    code: str
    browser: str
    cause: str
    command: str

    def as_line(self) -> str:
        return f"{self.code}: {self.browser} is running, but {self.cause}: run `{self.command}`"

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "browser": self.browser, "cause": self.cause,
                "command": self.command}  # fmt: skip


def label_of(exe: str) -> str | None:
    """The install label of a browser executable, or None when it is not one we know (a
    crash handler or helper beside it is not the browser)."""
    label = _EXECUTABLES.get(os.path.basename(exe).lower())
    if label == "chrome" and "chromium" in exe.lower():
        return "chromium"
    return label


def browsers_in(rows: Iterable[tuple[int, list[str]]]) -> list[RunningBrowser]:
    """The browser processes (not their renderers, GPU or utility children) among ``(pid,
    cmdline)`` rows, one per user data dir."""
    found: dict[tuple[str, Path | None], RunningBrowser] = {}
    for pid, cmdline in rows:
        if not cmdline:
            continue
        label = label_of(cmdline[0])
        if label is None or any(a.startswith("--type=") for a in cmdline[1:]):
            continue
        udd = next((a.split("=", 1)[1] for a in cmdline if a.startswith("--user-data-dir=")), None)
        where = Path(os.path.abspath(os.path.expanduser(udd))) if udd else None
        found.setdefault((label, where), RunningBrowser(label, pid, where))
    return sorted(found.values(), key=lambda b: (b.label, str(b.user_data_dir or ""), b.pid))


def running_browsers() -> list[RunningBrowser]:
    """This user's running browsers (the process table; no other user's processes)."""
    return browsers_in(osapi.user_processes(os.getuid()))


def install_command(browser: RunningBrowser) -> str:
    """The exact ``tabwarden install`` for this browser (its own user data dir when not the
    default)."""
    command = f"tabwarden install --browser {browser.label}"
    if browser.user_data_dir is not None:
        target = shlex.quote(str(browser.user_data_dir / "NativeMessagingHosts"))
        command += f" --manifest-dir {target}"
    return command


def registration_problems(
    browsers: Iterable[RunningBrowser],
    *,
    platform: str = osapi.PLATFORM,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> list[Problem]:
    """For each running browser whose host registration is missing or broken: the problem."""
    from tabwarden.cli.install import manifest_directory, status_for

    problems: list[Problem] = []
    for b in browsers:
        if b.user_data_dir is not None:
            directory = b.user_data_dir / "NativeMessagingHosts"
        else:
            directory = manifest_directory(b.label, platform=platform, home=home, env=env)
        st = status_for(b.label, directory)
        if st.ok:
            continue
        command = install_command(b)
        if not st.manifest_present:
            others = [
                r.browser
                for r in _installed_elsewhere(platform, home, env)
                if r.manifest_path != st.manifest_path
            ]
            cause = f"the host is not registered for it (no {st.manifest_path})"
            if others:
                cause += f"; it is registered only for {', '.join(others)}"
            problems.append(Problem(HOST_NOT_INSTALLED, b.label, cause, command))
        else:
            why = "; ".join(st.problems) or "the registration is not tabwarden's"
            cause = f"its host registration cannot start the host ({why})"
            problems.append(Problem(HOST_CANNOT_START, b.label, cause, command))
    return problems


def _installed_elsewhere(
    platform: str, home: Path | None, env: Mapping[str, str] | None
) -> list[ManifestStatus]:
    from tabwarden.cli.install import manifest_status

    return [r for r in manifest_status(platform=platform, home=home, env=env) if r.ok]
