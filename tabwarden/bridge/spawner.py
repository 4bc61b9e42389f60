"""Hop 1's memory: the MCP clients recently seen starting ``tabwarden mcp`` (``spawners.json``).

Who the client is — the process that spawned the server, measured through wrappers, and for an
interpreter what it runs — is measured in one place, ``tabwarden.bridge.client_identity``
(``measure_client_of``); ``Spawner`` and ``SpawnerUnmeasurable`` are re-exported from there.

``spawners.json`` in the config dir remembers recently seen clients (description, identity hash,
what the identity pins in words, why it is broad if it is, first/last seen, count; the 20 most
recent) so ``tabwarden pair-client`` can offer them. It is a hint list, not a grant: nothing in it
is trusted (the ceremony says so when it shows a row), and a damaged file is simply started
afresh. It is read and written through ``tabwarden.private_fs``: an unsafe directory or list
(symlink, not ours, wrong mode, not a regular file) is never read (``recent_spawners`` gives [])
and never replaced (``remember_spawner`` raises ``SpawnerListUnsafe``).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tabwarden.bridge.client_identity import ClientIdentity, SpawnerUnmeasurable
from tabwarden.errors import TabwardenError
from tabwarden.private_fs import EntryTooLarge, PrivateDir, PrivateFsError, open_private_dir
from tabwarden.protocol.codes import SPAWNER_LIST_UNSAFE

SPAWNERS_FILE = "spawners.json"
SPAWNERS_LOCK = "spawners.lock"
SPAWNERS_MAX = 20
SPAWNERS_VERSION = 1
#: 20 rows of a description, a hash and a few lines of text are a few KiB; anything near this
#: is not our list.
SPAWNERS_MAX_BYTES = 1 << 20
#: A row's ``pins`` lines and ``broad`` reason are display text, bounded.
_TEXT_MAX = 1024
_PINS_MAX = 12
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_KIND_RE = re.compile(r"^[a-z]{1,16}$")

#: A measured client, as the spawner list sees it.
Spawner = ClientIdentity


@dataclass(frozen=True, slots=True)
class SeenSpawner:
    path: str
    sha256: str
    first_seen: int
    last_seen: int
    count: int
    #: Why the identity admits more than one program (None: it does not), as last measured.
    broad: str | None = None
    #: What the identity pins, in words, as last measured.
    pins: tuple[str, ...] = ()
    #: ``binary`` (an image hash) or what an interpreter runs (``script``, ``eval``, …).
    kind: str = "binary"

    def as_dict(self) -> dict[str, Any]:  # JSON for pair-client (commands.py indexes it)
        return {
            "path": self.path,
            "sha256": self.sha256,
            "firstSeen": self.first_seen,
            "lastSeen": self.last_seen,
            "count": self.count,
            "broad": self.broad,
            "pins": list(self.pins),
            "kind": self.kind,
        }


# -------------------------------------------------------------------------------- remembering


class SpawnerListUnsafe(TabwardenError):
    """The remembered-spawners list or its directory is not private to this user."""

    code = SPAWNER_LIST_UNSAFE
    exit_status = 3
    hint = (
        "The config directory must be yours, mode 0700, and spawners.json a regular 0600 file "
        "(not a symlink); fix or remove it."
    )


@contextlib.contextmanager
def _private(config_dir: Path, *, create: bool) -> Iterator[PrivateDir | None]:
    """The checked config directory; private-fs refusals become ``SpawnerListUnsafe``."""
    try:
        directory = open_private_dir(config_dir, create=create)
        if directory is None:
            yield None
            return
        with directory:
            yield directory
    except PrivateFsError as exc:
        raise SpawnerListUnsafe(str(exc)) from None


def _parse_entries(raw: bytes) -> list[SeenSpawner]:
    """The valid rows of a ``spawners.json`` document; [] for anything damaged."""
    try:
        document = json.loads(raw)
    except ValueError:
        return []
    if not isinstance(document, dict) or document.get("version") != SPAWNERS_VERSION:
        return []
    rows = document.get("spawners")
    if not isinstance(rows, list):
        return []
    out = []
    for row in rows:
        if not isinstance(row, dict):
            continue
        path_s, sha = row.get("path"), row.get("sha256")
        first, last, count = row.get("firstSeen"), row.get("lastSeen"), row.get("count")
        if (
            isinstance(path_s, str)
            and isinstance(sha, str)
            and _SHA256_RE.match(sha)
            and type(first) is int
            and type(last) is int
            and type(count) is int
            and min(first, last, count) >= 0
        ):
            broad, pins, kind = row.get("broad"), row.get("pins", []), row.get("kind", "binary")
            if not (isinstance(kind, str) and _KIND_RE.match(kind)):
                kind = "unknown"
            if broad is not None and not (isinstance(broad, str) and len(broad) <= _TEXT_MAX):
                broad = "(unreadable)"  # damaged text: never shown as "not broad"
            if not (
                isinstance(pins, list)
                and len(pins) <= _PINS_MAX
                and all(isinstance(p, str) and len(p) <= _TEXT_MAX for p in pins)
            ):
                pins = []
            out.append(SeenSpawner(path_s, sha, first, last, count, broad, tuple(pins), kind))
    return out


def _read_entries(directory: PrivateDir) -> list[SeenSpawner]:
    """The remembered spawners. A damaged or oversized list reads as []; an unsafe one raises
    (``PrivateFsError``) without being read."""
    try:
        found = directory.read(SPAWNERS_FILE, SPAWNERS_MAX_BYTES)
    except EntryTooLarge:
        return []
    return [] if found is None else _parse_entries(found[0])


def remember_spawner(config_dir: Path | str, spawner: Spawner, now: float) -> None:
    """Record one sighting of ``spawner`` in ``spawners.json`` (0600, atomic, locked, capped)."""
    stamp = int(now)
    with _private(Path(config_dir), create=True) as directory:
        if directory is None:  # removed between mkdir and open
            raise SpawnerListUnsafe(f"{config_dir} disappeared while remembering a spawner")
        directory.check(SPAWNERS_FILE)  # refuse an unsafe list before creating even the lock
        with directory.locked(SPAWNERS_LOCK):
            _remember_locked(directory, spawner, stamp)


def _remember_locked(directory: PrivateDir, spawner: Spawner, stamp: int) -> None:
    entries = _read_entries(directory)
    previous = next(
        (e for e in entries if e.path == spawner.exe and e.sha256 == spawner.sha256), None
    )
    if previous is not None:
        entries.remove(previous)
        first, last, count = previous.first_seen, max(stamp, previous.last_seen), previous.count + 1
    else:
        first, last, count = stamp, stamp, 1
    pins = tuple(line[:_TEXT_MAX] for line in spawner.pins[:_PINS_MAX])
    broad = spawner.broad[:_TEXT_MAX] if spawner.broad is not None else None
    seen = SeenSpawner(spawner.exe, spawner.sha256, first, last, count, broad, pins, spawner.kind)
    entries.append(seen)
    entries.sort(key=lambda e: e.last_seen)  # stable: the latest sighting stays last on ties
    kept = entries[-SPAWNERS_MAX:]
    data = json.dumps(
        {"version": SPAWNERS_VERSION, "spawners": [e.as_dict() for e in kept]}, indent=2
    ).encode("utf-8")
    directory.write_atomic(SPAWNERS_FILE, data)


def recent_spawners(config_dir: Path | str) -> list[SeenSpawner]:
    """Recently seen spawners, most recent first; [] when there is no readable list (missing,
    damaged, or refused as not private — an unsafe list is never read)."""
    try:
        with _private(Path(config_dir), create=False) as directory:
            entries = [] if directory is None else _read_entries(directory)
    except SpawnerListUnsafe:
        return []
    return sorted(reversed(entries), key=lambda e: e.last_seen, reverse=True)[:SPAWNERS_MAX]


__all__ = [
    "SeenSpawner",
    "Spawner",
    "SpawnerListUnsafe",
    "SpawnerUnmeasurable",
    "recent_spawners",
    "remember_spawner",
]
