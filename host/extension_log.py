"""The extension's own errors in the host's log: ``host_call`` ``extension_error``.

The extension sends what its own code threw and nothing caught (an uncaught error or unhandled
rejection in its service worker or one of its pages; never a page's console output), already
masked by its text masking (``extension/worker/mask.js`` ``maskText``) and rate-limited
(``extension/worker/error-report.js``). This intake holds its own bounds whatever arrives, so
neither a flood nor a crafted message can fill or forge the host's log:

* each text field has every control and format character dropped (a newline cannot start a
  line of its own) and is cut to ``MAX_MESSAGE`` / ``MAX_STACK`` / ``MAX_WHERE`` characters;
* at most ``BURST`` lines per ``WINDOW_S`` seconds; what is dropped beyond that is counted and
  said once, on the next line let through (``N more dropped``).

Nothing here decides anything: it only writes a log line.
"""

from __future__ import annotations

import logging
import threading
import time
import unicodedata
from collections.abc import Callable
from typing import Any

from tabwarden.host.calls import BadHostCall

__all__ = ["BURST", "MAX_MESSAGE", "MAX_STACK", "WINDOW_S", "ExtensionErrorLog"]

log = logging.getLogger("tabwarden.host.extension")

#: Most characters of an error's message, of its stack, and of where it was thrown, kept.
MAX_MESSAGE = 500
MAX_STACK = 1000
MAX_WHERE = 40
#: Most lines written in one window of ``WINDOW_S`` seconds; the rest are counted.
BURST = 10
WINDOW_S = 60.0
#: How the extension names the kinds it reports.
KINDS = frozenset({"error", "rejection"})


def _clean(value: Any, cap: int) -> str:
    """``value`` as one log-safe line: no control or format character (whitespace runs become one
    space), at most ``cap`` characters."""
    if not isinstance(value, str):
        return ""
    kept = "".join(
        " " if ch.isspace() else ch
        for ch in value[: cap * 4]
        if ch.isspace() or unicodedata.category(ch)[0] != "C"
    )
    return " ".join(kept.split())[:cap]


class ExtensionErrorLog:
    """The intake: ``record(args)`` writes at most ``burst`` lines a ``window_s`` window."""

    def __init__(
        self,
        *,
        burst: int = BURST,
        window_s: float = WINDOW_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._burst = burst
        self._window_s = window_s
        self._clock = clock
        self._lock = threading.Lock()
        self._window_start = -float("inf")
        self._written = 0
        self._dropped = 0

    def record(self, args: dict[str, Any]) -> dict[str, Any]:
        """One report: logged (``{"logged": true}``) or counted as dropped (``false``)."""
        kind = args.get("kind")
        if kind not in KINDS:
            raise BadHostCall("kind must be 'error' or 'rejection'")
        where = _clean(args.get("where"), MAX_WHERE) or "extension"
        message = _clean(args.get("message"), MAX_MESSAGE) or "(no message)"
        stack = _clean(args.get("stack"), MAX_STACK)
        reported_dropped = args.get("dropped")
        earlier = reported_dropped if type(reported_dropped) is int and reported_dropped > 0 else 0
        with self._lock:
            now = self._clock()
            if now - self._window_start >= self._window_s:
                self._window_start = now
                self._written = 0
            if self._written >= self._burst:
                self._dropped += 1
                return {"logged": False}
            self._written += 1
            dropped, self._dropped = self._dropped, 0
        more = dropped + min(earlier, 1_000_000)
        log.warning(
            "extension %s in %s: %s%s%s",
            kind,
            where,
            message,
            f" | {stack}" if stack else "",
            f" ({more} more dropped)" if more else "",
        )
        return {"logged": True}
