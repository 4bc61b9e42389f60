"""The "last seen" record: how the browser's extension was last seen, left behind by the host.

Theory of operation. The host lives only while the extension's service worker holds the native
port, so once the worker is stopped there is no host to ask. Each host therefore leaves one small
record, ``<label>.seen``, in the private runtime directory: written ``connected`` when the
extension's hello arrives and ``away`` (with the reason) when the port closes or the host stops.
The MCP server and ``tabwarden status`` read it only when no host answers, to say *how* the
extension is missing: away and expected back within N s (the extension's wake alarm restarts it,
extension/worker/wake.js), or not seen recently.

What it may hold: timestamps, a reason from a fixed set, the wake bound the extension stated, and
the PIDs (with start times) of the host and the browser. Nothing secret: no run secret, key,
nonce or MAC ever goes in.

How far it is trusted: for wording only. It is read through ``tabwarden.private_fs`` (a private
regular file of ours, bounded); a missing, foreign-owned, oversize or malformed record is
ignored. It is consulted only after connecting to a host failed, so nothing in it can make the
server believe a host or the extension is connected, and ``judge`` is pure (``now`` and the
liveness check are passed in).
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from tabwarden.private_fs import PrivateFsError, open_private_dir

__all__ = [
    "MAX_RECORD_BYTES",
    "REASONS",
    "Away",
    "LastSeen",
    "RecordInvalid",
    "judge",
    "process_alive",
    "read_last_seen",
    "record_name",
    "write_last_seen",
]

log = logging.getLogger("tabwarden.bridge.away")

VERSION: Final = 1
#: A record is a few hundred bytes; anything past this is not ours.
MAX_RECORD_BYTES: Final = 4096
#: The extension's stated wake bound is clamped to this range (seconds).
MIN_EXPECTED_BACK_S: Final = 1
MAX_EXPECTED_BACK_S: Final = 600
#: Used when the extension stated no bound (an older extension): the packed-install alarm
#: period (30 s) plus slack, extension/worker/wake.js.
DEFAULT_EXPECTED_BACK_S: Final = 35
#: Past this many bound-lengths after the disconnect (and at least STALE_FLOOR_S) the extension
#: is no longer "expected back": the wake did not happen, so nothing says it is coming.
STALE_FACTOR: Final = 3
STALE_FLOOR_S: Final = 60

#: Why the extension went away, as the host saw it; the words a person reads.
REASONS: Final = {
    "port_closed": "the browser closed the native port (service worker stopped, extension "
    "reloaded, or the browser closing)",
    "host_stopped": "the host was stopped by a signal",
    "host_error": "the host failed",
    "host_vanished": "the host exited without leaving a reason (killed?)",
    "host_stopping": "a host is starting or stopping",
}

State = Literal["connected", "away"]
_STATES: Final = ("connected", "away")


class RecordInvalid(ValueError):
    """The record is not one a host of ours wrote. ``str()`` names the field, never its value."""


def record_name(label: str) -> str:
    return f"{label}.seen"


def _number(doc: dict[str, Any], key: str, *, optional: bool = False) -> float | None:
    value = doc.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise RecordInvalid(f"{key} is not a non-negative number")
    if not math.isfinite(value) or value < 0:
        raise RecordInvalid(f"{key} is not a non-negative number")
    return float(value)


def _pid(doc: dict[str, Any], key: str) -> int:
    value = doc.get(key)
    if type(value) is not int or not 0 < value < 2**31:
        raise RecordInvalid(f"{key} is not a PID")
    return value


@dataclass(frozen=True, slots=True, kw_only=True)
class LastSeen:
    """One host's record of the extension (times are Unix seconds)."""

    label: str
    state: State
    connected_since: float | None
    disconnected_at: float | None
    reason: str | None
    expected_back_s: int
    host_pid: int
    host_started: float
    browser_pid: int
    browser_started: float
    #: The disconnect before this one (a ``connected`` record carries its predecessor's).
    last_disconnect_at: float | None = None
    last_reason: str | None = None

    def __post_init__(self) -> None:
        if self.state not in _STATES:
            raise RecordInvalid("state is not connected or away")
        for reason in (self.reason, self.last_reason):
            if reason is not None and reason not in REASONS:
                raise RecordInvalid("reason is not a known reason")
        if self.state == "away" and (self.disconnected_at is None or self.reason is None):
            raise RecordInvalid("an away record needs disconnectedAt and reason")
        if not MIN_EXPECTED_BACK_S <= self.expected_back_s <= MAX_EXPECTED_BACK_S:
            raise RecordInvalid("expectedBackS is out of range")

    def to_json(self) -> bytes:
        doc = {
            "v": VERSION,
            "label": self.label,
            "state": self.state,
            "connectedSince": self.connected_since,
            "disconnectedAt": self.disconnected_at,
            "reason": self.reason,
            "expectedBackS": self.expected_back_s,
            "hostPid": self.host_pid,
            "hostStarted": self.host_started,
            "browserPid": self.browser_pid,
            "browserStarted": self.browser_started,
            "lastDisconnectAt": self.last_disconnect_at,
            "lastReason": self.last_reason,
        }
        return json.dumps(doc, separators=(",", ":"), sort_keys=True).encode()

    @classmethod
    def from_json(cls, data: bytes, label: str) -> LastSeen:
        """Parse and validate; ``RecordInvalid`` for anything a host of ours would not write."""
        try:
            doc = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise RecordInvalid("not JSON") from None
        if not isinstance(doc, dict):
            raise RecordInvalid("not an object")
        if doc.get("v") != VERSION or type(doc.get("v")) is not int:
            raise RecordInvalid("unknown version")
        if doc.get("label") != label:
            raise RecordInvalid("label does not match the file name")
        state = doc.get("state")
        if state not in _STATES:
            raise RecordInvalid("state is not connected or away")
        reason, last_reason = doc.get("reason"), doc.get("lastReason")
        if not all(r is None or isinstance(r, str) for r in (reason, last_reason)):
            raise RecordInvalid("reason is not a string")
        back = doc.get("expectedBackS")
        if type(back) is not int:
            raise RecordInvalid("expectedBackS is not an integer")
        return cls(
            label=label,
            state=state,
            connected_since=_number(doc, "connectedSince", optional=True),
            disconnected_at=_number(doc, "disconnectedAt", optional=True),
            reason=reason,
            expected_back_s=back,
            host_pid=_pid(doc, "hostPid"),
            host_started=_number(doc, "hostStarted") or 0.0,
            browser_pid=_pid(doc, "browserPid"),
            browser_started=_number(doc, "browserStarted") or 0.0,
            last_disconnect_at=_number(doc, "lastDisconnectAt", optional=True),
            last_reason=last_reason,
        )


def clamp_expected_back(ms: object) -> int:
    """The extension's stated ``expectedBackMs`` as whole seconds in range (default if absent)."""
    if not isinstance(ms, (int, float)) or isinstance(ms, bool) or not math.isfinite(ms):
        return DEFAULT_EXPECTED_BACK_S
    seconds = math.ceil(ms / 1000)
    return max(MIN_EXPECTED_BACK_S, min(MAX_EXPECTED_BACK_S, seconds))


def write_last_seen(directory: Path, record: LastSeen) -> bool:
    """Replace ``<label>.seen`` atomically; False (logged) when it cannot be written. Never raises:
    the record is wording, and a host must never stop over it."""
    try:
        found = open_private_dir(directory, create=False)
        if found is None:
            return False
        with found as private:
            private.write_atomic(record_name(record.label), record.to_json())
        return True
    except PrivateFsError as exc:
        log.warning("could not leave the last-seen record: %s", exc)
        return False


def read_last_seen(directory: Path, label: str) -> LastSeen | None:
    """The record for ``label``, or None when missing, unsafe (not a private file of ours),
    oversize or malformed (logged at INFO: nothing a caller must act on)."""
    try:
        found = open_private_dir(directory, create=False)
        if found is None:
            return None
        with found as private:
            read = private.read(record_name(label), MAX_RECORD_BYTES)
    except PrivateFsError as exc:
        log.info("ignoring the last-seen record: %s", exc)
        return None
    if read is None:
        return None
    try:
        return LastSeen.from_json(read[0], label)
    except RecordInvalid as exc:
        log.info("ignoring the last-seen record for %s: %s", label, exc)
        return None


def labels_with_records(directory: Path) -> list[str]:
    """Labels that have a ``.seen`` record (unverified names; read each with read_last_seen)."""
    from tabwarden.paths import LABEL_RE

    try:
        names = sorted(p.name for p in directory.iterdir())
    except OSError:
        return []
    return [n[: -len(".seen")] for n in names if n.endswith(".seen") and LABEL_RE.match(n[:-5])]


@dataclass(frozen=True, slots=True, kw_only=True)
class Away:
    """The verdict on a record while no host answers."""

    label: str
    #: ``away``: expected back within ``expected_back_s``; ``gone``: not coming back by itself
    #: (the browser exited, or the wake is overdue).
    verdict: Literal["away", "gone"]
    since: float | None
    reason: str
    expected_back_s: int | None

    def wording(self) -> str:
        text = REASONS.get(self.reason, self.reason)
        if self.verdict == "away":
            return (
                f"the browser's extension is reconnecting ({text}); expected back within "
                f"{self.expected_back_s} s"
            )
        return f"the browser's extension was last seen {self._ago()} ({text})"

    def _ago(self) -> str:
        return "at an unknown time" if self.since is None else f"at {_clock(self.since)}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "since": self.since,
            "reason": REASONS.get(self.reason, self.reason),
            "expectedBackWithinS": self.expected_back_s,
        }


def _clock(ts: float) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))


#: (pid, start time) → is that very process still running.
Liveness = Callable[[int, float], bool]


def process_alive(pid: int, started: float) -> bool:
    """Whether ``pid`` runs and is the process that started at ``started`` (not a reused PID)."""
    from tabwarden import osapi

    try:
        return abs(osapi.create_time(pid) - started) < 0.5
    except OSError:
        return False


def judge(record: LastSeen, now: float, alive: Liveness) -> Away:
    """How the extension is missing, from its record: pure (``now`` and ``alive`` passed in).

    * the browser that ran the host is gone → ``gone`` (nothing will wake the worker);
    * the record says connected: the host is alive → starting or stopping, ``away``; the host is
      dead → it was killed, ``away`` (the worker reconnects, or its alarm wakes it);
    * the record says away: within the stale window → ``away``; past it → ``gone`` (overdue).
    """
    back = record.expected_back_s
    if not alive(record.browser_pid, record.browser_started):
        since = record.disconnected_at if record.state == "away" else None
        return Away(
            label=record.label,
            verdict="gone",
            since=since,
            reason=record.reason or "host_vanished",
            expected_back_s=None,
        )
    if record.state == "connected":
        host_alive = alive(record.host_pid, record.host_started)
        return Away(
            label=record.label,
            verdict="away",
            since=None,
            reason="host_stopping" if host_alive else "host_vanished",
            expected_back_s=back,
        )
    since = record.disconnected_at or 0.0  # an away record has both (LastSeen.__post_init__)
    reason = record.reason or "port_closed"
    if now - since > max(STALE_FLOOR_S, STALE_FACTOR * back):
        return Away(
            label=record.label, verdict="gone", since=since, reason=reason, expected_back_s=None
        )
    return Away(
        label=record.label, verdict="away", since=since, reason=reason, expected_back_s=back
    )
