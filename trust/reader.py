"""The reader every enforcement point uses: a cached, fail-closed view of the trust record.

It must never raise and never cache a denial: any failure is ``Effective.deny_all(reason)``, and
fixing the file takes effect on the next call. It never writes: what to do about tampering it
reports (``Reading.tamper``) is the gate's business (it latches the kill switch).
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from tabwarden.errors import TabwardenError
from tabwarden.trust.keys import HostPublicKey
from tabwarden.trust.ratchet import Seal, SealKeeper, Tamper, TrustTampered, judge, pending_floor
from tabwarden.trust.record import TrustDocument, TrustUnreadable
from tabwarden.trust.record_file import RecordRead, StatKey, load_with_stat, stat_key
from tabwarden.trust.verify import Effective, effective

__all__ = ["Reading", "SealSource", "TrustReader"]

#: Reads of record + seal before giving up on a record that keeps changing (a denial, never a
#: verdict of tampering: each write settles in milliseconds).
_SETTLE_TRIES = 20


class SealSource(Protocol):
    """Where the reader finds the ratchet seal (``trust.ratchet.SealKeeper``)."""

    def load(self, doc: TrustDocument) -> Seal | None: ...

    def any_seal(self) -> Seal | None: ...

    def probe(self) -> tuple[int, ...]: ...


@dataclasses.dataclass(frozen=True, slots=True)
class Reading:
    """What the record grants now, and (when it was refused as tampered) what the ratchet found."""

    effective: Effective
    tamper: Tamper | None = None


class TrustReader:
    """Cached, fail-closed view of the record for one process.

    Re-verifies whenever the file's (dev, inode, size, mtime, ctime, mode, owner), its
    directory's (dev, inode, mode, owner) or the file-store seal's stat change. Every re-verify
    checks the record's exact bytes against the ratchet seal kept beside the host key
    (``trust.ratchet``): rolled back, edited, vanished or unsealed is tampering (deny). Keeps the
    highest epoch and kill serial it has seen; a lower one later is tampering too. Once it has
    seen a paired record, a record or host key that vanishes is tampering, never the unpaired
    posture. Denials are never cached. ``read`` and ``current`` never raise.
    """

    def __init__(
        self,
        path: Path | str,
        public_key_loader: Callable[[], HostPublicKey | None],
        seals: SealSource | None = None,
    ) -> None:
        self._path = Path(path)
        self._loader = public_key_loader
        self._seals: SealSource = seals if seals is not None else SealKeeper(self._path.parent)
        self._lock = threading.Lock()
        self._key: StatKey | None = None
        self._dir_key: StatKey | None = None
        self._seal_key: StatKey | None = None
        self._cached: Effective | None = None
        self._max_epoch = -1
        self._max_kill = 0
        #: Set once this process has seen a paired record: from then on, a record (or key) that
        #: disappears is tampering, never "nothing paired yet".
        self._seen_paired = False

    @property
    def path(self) -> Path:
        return self._path

    def current(self, now: int) -> Effective:
        return self.read(now).effective

    def read(self, now: int) -> Reading:
        try:
            with self._lock:
                return Reading(self._current(now))
        except TrustTampered as exc:
            return Reading(Effective.deny_all(exc.reason), exc.tamper)
        except TrustUnreadable as exc:
            return Reading(Effective.deny_all(exc.reason))
        except TabwardenError as exc:  # key store refusals: their messages carry no secret
            return Reading(Effective.deny_all(f"trust check failed: {exc}"))
        except Exception as exc:  # never raise: any surprise is a denial
            return Reading(Effective.deny_all(f"trust check failed ({type(exc).__name__})"))

    def _current(self, now: int) -> Effective:
        try:
            st = os.stat(self._path, follow_symlinks=False)
            probe: StatKey | None = stat_key(st)
        except FileNotFoundError:
            probe = None
        except OSError:
            probe = (-1,)
        try:
            dst = os.stat(self._path.parent, follow_symlinks=False)
            dir_probe: StatKey = (dst.st_dev, dst.st_ino, dst.st_mode, dst.st_uid)
        except OSError:
            dir_probe = (-1,)
        seal_probe = self._seals.probe()
        if (
            self._cached is not None
            and probe == self._key
            and dir_probe == self._dir_key
            and seal_probe == self._seal_key
        ):
            return self._cached
        self._cached = None
        public = self._loader()
        if public is not None and not isinstance(public, HostPublicKey):
            raise TypeError("public_key_loader must return a HostPublicKey or None")
        found, seal = self._settled()
        if found is None:
            if self._seen_paired:
                raise TrustTampered(
                    Tamper.vanished(
                        "it (or the host key) disappeared after this process saw them paired",
                        self._max_epoch,
                    )
                )
            tamper = judge(None, None, seal, paired=public is not None)
            if tamper is not None:
                raise TrustTampered(tamper)
            if public is not None:
                raise TrustUnreadable(f"{self._path} is missing but a host key exists")
            eff = Effective.unpaired()
            file_key: StatKey | None = None
        elif public is None:
            return Effective.deny_all("a trust record exists but no host key is stored")
        else:
            doc, raw, file_key = found
            tamper = judge(raw, doc.epoch, seal, paired=True)
            if tamper is not None:
                raise TrustTampered(tamper)
            eff = effective(doc, public, now)
            floor = pending_floor(raw, doc.epoch, seal)
            if eff.kill_serial < floor:  # the write in flight may have been a kill
                eff = dataclasses.replace(eff, killed=True, kill_serial=floor)
            if doc.epoch < self._max_epoch:
                raise TrustTampered(Tamper.rolled_back(doc.epoch, self._max_epoch))
            if eff.kill_serial < self._max_kill:
                raise TrustTampered(
                    Tamper.edited(
                        doc.epoch,
                        self._max_epoch,
                        f"kill serial went backwards ({eff.kill_serial} < {self._max_kill})",
                    )
                )
            self._max_epoch = doc.epoch
            self._max_kill = eff.kill_serial
            self._seen_paired = True
        if file_key is not None and file_key == probe:  # cache only what that stat describes
            self._key, self._dir_key, self._seal_key, self._cached = (
                file_key,
                dir_probe,
                seal_probe,
                eff,
            )
        return eff

    def _settled(self) -> tuple[RecordRead | None, Seal | None]:
        """The record and its seal as one consistent pair. Readers take no lock, and a writer
        changes the seal, then the record, then the seal: so the record is read again after the
        seal, and only the same bytes twice (or missing twice) are judged. A read that fails
        (a file renamed over while open, say) is tried again; the last failure is raised."""
        failure: TabwardenError = TrustUnreadable(
            "the trust record kept changing while it was read; try again"
        )
        for _ in range(_SETTLE_TRIES):
            try:
                found = load_with_stat(self._path, expect_paired=False)
                seal = self._seals.any_seal() if found is None else self._seals.load(found.doc)
                again = load_with_stat(self._path, expect_paired=False)
            except TabwardenError as exc:  # e.g. a file renamed over while open: read again
                failure = exc
                continue
            if (found is None and again is None) or (
                found is not None and again is not None and found.raw == again.raw
            ):
                return found, seal
        raise failure
