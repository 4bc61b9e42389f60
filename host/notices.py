"""Live updates for the extension's pages: notice the trust record, the kill latch, the audit
log or the recently seen MCP clients changing on disk and tell the extension
(``trust_changed``), so an open options page or popup shows a change made in a terminal
(``revoke``, ``kill``, ``unkill``, ``policy set``, ``pair-client``), by another page, or a new
client starting, without a reload.

Cost, bounded and fixed: one ``lstat`` of each of four paths every ``POLL_INTERVAL`` in the
host's event loop (inotify is not in the standard library), and no file is ever read. A change is
a path's ``(st_mtime_ns, st_size, st_ino)`` moving, or the path appearing or vanishing (an atomic
rename gives a new inode; an audit append a new size). The notice carries a counter and the
record's epoch as the host's welcome would state it (``host/main.py`` ``_stated_epoch``: the
record's when it is served, a rolled-back record's own older one, else -1 — never an epoch an
edited record claims) and nothing else — no record content, no secret: each page asks again
through its own checked message and the host's enforcement points judge the record as before.
The epoch is what lets the extension's rollback witness (``extension/worker/epoch-ratchet.js``)
see a kill typed while no agent is calling: without it the witness only ever learnt an epoch
from a request or a welcome, and a record and seal rolled back to before an idle kill were
undone by a host restart.

It must never judge the trust record itself (the injected ``epoch`` reads it, once per change
noticed, through ``TrustGate``) and never let an error stop the host: a failed probe, an epoch
that cannot be read (-1 is stated) or an undelivered notice is logged and the watch goes on.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from tabwarden.bridge.spawner import SPAWNERS_FILE
from tabwarden.trust.audit import default_audit_path
from tabwarden.trust.gate import TrustGate

log = logging.getLogger("tabwarden.host")

#: Seconds between two probes: a change shows on an open page within about this (plus the
#: extension's own folding of notices, shared/live-refresh.js NOTIFY_INTERVAL_MS).
POLL_INTERVAL = 0.5
#: The host→extension message type (docs/protocol.md, "Host notices").
TRUST_CHANGED = "trust_changed"

Stamp = tuple[int, int, int] | None


def stamp(path: Path) -> Stamp:
    """What a change of ``path`` moves; ``None`` while it does not exist. ``lstat``: a dangling
    symlink kill latch is a kill latch too."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def watched_paths(gate: TrustGate) -> tuple[Path, ...]:
    """The files whose change an open page shows: the record, the kill latch, the audit log,
    and the clients seen starting ``tabwarden mcp`` (the Clients section's "recently seen")."""
    return (gate.path, gate.kill_latch, default_audit_path(gate.env), gate.config / SPAWNERS_FILE)


class ChangeWatch:
    """Remembers the stamps of ``paths``; ``moved()`` says whether any moved since the last call
    (the first baseline is taken at construction, so a host start announces nothing)."""

    def __init__(self, paths: Sequence[Path]) -> None:
        self._paths = tuple(paths)
        self._last = self._probe()

    def _probe(self) -> tuple[Stamp, ...]:
        return tuple(stamp(p) for p in self._paths)

    def moved(self) -> bool:
        now = self._probe()
        if now == self._last:
            return False
        self._last = now
        return True


#: The epoch stated when the record cannot be read for a notice (the extension compares nothing).
UNSTATED_EPOCH = -1


async def push_trust_changes(
    watch: ChangeWatch,
    send: Callable[[dict[str, Any]], Awaitable[None]],
    connected: Callable[[], bool],
    epoch: Callable[[], int],
    interval: float = POLL_INTERVAL,
) -> None:
    """Probe every ``interval`` seconds; after a change, while the extension is connected, send
    ``{"type": "trust_changed", "seq": n, "epoch": e}`` (``n`` counts this host's notices, ``e``
    is ``epoch()`` read after the change, off the event loop). A change while it is away is not
    queued: its next welcome states the epoch and makes the pages re-read anyway."""
    seq = 0
    while True:
        await asyncio.sleep(interval)
        try:
            moved = watch.moved()
        except Exception as exc:  # never stop the host over a probe
            log.warning("trust change probe failed: %s", type(exc).__name__)
            continue
        if not moved or not connected():
            continue
        seq += 1
        try:
            stated = await asyncio.to_thread(epoch)
        except Exception as exc:  # the witness compares nothing this time; the request still does
            log.warning("trust_changed without an epoch: %s", type(exc).__name__)
            stated = UNSTATED_EPOCH
        try:
            await send({"type": TRUST_CHANGED, "seq": seq, "epoch": stated})
        except Exception as exc:  # the browser may be gone already
            log.info("trust_changed not delivered: %s", type(exc).__name__)
