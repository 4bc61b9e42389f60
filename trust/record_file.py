"""The trust record's file: fail-closed reads and the one locked, atomic writer.

* ``load`` refuses (``TrustUnreadable``) a record that is missing while a host key exists, is a
  symlink or not a regular file, is not ours, has any group/other permission bit, lives in a
  directory that is not ours/0700, or does not parse.
* ``update`` is the only writer: an exclusive ``flock`` on ``trust.lock`` beside the record,
  re-read inside the lock, ``mutate``, ``epoch + 1``, write a temp file (``O_EXCL``, 0600), fsync,
  ``os.replace``, fsync the directory.

File I/O only: what a change means (who may make it, what it grants) lives in ``store`` (the
writers) and ``operations`` (the recipes). Nothing here may return a record it did not fully
check, or write one that would not read back.
"""

from __future__ import annotations

import errno
import fcntl
import os
import secrets
import stat
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from tabwarden.paths import config_dir, private_file_problem, read_capped
from tabwarden.trust.record import (
    MAX_DOCUMENT_BYTES,
    SCHEMA_VERSION,
    TrustDocument,
    TrustUnreadable,
    parse,
    serialise,
)

__all__ = [
    "FILE_NAME",
    "LOCK_NAME",
    "StatKey",
    "load",
    "load_with_stat",
    "stat_key",
    "trust_path",
    "update",
]

FILE_NAME = "trust.json"
LOCK_NAME = "trust.lock"

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)

StatKey = tuple[int, ...]


def trust_path(env: dict[str, str] | None = None) -> Path:
    return config_dir(env) / FILE_NAME


def _open_dir(directory: Path, *, create: bool) -> int | None:
    """An fd on ``directory`` after checking it is a real directory, ours, mode 0700."""
    if create:
        try:
            directory.parent.mkdir(parents=True, exist_ok=True)
            os.mkdir(directory, 0o700)
        except FileExistsError:
            pass
        except OSError as exc:
            raise TrustUnreadable(f"cannot create {directory} ({exc.strerror})") from None
    try:
        dfd = os.open(directory, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise TrustUnreadable(f"{directory} is a symlink or not a directory") from None
        raise TrustUnreadable(f"cannot open {directory} ({exc.strerror})") from None
    try:
        st = os.fstat(dfd)
        if st.st_uid != os.geteuid():
            raise TrustUnreadable(f"{directory} is owned by uid {st.st_uid}, not {os.geteuid()}")
        if stat.S_IMODE(st.st_mode) != 0o700:
            raise TrustUnreadable(f"{directory} has mode {stat.S_IMODE(st.st_mode):04o}, not 0700")
    except BaseException:
        os.close(dfd)
        raise
    return dfd


def stat_key(st: os.stat_result) -> StatKey:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode, st.st_uid)


def _read_at(dfd: int, path: Path) -> tuple[TrustDocument, StatKey] | None:
    """Open, check and parse ``path.name`` inside ``dfd``; None when it does not exist."""
    try:
        fd = os.open(path.name, os.O_RDONLY | os.O_NONBLOCK | _O_NOFOLLOW | _O_CLOEXEC, dir_fd=dfd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise TrustUnreadable(f"{path} is a symlink") from None
        raise TrustUnreadable(f"cannot open {path} ({exc.strerror})") from None
    try:
        st = os.fstat(fd)
        if (problem := private_file_problem(st, path)) is not None:
            raise TrustUnreadable(problem)
        raw = read_capped(fd, MAX_DOCUMENT_BYTES)
        if raw is None:
            raise TrustUnreadable(f"{path} is too large")
    except OSError as exc:
        raise TrustUnreadable(f"cannot read {path} ({exc.strerror})") from None
    finally:
        os.close(fd)
    return parse(raw), stat_key(st)


def _missing(path: Path, expect_paired: bool) -> None:
    if expect_paired:
        raise TrustUnreadable(f"{path} is missing but a host key exists")


def load_with_stat(path: Path, expect_paired: bool) -> tuple[TrustDocument, StatKey] | None:
    """The record and the stat key of the file it was read from (for ``TrustReader``'s cache)."""
    dfd = _open_dir(path.parent, create=False)
    if dfd is None:
        _missing(path, expect_paired)
        return None
    try:
        found = _read_at(dfd, path)
    finally:
        os.close(dfd)
    if found is None:
        _missing(path, expect_paired)
    return found


def load(path: Path | str, *, expect_paired: bool) -> TrustDocument | None:
    """The record at ``path``; None only when it is missing and ``not expect_paired``."""
    found = load_with_stat(Path(path), expect_paired)
    return None if found is None else found[0]


# --- writing ---------------------------------------------------------------------------------


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _write_atomic(dfd: int, name: str, data: bytes) -> None:
    temp = f".{name}.{secrets.token_hex(8)}.tmp"
    fd = os.open(
        temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC, 0o600, dir_fd=dfd
    )
    try:
        try:
            os.fchmod(fd, 0o600)
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except BaseException:
        try:
            os.unlink(temp, dir_fd=dfd)
        except OSError:
            pass
        raise
    os.fsync(dfd)


def update(
    path: Path | str,
    mutate: Callable[[TrustDocument], TrustDocument],
    *,
    initial: TrustDocument | None = None,
) -> TrustDocument:
    """Locked read-modify-write. ``mutate`` sees the current record (or ``initial`` when there is
    none yet; without ``initial`` a missing record is ``TrustUnreadable``). The result is written
    with ``epoch = current.epoch + 1``. If ``mutate`` raises, or returns the record it was given
    unchanged, nothing is written."""
    path = Path(path)
    dfd = _open_dir(path.parent, create=True)
    if dfd is None:
        raise TrustUnreadable(f"{path.parent} disappeared")
    try:
        lock_fd = os.open(
            LOCK_NAME, os.O_RDWR | os.O_CREAT | _O_NOFOLLOW | _O_CLOEXEC, 0o600, dir_fd=dfd
        )
        try:
            st = os.fstat(lock_fd)
            if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
                raise TrustUnreadable(f"{path.parent / LOCK_NAME} is not our regular file")
            fcntl.flock(lock_fd, fcntl.LOCK_EX)
            found = _read_at(dfd, path)
            if found is not None:
                current = found[0]
            elif initial is not None:
                current = initial
            else:
                raise TrustUnreadable(f"{path} is missing (not paired yet?)")
            new = mutate(current)
            if new is current and found is not None:
                return current  # nothing changed: no write, no new epoch
            if not isinstance(new, TrustDocument):
                raise TypeError("mutate must return a TrustDocument")
            new = replace(new, version=SCHEMA_VERSION, epoch=current.epoch + 1)
            data = serialise(new)
            try:
                parse(data)
            except TrustUnreadable as exc:
                raise ValueError(
                    f"refusing to write a record that would not read back: {exc.reason}"
                ) from None
            _write_atomic(dfd, path.name, data)
            return new
        finally:
            os.close(lock_fd)  # releases the flock
    except OSError as exc:
        raise TrustUnreadable(f"cannot write {path} ({exc.strerror})") from None
    finally:
        os.close(dfd)
