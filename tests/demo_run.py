"""`tabwarden demo` run as a person runs it at a terminal (tests/browser/test_demo.py,
tests/cli/test_non_root.py): held open until Ctrl-C, and checked for what it leaves behind.

Helpers only (no tests)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
from collections.abc import Iterator
from typing import Any

import psutil

#: The demo's temp root, as its transcript names it.
TEMP_ROOT = re.compile(r"throwaway profile (/\S+)/profile\)")
STOP_S = 120.0  # a demo cleaning up on a busy machine: a hang guard


def temp_root(transcript: str) -> str:
    match = TEMP_ROOT.search(transcript)
    assert match, transcript
    return match.group(1)


def assert_cleaned_up(transcript: str) -> None:
    """Nothing of the demo the transcript tells of is left: its temp root is gone and no
    process names it (other browsers on the machine do not count)."""
    root = temp_root(transcript)
    assert not os.path.exists(root), f"{root} was left behind"
    leftover = subprocess.run(["pgrep", "-f", root], capture_output=True, text=True)
    assert leftover.stdout.strip() == "", f"processes left running: {leftover.stdout}"


@contextlib.contextmanager
def holding_demo(argv: list[str], **popen: Any) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``argv`` (a ``tabwarden demo --keep-open``) started with Ctrl-C as at a terminal, even
    when the suite runs with SIGINT ignored, and read until it holds (``--keep-open`` holds the
    browser and host until Ctrl-C, so a signal never races the end of the run): the process and
    its transcript so far. If it ended before holding, the caller's asserts say why. A demo
    still running when the block ends (a failed assertion) is stopped, and all it started."""
    proc = subprocess.Popen(  # noqa: S603 (the test's own argv, no shell)
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        **popen,
    )
    try:
        assert proc.stdout is not None
        seen = []
        for line in proc.stdout:
            seen.append(line)
            if line.strip().startswith("hold") and "Ctrl-C stops" in line:
                break
        yield proc, "".join(seen)
    finally:
        if proc.poll() is None:
            _stop(proc)


def _stop(proc: subprocess.Popen[str]) -> None:
    """Ctrl-C (the demo cleans up), then, if it does not end, kill it and all it started:
    killing the demo alone would leave its Chromium running."""
    try:
        parent = psutil.Process(proc.pid)
        family = [parent, *parent.children(recursive=True)]
    except psutil.Error:  # it ended meanwhile
        family = []
    proc.send_signal(signal.SIGINT)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.communicate(timeout=STOP_S)
    for member in family:
        with contextlib.suppress(psutil.Error):
            member.kill()
    psutil.wait_procs(family, timeout=STOP_S)
    proc.wait(timeout=STOP_S)
