"""The whole chain as a person runs it: not root. CI runs as root, where Chromium needs
`--no-sandbox` and the host's hardening and the socket's peer checks meet root's credentials; a
bug reachable only as an ordinary user (one was: the hardened host) passed every other test.

Here a throwaway user (not root, no groups) runs `tabwarden demo` from tabwarden installed with the
system's Python into a virtualenv that user can read: Chromium starts with its sandbox on (the
launcher passes `--no-sandbox` only to root), Chrome launches our host, `tabwarden mcp` is spawned
by the SDK's client, and the agent opens and reads a local page through every hop. The demo
leaves nothing behind, and nothing it ran was root's.

Installing needs the package index (pip's own, as `.ci/run` has).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import psutil
import pytest

from tabwarden.cli.browser import person_browser_faults
from tests.demo_run import assert_cleaned_up, holding_demo
from tests.fixtures import SYSTEM_PYTHON, throwaway_user

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="a throwaway Linux user"),
    pytest.mark.root,  # creating a throwaway user needs root (tests/conftest.py)
    pytest.mark.browser,  # the demo starts Chromium
]

REPO = Path(__file__).resolve().parents[2]
INSTALL_S = 900  # a venv and a pip install from the index on a busy 2-core machine: a hang guard
DEMO_S = 300  # a hang guard


class User(NamedTuple):
    uid: int
    gid: int
    home: Path


@pytest.fixture
def ordinary_user() -> Iterator[User]:
    """A throwaway ordinary user with a home of its own (0700) and no groups but its own."""
    home = Path(tempfile.mkdtemp(prefix="tabwarden-person-"))
    try:
        with throwaway_user("twp") as user:
            os.chown(home, user.pw_uid, user.pw_gid)
            os.chmod(home, 0o700)
            yield User(user.pw_uid, user.pw_gid, home)
    finally:
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def installed() -> Iterator[Path]:
    """tabwarden installed from this checkout with the system's Python, in a virtualenv under a
    0755 directory (root's, as a package manager's would be): the path of its command."""
    root = Path(tempfile.mkdtemp(prefix="tabwarden-venv-"))
    os.chmod(root, 0o755)
    try:
        venv = root / "venv"
        for argv in (
            [SYSTEM_PYTHON, "-m", "venv", str(venv)],
            [str(venv / "bin" / "pip"), "install", "--quiet", str(REPO)],
        ):
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=INSTALL_S, cwd=root)  # noqa: S603
            assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        yield venv / "bin" / "tabwarden"
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_the_demo_runs_through_every_hop_as_an_ordinary_user(
    ordinary_user: User, installed: Path
) -> None:
    """The agent's call is served through every hop; while the demo holds, the browser, its
    helpers and our host all run as the user, and the browser has no switch a person's Chrome
    would not (its sandbox on); Ctrl-C then stops them all and removes everything."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(ordinary_user.home), "LANG": "C.UTF-8"}
    env |= {k: v for k, v in os.environ.items() if k == "CHROME_BIN"}
    as_the_user = {"user": ordinary_user.uid, "group": ordinary_user.gid, "extra_groups": []}
    argv = [str(installed), "demo", "--keep-open"]
    with holding_demo(argv, env=env, cwd=ordinary_user.home, **as_the_user) as (demo, held):
        assert demo.poll() is None, held
        assert "ok  the agent opened and read the local page through MCP" in held
        assert "text  'Hello from a local page'" in held

        chain = psutil.Process(demo.pid).children(recursive=True)
        names = {p.name() for p in chain}
        assert any(n.startswith("chrom") for n in names), names
        hosts = [p for p in chain if "host" in p.cmdline() and "tabwarden" in " ".join(p.cmdline())]
        assert hosts, "Chrome launched our host"
        assert {p.uids().real for p in [psutil.Process(demo.pid), *chain]} == {ordinary_user.uid}
        [browser] = [p for p in chain if p.name().startswith("chrom") and not any(
            a.startswith("--type=") for a in p.cmdline())]  # fmt: skip
        switches = browser.cmdline()
        assert "--no-sandbox" not in switches and person_browser_faults(switches) == [], switches

        demo.send_signal(signal.SIGINT)
        out, err = demo.communicate(timeout=DEMO_S)
    assert demo.returncode == 130, out + err
    assert "cleanup  browser stopped; temp files removed" in out, out + err
    assert_cleaned_up(held + out)
    # Everything the demo wrote was the user's own.
    assert not any(p.owner() == "root" for p in ordinary_user.home.rglob("*")), "root-owned files"
