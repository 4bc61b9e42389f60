"""`tabwarden demo` — the README's main job — runs to completion and cleans up after itself.

Cleanup is checked for *this* demo's temp directory (read from its transcript) and processes
whose command line names it, so other browsers on the machine do not confuse the test.
"""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from tests.demo_run import assert_cleaned_up, holding_demo

pytestmark = pytest.mark.browser


def test_demo_exits_zero_and_leaves_nothing_behind() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tabwarden", "demo"], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    tools_line = next(line for line in proc.stdout.splitlines() if " tools: " in line)
    assert "tab_open" in tools_line and "page_text" in tools_line and "bridge_status" in tools_line
    assert "'tabwarden demo page'  http://127.0.0.1:" in proc.stdout
    assert "text  'Hello from a local page'" in proc.stdout
    assert "ok  the agent opened and read the local page" in proc.stdout
    assert_cleaned_up(proc.stdout)


def test_demo_cleans_up_on_ctrl_c() -> None:
    """Ctrl-C while the browser and host run stops them and removes everything."""
    with holding_demo([sys.executable, "-m", "tabwarden", "demo", "--keep-open"]) as (proc, held):
        assert proc.poll() is None, held
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, out + err
    assert "interrupted" in err
    assert "cleanup  browser stopped; temp files removed" in out
    assert_cleaned_up(held + out)
