"""The trust record's file: fail-closed reads and the one locked, atomic writer.

* ``load`` refuses (``TrustUnreadable``) a record that is missing while a host key exists, breaks
  the private-file rule of ``tabwarden.private_fs`` (a symlink or not a regular file, not ours,
  any group/other permission bit, more than one link, in a directory that is not ours/exactly
  0700), is larger than ``MAX_DOCUMENT_BYTES``, or does not parse.
* ``update`` is the only writer: an exclusive ``flock`` on ``trust.lock`` beside the record,
  re-read inside the lock, ``mutate``, ``epoch + 1``, then ``PrivateDir.write_atomic`` (a temp
  file ``O_EXCL`` 0600, fsync, rename, fsync the directory).

File I/O only: what a change means (who may make it, what it grants) lives in ``store`` (the
writers) and ``operations`` (the recipes). Nothing here may return a record it did not fully
check, or write one that would not read back.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from tabwarden.paths import config_dir
from tabwarden.private_fs import EntryTooLarge, PrivateDir, PrivateFsError, open_private_dir
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

StatKey = tuple[int, ...]


def trust_path(env: dict[str, str] | None = None) -> Path:
    return config_dir(env) / FILE_NAME


@contextmanager
def _refusals(path: Path) -> Iterator[None]:
    """Every private-filesystem refusal or failure becomes ``TrustUnreadable`` (path, reason)."""
    try:
        yield
    except EntryTooLarge:
        raise TrustUnreadable(f"{path} is too large") from None
    except PrivateFsError as exc:
        raise TrustUnreadable(str(exc)) from None


def stat_key(st: os.stat_result) -> StatKey:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode, st.st_uid)


def _read_at(directory: PrivateDir, path: Path) -> tuple[TrustDocument, StatKey] | None:
    """Read, check and parse ``path.name`` inside ``directory``; None when it does not exist."""
    with _refusals(path):
        found = directory.read(path.name, MAX_DOCUMENT_BYTES)
    if found is None:
        return None
    raw, st = found
    return parse(raw), stat_key(st)


def _missing(path: Path, expect_paired: bool) -> None:
    if expect_paired:
        raise TrustUnreadable(f"{path} is missing but a host key exists")


def load_with_stat(path: Path, expect_paired: bool) -> tuple[TrustDocument, StatKey] | None:
    """The record and the stat key of the file it was read from (for ``TrustReader``'s cache)."""
    with _refusals(path):
        directory = open_private_dir(path.parent, create=False)
    if directory is None:
        _missing(path, expect_paired)
        return None
    with directory:
        found = _read_at(directory, path)
    if found is None:
        _missing(path, expect_paired)
    return found


def load(path: Path | str, *, expect_paired: bool) -> TrustDocument | None:
    """The record at ``path``; None only when it is missing and ``not expect_paired``."""
    found = load_with_stat(Path(path), expect_paired)
    return None if found is None else found[0]


# --- writing ---------------------------------------------------------------------------------


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
    with _refusals(path):
        directory = open_private_dir(path.parent, create=True)
    if directory is None:
        raise TrustUnreadable(f"{path.parent} disappeared")
    with directory, _refusals(path), directory.locked(LOCK_NAME):
        return _update_locked(directory, path, mutate, initial)


def _update_locked(
    directory: PrivateDir,
    path: Path,
    mutate: Callable[[TrustDocument], TrustDocument],
    initial: TrustDocument | None,
) -> TrustDocument:
    found = _read_at(directory, path)
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
    with _refusals(path):
        directory.write_atomic(path.name, data)
    return new
