"""How ``tabwarden setup`` speaks: step lines, and waits with progress (a spinner and the elapsed
time on a terminal, a plain line every 30 s otherwise)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

#: How often a wait re-checks its condition, and how often it says so when not on a terminal.
POLL_S = 1.0
PLAIN_EVERY_S = 30.0


class Out:
    """Step lines and waits, shaped for a terminal or for a log."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = sys.stdout if stream is None else stream
        self.tty = self.stream.isatty()
        encoding = self.stream.encoding or "ascii"
        try:
            "✓→".encode(encoding)
            self.done_mark, self.todo_mark = "✓", "→"
        except (UnicodeEncodeError, LookupError):
            self.done_mark, self.todo_mark = "ok", "->"

    def line(self, text: str = "") -> None:
        print(text, file=self.stream, flush=True)

    def already(self, what: str) -> None:
        self.line(f"{self.done_mark} {what} (already done)")

    def done(self, what: str) -> None:
        self.line(f"{self.done_mark} {what}")

    def step(self, what: str) -> None:
        self.line(f"{self.todo_mark} {what}")

    def wait(self, what: str, condition: Callable[[], bool]) -> None:
        """Return once ``condition()`` holds; progress meanwhile. Ctrl-C propagates."""
        start = time.monotonic()
        spinner = "|/-\\"
        said = -PLAIN_EVERY_S
        turn = 0
        try:
            while not condition():
                elapsed = time.monotonic() - start
                if self.tty:
                    self.stream.write(
                        f"\r{spinner[turn % 4]} waiting for {what}: {int(elapsed)} s "
                        "(Ctrl-C stops; a rerun continues)\x1b[K"
                    )
                    self.stream.flush()
                    turn += 1
                elif elapsed - said >= PLAIN_EVERY_S:
                    self.line(f"waiting for {what} ({int(elapsed)} s so far; Ctrl-C stops)")
                    said = elapsed
                time.sleep(POLL_S)  # a person's pace: the condition is a local check
        finally:
            if self.tty:
                self.stream.write("\r\x1b[K")
                self.stream.flush()
