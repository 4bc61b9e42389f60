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
grant: nothing in it is trusted, and a damaged file is simply started afresh.
"""

from __future__ import annotations

import contextlib
import fcntl
import hmac
import json
import os
import re
import secrets
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from tabwarden.attest import image_sha256, pidfd_exited
from tabwarden.errors import TabwardenError

SPAWNERS_FILE = "spawners.json"
SPAWNERS_LOCK = "spawners.lock"
SPAWNERS_MAX = 20
SPAWNERS_VERSION = 1
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")


class SpawnerUnmeasurable(TabwardenError):
    """The process that spawned this MCP server could not be measured."""

    code = "client_not_paired"


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

    def as_dict(self) -> dict[str, Any]:
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


@contextlib.contextmanager
def _locked(config_dir: Path) -> Iterator[None]:
    config_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(
        config_dir / SPAWNERS_LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
    )
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _read_entries(path: Path) -> list[SeenSpawner]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return []  # missing, or a symlink (ELOOP): nothing we will read
    try:
        with os.fdopen(fd, "rb") as fh:
            document = json.loads(fh.read(1 << 20))
    except (OSError, ValueError):
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
            and all(type(v) is int and v >= 0 for v in (first, last, count))
        ):
            out.append(SeenSpawner(path_s, sha, first, last, count))  # type: ignore[arg-type]
    return out


def _write_entries(config_dir: Path, entries: list[SeenSpawner]) -> None:
    path = config_dir / SPAWNERS_FILE
    tmp = config_dir / f".{SPAWNERS_FILE}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    data = json.dumps(
        {"version": SPAWNERS_VERSION, "spawners": [e.as_dict() for e in entries]}, indent=2
    ).encode("utf-8")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        try:
            os.fchmod(fd, 0o600)  # whatever the umask
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)  # replaces a symlink itself, never writes through it
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    dfd = os.open(config_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        with contextlib.suppress(OSError):
            os.fsync(dfd)
    finally:
        os.close(dfd)


def remember_spawner(config_dir: Path | str, spawner: Spawner, now: float) -> None:
    """Record one sighting of ``spawner`` in ``spawners.json`` (0600, atomic, locked, capped)."""
    config_dir = Path(config_dir)
    stamp = int(now)
    with _locked(config_dir):
        entries = _read_entries(config_dir / SPAWNERS_FILE)
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
        _write_entries(config_dir, entries[-SPAWNERS_MAX:])


def recent_spawners(config_dir: Path | str) -> list[SeenSpawner]:
    """Recently seen spawners, most recent first; [] when there is no readable list."""
    entries = _read_entries(Path(config_dir) / SPAWNERS_FILE)
    return sorted(reversed(entries), key=lambda e: e.last_seen, reverse=True)[:SPAWNERS_MAX]


__all__ = [
    "SeenSpawner",
    "Spawner",
    "SpawnerUnmeasurable",
    "matches",
    "measure_parent",
    "recent_spawners",
    "remember_spawner",
]
