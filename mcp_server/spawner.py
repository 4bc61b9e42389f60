"""Hop 1: who spawned ``tabwarden mcp`` — measured, compared with the paired clients, remembered.

``measure_parent`` pins the parent with a pidfd, records its create time, reads the executable
path (``/proc/<pid>/exe`` readlink, for display) and hashes the image *through the magic link*
(the inode actually executing, not whatever the path names now). It then re-checks that the pinned
process is alive with the same create time (and, for our own parent, that it is still our parent),
so a PID recycled mid-measurement is never measured as the spawner. Anything unmeasurable —
parent gone, a zombie, permission denied (another user, or a non-dumpable parent), reuse — raises
``SpawnerUnmeasurable``: when clients are paired every tool then answers ``client_not_paired``.

Image hashes are cached in memory only, by (dev, ino, size, mtime_ns). There is deliberately no
on-disk hash cache: a file another same-UID process can write would let it map its own binary's
inode to a paired client's hash — an unsigned widening path next to the signed trust record.

``spawners.json`` in the config dir remembers recently seen spawners (path, hash, first/last seen,
count; the 20 most recent) so ``tabwarden pair-client`` can offer them. It is a hint list, not a
grant: nothing in it is trusted, and a damaged file is simply started afresh. It is read and
written through ``tabwarden.private_fs``: an unsafe directory or list (symlink, not ours, wrong
mode, not a regular file) is never read (``recent_spawners`` gives []) and never replaced
(``remember_spawner`` raises ``SpawnerListUnsafe``).
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from tabwarden.attest import image_sha256, pidfd_exited
from tabwarden.errors import TabwardenError
from tabwarden.private_fs import EntryTooLarge, PrivateDir, PrivateFsError, open_private_dir
from tabwarden.protocol.codes import CLIENT_NOT_PAIRED, SPAWNER_LIST_UNSAFE

SPAWNERS_FILE = "spawners.json"
SPAWNERS_LOCK = "spawners.lock"
SPAWNERS_MAX = 20
SPAWNERS_VERSION = 1
#: 20 rows of a path and a hash are a few KiB; anything near this is not our list.
SPAWNERS_MAX_BYTES = 1 << 20
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")


class SpawnerUnmeasurable(TabwardenError):
    """The process that spawned this MCP server could not be measured."""

    code = CLIENT_NOT_PAIRED


@dataclass(frozen=True, slots=True)
class Spawner:
    pid: int
    exe: str  # readlink of /proc/<pid>/exe, for display (may end in " (deleted)")
    sha256: str  # of the image actually executing, read through the magic link
    create_time: float


@dataclass(frozen=True, slots=True)
class SeenSpawner:
    path: str
    sha256: str
    first_seen: int
    last_seen: int
    count: int

    def as_dict(self) -> dict[str, Any]:  # JSON for pair-client (commands.py indexes it)
        return {
            "path": self.path,
            "sha256": self.sha256,
            "firstSeen": self.first_seen,
            "lastSeen": self.last_seen,
            "count": self.count,
        }


# ---------------------------------------------------------------------------------- measuring


def measure_parent(pid: int | None = None) -> Spawner:
    """Measure ``pid`` (default: our parent, re-checked to still be our parent)."""
    own_parent = pid is None
    target = os.getppid() if pid is None else pid
    if target <= 0:
        raise SpawnerUnmeasurable(f"no parent process to measure (pid {target})")
    try:
        pidfd = os.pidfd_open(target)
    except ProcessLookupError:
        raise SpawnerUnmeasurable(f"the spawning process {target} is gone") from None
    except OSError as exc:
        raise SpawnerUnmeasurable(
            f"cannot pin the spawning process {target}: {exc.strerror}"
        ) from None
    try:
        _still_ours(pidfd, target, own_parent)
        created = _create_time(target)
        try:
            exe = os.readlink(f"/proc/{target}/exe")
            fd = os.open(f"/proc/{target}/exe", os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            raise SpawnerUnmeasurable(f"the spawning process {target} has exited") from None
        except PermissionError:
            raise SpawnerUnmeasurable(
                f"permission denied reading the executable of the spawning process {target} "
                "(another user, or a non-dumpable process)"
            ) from None
        except OSError as exc:
            raise SpawnerUnmeasurable(
                f"cannot read the spawning process {target}: {exc.strerror}"
            ) from None
        try:
            sha, _ = image_sha256(fd)
        except OSError as exc:
            raise SpawnerUnmeasurable(
                f"cannot hash the spawning process {target}: {exc.strerror}"
            ) from None
        finally:
            os.close(fd)
        _still_ours(pidfd, target, own_parent)
        if _create_time(target) != created:
            raise SpawnerUnmeasurable(f"the spawning process {target} was replaced (PID reused)")
    finally:
        os.close(pidfd)
    return Spawner(pid=target, exe=exe, sha256=sha, create_time=created)


def _still_ours(pidfd: int, pid: int, own_parent: bool) -> None:
    if pidfd_exited(pidfd):
        raise SpawnerUnmeasurable(f"the spawning process {pid} has exited")
    if own_parent and os.getppid() != pid:
        raise SpawnerUnmeasurable(f"the spawning process {pid} exited (we were re-parented)")


def _create_time(pid: int) -> float:
    try:
        return float(psutil.Process(pid).create_time())
    except psutil.NoSuchProcess:
        raise SpawnerUnmeasurable(f"the spawning process {pid} is gone") from None
    except psutil.Error as exc:
        raise SpawnerUnmeasurable(f"cannot read the spawning process {pid}: {exc}") from None


def matches(spawner: Spawner, paired: Iterable[tuple[str, str]]) -> bool:
    """True if the spawner's image hash equals a paired client's (the path is only a label)."""
    mine = spawner.sha256.lower().encode("ascii")
    found = False
    for _exe, sha in paired:
        if isinstance(sha, str) and hmac.compare_digest(
            mine, sha.lower().encode("ascii", "replace")
        ):
            found = True  # keep going: constant work regardless of position
    return found


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
            out.append(SeenSpawner(path_s, sha, first, last, count))
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
        seen = SeenSpawner(
            spawner.exe,
            spawner.sha256,
            previous.first_seen,
            max(stamp, previous.last_seen),
            previous.count + 1,
        )
    else:
        seen = SeenSpawner(spawner.exe, spawner.sha256, stamp, stamp, 1)
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
    "matches",
    "measure_parent",
    "recent_spawners",
    "remember_spawner",
]
