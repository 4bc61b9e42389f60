"""The CLI on a pty we hold the master of: how tests play the person at a real terminal (the
ceremonies type a phrase only on the controlling terminal of a session)."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from typing import IO, Any, Literal

#: The first phrase prompt of a ceremony.
PROMPT = b"phrase (1/3)> "

# Optionally make fd 0 the controlling terminal (argv[1] == "ctty"), then exec the real CLI.
# Ctrl-C and Ctrl-\ act as at a person's terminal even when the suite was started with them
# ignored (a background job of a shell without job control inherits SIGINT and SIGQUIT ignored,
# and an ignored signal stays ignored across exec).
_WRAPPER = (
    "import fcntl, os, signal, sys, termios\n"
    "signal.signal(signal.SIGINT, signal.SIG_DFL)\n"
    "signal.signal(signal.SIGQUIT, signal.SIG_DFL)\n"
    "if sys.argv[1] == 'ctty':\n"
    "    fcntl.ioctl(0, termios.TIOCSCTTY, 0)\n"
    "os.execv(sys.executable, [sys.executable, '-m', 'tabwarden', *sys.argv[2:]])\n"
)

#: A child's standard stream: "pty" (the slave), a raw fd, or a file object.
Stream = int | IO[Any] | Literal["pty"]


def spawn_cli(
    env: dict[str, str],
    *args: str,
    ctty: bool = True,
    stdin: Stream = "pty",
    stdout: Stream = "pty",
) -> Pty:
    """``tabwarden ARGS`` in a new session on a pty; ``ctty`` makes the pty its controlling
    terminal (stderr is always the pty)."""
    master, slave = os.openpty()

    def pick(spec: Stream) -> int | IO[Any]:
        return slave if spec == "pty" else spec

    try:
        proc = subprocess.Popen(  # noqa: S603 (our interpreter and our CLI)
            [sys.executable, "-c", _WRAPPER, "ctty" if ctty else "none", *args],
            env=env,
            stdin=pick(stdin),
            stdout=pick(stdout),
            stderr=slave,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        os.close(slave)
    return Pty(proc, master)


class Pty:
    def __init__(self, proc: subprocess.Popen[bytes], master: int) -> None:
        self.proc = proc
        self.master: int | None = master
        self.output = b""

    def _pump(self, timeout: float) -> None:
        assert self.master is not None
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return
        try:
            chunk = os.read(self.master, 4096)
        except OSError:  # EIO: every slave fd is closed
            chunk = b""
        if chunk:
            self.output += chunk
        else:
            os.close(self.master)
            self.master = None

    def expect(self, text: bytes, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.output:
            if self.master is None or time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never appeared; got {self.output!r}")
            self._pump(0.1)

    def send(self, text: str) -> None:
        assert self.master is not None
        os.write(self.master, text.encode())

    def finish(self, timeout: float = 60.0) -> tuple[int, bytes]:
        deadline = time.monotonic() + timeout
        while self.master is not None and time.monotonic() < deadline:
            self._pump(0.1)
            if self.proc.poll() is not None and self.master is not None:
                self._pump(0.05)  # drain what is left, then EIO closes it
        status = self.proc.wait(max(1.0, deadline - time.monotonic()))
        if self.master is not None:
            os.close(self.master)
            self.master = None
        return status, self.output
