"""`tabwarden status` names what is missing for the browser actually running.

A browser reads host manifests from its own user data dir, so the registration that matters is
the running browser's. These tests run stand-in browser processes (a copy of ``sh`` under a
browser's executable name, with Chrome's ``--user-data-dir=`` switch) and read `tabwarden status`
as a person would: the problem, its stable code, and the exact `tabwarden install` command for
that browser — never `--browser chrome` while only Chromium runs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tabwarden.cli.install import install, render_wrapper
from tabwarden.cli.install.running import RunningBrowser, browsers_in, install_command
from tests.deadline import until_sync
from tests.fakes import host_env

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="/proc process table: Linux")


def test_the_browser_process_is_told_from_its_helpers_and_its_label_from_its_executable() -> None:
    rows = [
        (10, ["/usr/lib/chromium/chromium", "--user-data-dir=/tmp/p", "--no-first-run"]),
        (11, ["/usr/lib/chromium/chromium", "--type=renderer", "--user-data-dir=/tmp/p"]),
        (12, ["/usr/lib/chromium/chrome_crashpad_handler", "--database=/x/chromium/Crash"]),
        (20, ["/opt/google/chrome/chrome"]),
        (21, ["/opt/google/chrome/chrome", "--type=gpu-process"]),
        (30, ["/snap/chromium/2890/usr/lib/chromium-browser/chrome"]),
        (40, ["/opt/brave.com/brave/brave"]),
        (50, ["/usr/bin/python3", "-m", "tabwarden", "host", "--browser", "chrome"]),
    ]
    assert browsers_in(rows) == [
        RunningBrowser("brave", 40, None),
        RunningBrowser("chrome", 20, None),
        RunningBrowser("chromium", 30, None),
        RunningBrowser("chromium", 10, Path("/tmp/p")),
    ]
    assert install_command(RunningBrowser("chrome", 20, None)) == (
        "tabwarden install --browser chrome"
    )
    assert install_command(RunningBrowser("chromium", 10, Path("/tmp/my profile"))) == (
        "tabwarden install --browser chromium --manifest-dir '/tmp/my profile/NativeMessagingHosts'"
    )


def _status(env: dict[str, str]) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "tabwarden", "status", "--json"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


class StandIns:
    """Processes that look like browsers in the process table (a copy of sh, renamed)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, exe: str, *switches: str) -> int:
        path = self.root / exe.lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            shutil.copy2("/bin/sh", path)
        proc = subprocess.Popen([str(path), "-c", "sleep 300; exit 0", *switches])  # noqa: S603
        self.procs.append(proc)
        until_sync(f"{exe} is in the process table", lambda: _cmdline(proc.pid)[:1] == [str(path)])
        return proc.pid

    def close(self) -> None:
        for proc in self.procs:
            proc.kill()
            proc.wait()


def _cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]
    except OSError:
        return []


@pytest.fixture
def stand_ins(tmp_path: Path) -> Iterator[StandIns]:
    s = StandIns(tmp_path / "bin")
    try:
        yield s
    finally:
        s.close()


@pytest.fixture
def person(tmp_path: Path, runtime_dir: Path) -> dict[str, str]:
    """A person's environment: their own HOME and config dir (the table's directories)."""
    home = tmp_path / "home"
    home.mkdir()
    return host_env(runtime_dir, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))


def _mine(report: dict[str, Any], browser: str, profile: Path | None = None) -> dict[str, Any]:
    """The problem of our stand-in (other tests' browsers may run beside it: their own profiles)."""
    problems: list[dict[str, Any]] = report["hostProblems"]
    [problem] = [
        p
        for p in problems
        if p["browser"] == browser and (profile is None or str(profile) in p["command"])
    ]
    return problem


def test_running_chromium_is_told_its_own_command_not_chrome(
    tmp_path: Path, stand_ins: StandIns, person: dict[str, str]
) -> None:
    # Registered for Chrome only, while Chromium runs with a profile of its own.
    install("chrome", env=person, home=Path(person["HOME"]))
    profile = tmp_path / "profile"
    stand_ins.start("/usr/lib/chromium/chromium", f"--user-data-dir={profile}")
    report = _status(person)
    problem = _mine(report, "chromium", profile)
    command = f"tabwarden install --browser chromium --manifest-dir {profile}/NativeMessagingHosts"
    assert problem["code"] == "host_not_installed"
    assert problem["command"] == command
    assert "registered only for chrome" in problem["cause"]
    steps = "\n".join(report["next"])
    assert f"run `{command}`" in steps
    assert "--browser chrome`" not in steps  # the old advice, with Chromium running


def test_running_chrome_is_told_the_chrome_command(
    stand_ins: StandIns, person: dict[str, str]
) -> None:
    stand_ins.start("/opt/google/chrome/chrome")  # its default user data dir
    report = _status(person)
    problem = _mine(report, "chrome")
    assert problem["code"] == "host_not_installed"
    assert problem["command"] == "tabwarden install --browser chrome"
    assert "run `tabwarden install --browser chrome`" in "\n".join(report["next"])


def test_a_manifest_naming_a_missing_program_or_python_is_a_host_that_cannot_start(
    tmp_path: Path, stand_ins: StandIns, person: dict[str, str]
) -> None:
    profile = tmp_path / "profile"
    hosts = profile / "NativeMessagingHosts"
    report = install("chromium", hosts)
    stand_ins.start("/usr/lib/chromium/chromium", f"--user-data-dir={profile}")
    command = f"tabwarden install --browser chromium --manifest-dir {hosts}"
    assert command not in [p["command"] for p in _status(person)["hostProblems"]]
    # The wrapper the manifest names runs a Python that is gone (a removed virtualenv).
    gone = tmp_path / "removed-venv" / "bin" / "python3"
    report.wrapper_path.write_text(render_wrapper(str(gone), "chromium"))
    problem = _mine(_status(person), "chromium", profile)
    assert problem["code"] == "host_cannot_start"
    assert f"interpreter {gone} is missing" in problem["cause"]
    assert problem["command"] == command
    os.unlink(report.wrapper_path)  # the program the manifest names is gone
    problem = _mine(_status(person), "chromium", profile)
    assert problem["code"] == "host_cannot_start"
    assert "wrapper is missing" in problem["cause"]
