"""The trust record's file: fail-closed reads and the one locked, atomic writer.

* ``load`` refuses (``TrustUnreadable``) a record that is missing while a host key exists, breaks
  the private-file rule of ``tabwarden.private_fs`` (a symlink or not a regular file, not ours,
  any group/other permission bit, more than one link, in a directory that is not ours/exactly
  0700), is larger than ``MAX_DOCUMENT_BYTES``, or does not parse.
* ``update`` is the only writer: an exclusive ``flock`` on ``trust.lock`` beside the record,
  re-read inside the lock and checked against the ratchet seal beside the host key
  (``trust.ratchet``: a rolled-back, edited, vanished or unsealed record is refused —
  ``TrustTampered`` — unless the person accepts it), ``mutate``, ``epoch + 1``, then seal
  ``{new, pending: current}`` → ``PrivateDir.write_atomic`` (a temp file ``O_EXCL`` 0600, fsync,
  rename, fsync the directory) → seal ``{new}``.

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
from typing import TYPE_CHECKING, NamedTuple

from tabwarden.errors import StorageFull
from tabwarden.paths import config_dir
from tabwarden.private_fs import (
    DiskFull,
    EntryTooLarge,
    PrivateDir,
    PrivateFsError,
    open_private_dir,
)
from tabwarden.trust.ratchet import (
    NO_RECORD,
    Seal,
    SealedRecord,
    SealKeeper,
    SealUnreadable,
    Tamper,
    TrustTampered,
    digest,
    first_write,
    judge,
    next_seal,
)
from tabwarden.trust.record import (
    MAX_DOCUMENT_BYTES,
    SCHEMA_VERSION,
    TrustDocument,
    TrustUnreadable,
    parse,
    serialise,
)

if TYPE_CHECKING:
    from tabwarden.trust.keystore import KeyStore

__all__ = [
    "FILE_NAME",
    "LOCK_NAME",
    "RecordRead",
    "StatKey",
    "load",
    "load_with_stat",
    "raise_floor",
    "seal_first_record",
    "seal_verdict",
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
    """Every private-filesystem refusal or failure becomes ``TrustUnreadable`` (path, reason);
    a full disk becomes ``StorageFull`` (nothing was replaced: free space and write again)."""
    try:
        yield
    except EntryTooLarge:
        raise TrustUnreadable(f"{path} is too large") from None
    except DiskFull as exc:
        raise StorageFull(str(exc)) from None
    except PrivateFsError as exc:
        raise TrustUnreadable(str(exc)) from None


def stat_key(st: os.stat_result) -> StatKey:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode, st.st_uid)


class RecordRead(NamedTuple):
    """A record as read: the document, its exact bytes (what the seal vouches for), and the stat
    key of the file they came from."""

    doc: TrustDocument
    raw: bytes
    stat: StatKey


def _read_at(directory: PrivateDir, path: Path) -> RecordRead | None:
    """Read, check and parse ``path.name`` inside ``directory``; None when it does not exist."""
    with _refusals(path):
        found = directory.read(path.name, MAX_DOCUMENT_BYTES)
    if found is None:
        return None
    raw, st = found
    return RecordRead(parse(raw), raw, stat_key(st))


def _missing(path: Path, expect_paired: bool) -> None:
    if expect_paired:
        raise TrustUnreadable(f"{path} is missing but a host key exists")


def load_with_stat(path: Path, expect_paired: bool) -> RecordRead | None:
    """The record, its bytes and the stat key of its file (for ``TrustReader``'s cache)."""
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
    return None if found is None else found.doc


# --- writing ---------------------------------------------------------------------------------


@contextmanager
def _locked(path: Path) -> Iterator[PrivateDir]:
    with _refusals(path):
        directory = open_private_dir(path.parent, create=True)
    if directory is None:
        raise TrustUnreadable(f"{path.parent} disappeared")  # removed between mkdir and open
    with directory, _refusals(path), directory.locked(LOCK_NAME):
        yield directory


def update(
    path: Path | str,
    mutate: Callable[[TrustDocument], TrustDocument],
    *,
    initial: TrustDocument | None = None,
    accept_tampered: bool = False,
) -> TrustDocument:
    """Locked read-modify-write. ``mutate`` sees the current record (or ``initial`` when there is
    none yet; without ``initial`` a missing record is ``TrustUnreadable``). The result is written
    with ``epoch = current.epoch + 1``. If ``mutate`` raises, or returns the record it was given
    unchanged, nothing is written.

    A record the ratchet seal does not vouch for (``trust.ratchet.judge``) is refused with
    ``TrustTampered`` and nothing is written — unless ``accept_tampered`` (a person confirmed,
    at a terminal, taking it as it is: ``unkill``, ``pair --reset``): then ``mutate`` sees it
    with the seal's floors applied (epoch and kill serial at least the highest sealed), so what
    is written is newer than anything ever sealed."""
    path = Path(path)
    with _locked(path) as directory:
        return _update_locked(directory, path, mutate, initial, accept_tampered)


def _below(doc: TrustDocument, seal: Seal) -> bool:
    return doc.epoch < seal.highest_epoch or doc.kill.serial < seal.kill_serial


def _update_locked(
    directory: PrivateDir,
    path: Path,
    mutate: Callable[[TrustDocument], TrustDocument],
    initial: TrustDocument | None,
    accept_tampered: bool,
) -> TrustDocument:
    keeper = SealKeeper(path.parent)
    found = _read_at(directory, path)
    replacing: SealedRecord | None = None
    if found is not None:
        current = found.doc
        seal = keeper.load(current)
        tamper = judge(found.raw, current.epoch, seal, paired=True)
        if tamper is None:
            replacing = SealedRecord(epoch=current.epoch, sha256=digest(found.raw))
    elif initial is not None:
        current = initial
        seal = keeper.any_seal()
        tamper = judge(None, None, seal, paired=False)
        replacing = NO_RECORD  # readers accept "no record yet" until this write lands
    else:
        raise TrustUnreadable(f"{path} is missing (not paired yet?)")
    if tamper is not None and not accept_tampered:
        raise TrustTampered(tamper)
    # A record the person accepts, or a first record over a seal (``seal_first_record``),
    # carries on above everything the seal ever vouched for.
    if seal is not None and (tamper is not None or (found is None and _below(current, seal))):
        current = replace(
            current,
            epoch=max(current.epoch, seal.highest_epoch),
            kill=replace(current.kill, serial=max(current.kill.serial, seal.kill_serial)),
        )
    new = mutate(current)
    if new is current and found is not None and tamper is None:
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
    sealing = next_seal(seal, data, new, replacing=replacing)
    keeper.save(new, sealing)  # 1. both the current record and the new one are valid
    with _refusals(path):
        directory.write_atomic(path.name, data)  # 2. the new record
    if sealing.pending is not None:
        keeper.save(new, sealing.settled())  # 3. only the new one
    return new


def seal_verdict(path: Path | str) -> Tamper | None:
    """What a writer would find wrong with the record at ``path`` right now (None: it is the one
    the seal vouches for, or nothing is paired), under the record's lock."""
    path = Path(path)
    keeper = SealKeeper(path.parent)
    if not os.path.lexists(path.parent):  # nothing was ever written here; create nothing
        return judge(None, None, keeper.any_seal(), paired=False)
    with _locked(path) as directory:
        found = _read_at(directory, path)
        if found is None:
            return judge(None, None, keeper.any_seal(), paired=False)
        return judge(found.raw, found.doc.epoch, keeper.load(found.doc), paired=True)


def sealed_two_factor(path: Path | str) -> bool:
    """Whether the seal vouches for a latched record (``twoFactor``): the record tabwarden last
    wrote was latched, whatever the file on disk says now. Fails closed (True) when there is a
    seal that cannot be read."""
    path = Path(path)
    keeper = SealKeeper(path.parent)
    try:
        with _locked(path) as directory:
            found = _read_at(directory, path)
            seal = keeper.any_seal() if found is None else keeper.load(found.doc)
    except TrustUnreadable:
        return True
    return seal is not None and seal.two_factor


def raise_floor(path: Path | str, epoch: int) -> int | None:
    """Raise the seal's highest epoch to ``epoch`` (a trusted party saw that epoch); the epoch of
    the record on disk (None when it is missing). Writes nothing else."""
    path = Path(path)
    with _locked(path) as directory:
        found = _read_at(directory, path)
        if found is None:
            return None
        keeper = SealKeeper(path.parent)
        seal = keeper.load(found.doc)
        if seal is not None and epoch > seal.highest_epoch:
            keeper.save(found.doc, replace(seal, highest_epoch=epoch))
        return found.doc.epoch


def seal_first_record(path: Path | str, key_store: KeyStore, *, reset: bool) -> None:
    """Before ``pair`` stores a host key for a missing record: seal "the first record is being
    written" (``ratchet.first_write``) in ``key_store``, under the record's lock, so that a host
    key with neither record nor seal is never a step of pairing (readers judge it **vanished**).
    Nothing is written when something exists at ``path``. A seal left behind carries its floors
    on; an unreadable one is replaced only on ``reset`` (a person re-pairing at a terminal)."""
    path = Path(path)
    with _locked(path):
        if os.path.lexists(path):
            return
        try:
            previous = SealKeeper(path.parent).any_seal()
        except SealUnreadable:
            if not reset:
                raise
            previous = None
        key_store.save_seal(first_write(previous).to_bytes())
