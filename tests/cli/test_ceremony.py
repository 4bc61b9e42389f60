"""The terminal ceremony, driven through real processes and a real pty.

Each case runs a small driver in a fresh session (``start_new_session``). The driver may make one
of its fds its controlling terminal (TIOCSCTTY) and may move itself into a background process
group, then calls ``require_real_terminal`` + ``confirm_phrase`` and reports the outcome on fd 3
(a pipe), so the terminal carries nothing but what the ceremony itself prints.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any, Literal

import pytest

from tabwarden.cli import ceremony

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="pty/session semantics: Linux")

DRIVER = r"""
import fcntl, os, sys, termios
from tabwarden.cli import ceremony

ctty, background = int(sys.argv[1]), sys.argv[2] == "bg"
report = os.fdopen(3, "w", buffering=1)
if ctty >= 0:
    fcntl.ioctl(ctty, termios.TIOCSCTTY, 0)
if background:
    pid = os.fork()
    if pid:
        report.close()
        _, status = os.waitpid(pid, 0)
        os._exit(os.waitstatus_to_exitcode(status))
    os.setpgid(0, 0)  # a new process group: not the terminal's foreground group
try:
    ceremony.require_real_terminal()
    ceremony.confirm_phrase("pair", ["this browser will trust agents on this machine",
                                     "sneaky \x1b[2J text"])
except ceremony.TabwardenError as exc:
    report.write(f"REFUSED {exc.code}: {exc}\n")
    sys.exit(exc.exit_status)
report.write("CONFIRMED\n")
"""

PROMPT_MARKERS = ("type exactly", "pair this browser", "phrase (")


class Child:
    """A driver process plus the pty master (when there is one) and its report pipe."""

    def __init__(self, proc: subprocess.Popen[bytes], master: int | None, report: int) -> None:
        self.proc, self.master, self.report = proc, master, report
        self.output = b""

    def _pump(self, timeout: float) -> None:
        if self.master is None:
            time.sleep(min(timeout, 0.05))
            return
        ready, _, _ = select.select([self.master], [], [], timeout)
        if ready:
            try:
                chunk = os.read(self.master, 4096)
            except OSError:  # EIO: every slave fd closed
                chunk = b""
            if not chunk:
                os.close(self.master)
                self.master = None
            self.output += chunk

    def expect(self, text: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while text.encode() not in self.output:
            if time.monotonic() > deadline or (self.master is None):
                raise AssertionError(f"{text!r} never appeared; got {self.output!r}")
            self._pump(0.1)

    def _state(self) -> str:
        """What a hung driver is doing: where it waits, its signal masks, what it printed."""
        self._pump(0.1)
        proc = Path(f"/proc/{self.proc.pid}")
        try:
            wchan = (proc / "wchan").read_text()
            status = (proc / "status").read_text().splitlines()
        except OSError as exc:
            return f"(unreadable: {exc}); output {self.output!r}"
        masks = [line for line in status if line.startswith(("State", "Sig", "Shd"))]
        return f"wchan {wchan!r}, {masks}, output {self.output!r}"

    def send(self, data: bytes) -> None:
        assert self.master is not None
        os.write(self.master, data)

    def finish(self, timeout: float = 60.0) -> tuple[int, str]:
        try:
            status = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the driver did not exit: {self._state()}") from None
        deadline = time.monotonic() + 2
        while self.master is not None and time.monotonic() < deadline:
            self._pump(0.05)
        if self.master is not None:
            os.close(self.master)
        with os.fdopen(self.report, "rb") as fh:
            report = fh.read().decode()
        return status, report


@pytest.fixture
def driver(tmp_path: Path) -> Path:
    path = tmp_path / "driver.py"
    path.write_text(DRIVER)
    return path


_WRAPPER = (  # moves the report pipe to fd 3, then runs the driver as __main__
    # Ctrl-C must raise KeyboardInterrupt as at a real terminal, even when the suite itself was
    # started in the background (non-interactive shells start background jobs ignoring SIGINT).
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "os.dup2(int(sys.argv[1]), 3); os.close(int(sys.argv[1])); "
    "sys.argv = sys.argv[2:]; exec(compile(open(sys.argv[0]).read(), sys.argv[0], 'exec'))"
)


#: A child's standard stream: "pty" (the slave), a raw fd, or a file object.
Stream = int | IO[Any] | Literal["pty"]


def spawn(
    driver: Path,
    *,
    stdin: Stream = "pty",
    stdout: Stream = "pty",
    stderr: int | IO[Any] | None = None,
    ctty: int = -1,
    background: bool = False,
) -> Child:
    """stdin/stdout/stderr: "pty" (the slave), a raw fd, or a file object; a fresh session."""
    master, slave = os.openpty()
    rd, wr = os.pipe()

    def pick(spec: Stream) -> int | IO[Any]:
        return slave if spec == "pty" else spec

    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _WRAPPER,
            str(wr),
            str(driver),
            str(ctty),
            "bg" if background else "fg",
        ],
        stdin=pick(stdin),
        stdout=pick(stdout),
        stderr=subprocess.DEVNULL if stderr is None else stderr,
        pass_fds=(wr,),
        start_new_session=True,
    )
    os.close(slave)
    os.close(wr)
    return Child(proc, master, rd)


def refused(child: Child, reason: str) -> bool:
    status, report = child.finish()
    assert status == 2, (status, report)
    assert report.startswith("REFUSED not_a_terminal: ") and reason in report, report
    return True


def declined(child: Child) -> bool:
    status, report = child.finish()
    assert status == 1, (status, report)
    assert report.startswith("REFUSED ceremony_declined: "), report
    return True


def no_prompt(text: bytes | str) -> None:
    text = text.decode(errors="replace") if isinstance(text, bytes) else text
    for marker in PROMPT_MARKERS:
        assert marker not in text


# --------------------------------------------------------------------------- (a) a real terminal


def test_right_phrase_on_controlling_foreground_pty_confirms(driver: Path) -> None:
    child = spawn(driver, ctty=0)
    child.expect("phrase (1/3)> ")
    child.send(b"pair this browser\n")
    status, report = child.finish()
    assert (status, report) == (0, "CONFIRMED\n")
    assert b"this browser will trust agents" in child.output
    assert b"\x1b[2J" not in child.output and b"\\x1b[2J" in child.output  # escapes shown, inert


def test_wrong_phrase_three_times_is_declined(driver: Path) -> None:
    child = spawn(driver, ctty=0)
    for attempt in (1, 2, 3):
        child.expect(f"phrase ({attempt}/3)> ")
        child.send(b"pair this browsr\n")
    assert declined(child)
    assert child.output.count(b"does not match") == 3


def test_wrong_then_right_phrase_confirms(driver: Path) -> None:
    child = spawn(driver, ctty=0)
    child.expect("phrase (1/3)> ")
    child.send(b"yes\n")
    child.expect("phrase (2/3)> ")
    child.send(b"  pair this browser  \n")
    assert child.finish() == (0, "CONFIRMED\n")


@pytest.mark.parametrize("key", [b"\x04", b"\x03"], ids=["ctrl-d", "ctrl-c"])
def test_eof_or_interrupt_declines(driver: Path, key: bytes) -> None:
    child = spawn(driver, ctty=0)
    child.expect("phrase (1/3)> ")
    child.send(key)
    assert declined(child)


def test_typeahead_before_the_prompt_does_not_count(driver: Path) -> None:
    child = spawn(driver, ctty=0)
    child.send(b"pair this browser\n")  # typed before the driver even started
    child.expect("phrase (1/3)> ")  # printed after the typeahead was discarded
    child.send(b"\x04")
    assert declined(child)


# --------------------------------------------------------------------------- refusals


def test_stdin_pipe_is_refused_before_any_prompt(driver: Path) -> None:
    rd, wr = os.pipe()
    os.write(wr, b"pair this browser\n")
    os.close(wr)
    child = spawn(driver, stdin=rd, ctty=1)  # stdout is the pty, and the controlling terminal
    os.close(rd)
    assert refused(child, "stdin is not a terminal")
    no_prompt(child.output)


def test_stdout_redirected_to_file_is_refused(driver: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    with out.open("wb") as fh:
        child = spawn(driver, stdout=fh, ctty=0)  # stdin is the pty, and the controlling terminal
    assert refused(child, "stdout is not a terminal")
    no_prompt(out.read_bytes())
    no_prompt(child.output)


def test_stdin_redirected_from_file_is_refused(driver: Path, tmp_path: Path) -> None:
    src = tmp_path / "in.txt"
    src.write_text("pair this browser\n")
    with src.open("rb") as fh:
        child = spawn(driver, stdin=fh, ctty=1)
    assert refused(child, "stdin is not a terminal")
    no_prompt(child.output)


def test_new_session_without_controlling_terminal_is_refused(driver: Path) -> None:
    child = spawn(driver, ctty=-1)  # setsid, stdin/stdout on the slave, but no TIOCSCTTY
    assert refused(child, "no controlling terminal")
    no_prompt(child.output)


@pytest.mark.promise("PR-01")
def test_background_process_group_is_refused(driver: Path) -> None:
    child = spawn(driver, ctty=0, background=True)
    assert refused(child, "in the background")
    no_prompt(child.output)


def test_stdin_and_stdout_on_different_terminals_is_refused(driver: Path) -> None:
    master2, slave2 = os.openpty()
    try:
        child = spawn(driver, stdout=slave2, ctty=0)
        os.close(slave2)
        assert refused(child, "different terminals")
        no_prompt(child.output)
    finally:
        os.close(master2)


def test_tty_that_is_not_the_controlling_terminal_is_refused(driver: Path) -> None:
    # stdin/stdout share pty 1, but the session's controlling terminal is pty 2 (via stderr).
    master2, slave2 = os.openpty()
    try:
        child = spawn(driver, stderr=slave2, ctty=2)
        os.close(slave2)
        assert refused(child, "not this process's controlling")
        no_prompt(child.output)
    finally:
        os.close(master2)


def test_in_process_non_tty_streams_are_refused(tmp_path: Path) -> None:
    import io

    with pytest.raises(ceremony.NotATerminal) as info:
        ceremony.require_real_terminal(io.StringIO(), io.StringIO())
    assert info.value.code == "not_a_terminal" and info.value.exit_status == 2
    assert "terminal" in info.value.hint
    with (tmp_path / "f").open("w+") as fh, pytest.raises(ceremony.NotATerminal):
        ceremony.confirm_phrase("pair", ["x"], tty_in=fh, tty_out=fh)
    assert (tmp_path / "f").read_text() == ""  # nothing was prompted


# --------------------------------------------------------------------------- phrases and codes


def test_phrases() -> None:
    assert ceremony.phrase_for("pair") == "pair this browser"
    assert ceremony.phrase_for("pair-client") == "pair this client"
    assert ceremony.phrase_for("Allow_Eval") == "allow eval"
    assert ceremony.CeremonyDeclined.code == "ceremony_declined"
    assert ceremony.CeremonyDeclined.exit_status == 1


class FixedRng:
    def __init__(self, value: int) -> None:
        self.value = value

    def randbelow(self, bound: int) -> int:
        assert bound == 10**8
        return self.value


def test_one_time_code_format_and_digest() -> None:
    import re

    for _ in range(50):
        assert re.fullmatch(r"\d{4}-\d{4}", ceremony.one_time_code())
    assert ceremony.one_time_code(FixedRng(48219037)) == "4821-9037"
    assert ceremony.one_time_code(FixedRng(7)) == "0000-0007"
    digest = ceremony.code_digest("4821-9037")
    assert re.fullmatch(r"[0-9a-f]{64}", digest)
    assert ceremony.codes_equal(digest, ceremony.code_digest(" 4821 9037 "))
    assert ceremony.codes_equal(digest, digest.upper())
    assert not ceremony.codes_equal(digest, ceremony.code_digest("4821-9038"))
    assert not ceremony.codes_equal(digest, "é" * 64)
