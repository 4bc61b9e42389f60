"""`tabwarden demo` — the README's main job — runs to completion and cleans up after itself."""

from __future__ import annotations

import glob
import subprocess
import sys

import pytest

pytestmark = pytest.mark.browser


def test_demo_exits_zero_and_leaves_nothing_behind() -> None:
    before = set(glob.glob("/tmp/tabwarden-browser-*"))
    proc = subprocess.run(
        [sys.executable, "-m", "tabwarden", "demo"], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    tools_line = next(line for line in proc.stdout.splitlines() if " tools: " in line)
    assert "tab_open" in tools_line and "page_text" in tools_line and "bridge_status" in tools_line
    assert "'tabwarden demo page'  http://127.0.0.1:" in proc.stdout
    assert "text  'Hello from a local page'" in proc.stdout
    assert "ok  the agent opened and read the local page" in proc.stdout
    assert set(glob.glob("/tmp/tabwarden-browser-*")) == before
    leftover = subprocess.run(["pgrep", "-f", "tabwarden-browser-"], capture_output=True, text=True)
    assert leftover.stdout.strip() == ""


def test_demo_cleans_up_on_ctrl_c() -> None:
    import signal

    before = set(glob.glob("/tmp/tabwarden-browser-*"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "tabwarden", "demo"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.strip().startswith("chrome"):
            break
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, out + err
    assert "interrupted" in err
    assert "cleanup  browser stopped; temp files removed" in out
    assert set(glob.glob("/tmp/tabwarden-browser-*")) == before
    leftover = subprocess.run(["pgrep", "-f", "tabwarden-browser-"], capture_output=True, text=True)
    assert leftover.stdout.strip() == ""
