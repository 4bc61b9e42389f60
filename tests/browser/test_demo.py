"""`tabwarden demo` — the README's main job — runs to completion and cleans up after itself.

Cleanup is checked for *this* demo's temp directory (read from its transcript) and processes
whose command line names it, so other browsers on the machine do not confuse the test.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

import pytest

pytestmark = pytest.mark.browser

ROOT = re.compile(r"throwaway profile (/\S+)/profile\)")


def _assert_cleaned_up(transcript: str) -> None:
    match = ROOT.search(transcript)
    assert match, transcript
    root = match.group(1)
    assert not os.path.exists(root), f"{root} was left behind"
    leftover = subprocess.run(["pgrep", "-f", root], capture_output=True, text=True)
    assert leftover.stdout.strip() == "", f"processes left running: {leftover.stdout}"


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
    _assert_cleaned_up(proc.stdout)


def test_demo_cleans_up_on_ctrl_c() -> None:
    """Ctrl-C while the browser and host run (``--keep-open`` holds them until it comes, so the
    signal never races the end of the run on a busy machine) stops them and removes everything."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tabwarden", "demo", "--keep-open"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C as at a terminal, even when the suite runs as a background job (started with
        # SIGINT ignored, which the demo would inherit).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert proc.stdout is not None
        seen = []
        for line in proc.stdout:
            seen.append(line)
            if line.strip().startswith("hold") and "Ctrl-C stops" in line:
                break
        assert proc.poll() is None, "".join(seen)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:  # never leave a holding demo behind
            proc.kill()
            proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    assert "interrupted" in err
    assert "cleanup  browser stopped; temp files removed" in out
    _assert_cleaned_up("".join(seen) + out)
