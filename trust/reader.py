"""The reader every enforcement point uses: a cached, fail-closed view of the trust record.

It must never raise and never cache a denial: any failure is ``Effective.deny_all(reason)``, and
fixing the file takes effect on the next call.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from tabwarden.trust.keys import HostPublicKey
from tabwarden.trust.record import TrustUnreadable
from tabwarden.trust.record_file import StatKey, load_with_stat, stat_key
from tabwarden.trust.verify import Effective, effective

__all__ = ["TrustReader"]


class TrustReader:
    """Cached, fail-closed view of the record for one process.

    Re-verifies whenever the file's (dev, inode, size, mtime, ctime, mode, owner) or its directory's
    (dev, inode, mode, owner) change. Keeps the
    highest epoch and kill serial it has seen; a lower one later is tampering (deny). Denials are
    never cached, so fixing the file takes effect on the next call. ``current`` never raises.
    """

    def __init__(
        self, path: Path | str, public_key_loader: Callable[[], HostPublicKey | None]
    ) -> None:
        self._path = Path(path)
        self._loader = public_key_loader
        self._lock = threading.Lock()
        self._key: StatKey | None = None
        self._dir_key: StatKey | None = None
        self._cached: Effective | None = None
        self._max_epoch = -1
        self._max_kill = 0

    @property
    def path(self) -> Path:
        return self._path

    def current(self, now: int) -> Effective:
        try:
            with self._lock:
                return self._current(now)
        except TrustUnreadable as exc:
            return Effective.deny_all(exc.reason)
        except Exception as exc:  # never raise: any surprise is a denial
            return Effective.deny_all(f"trust check failed ({type(exc).__name__})")

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
        if self._cached is not None and probe == self._key and dir_probe == self._dir_key:
            return self._cached
        self._cached = None
        public = self._loader()
        if public is not None and not isinstance(public, HostPublicKey):
            raise TypeError("public_key_loader must return a HostPublicKey or None")
        found = load_with_stat(self._path, expect_paired=public is not None)
        if found is None:
            eff = Effective.unpaired()
            file_key: StatKey | None = None
        elif public is None:
            return Effective.deny_all("a trust record exists but no host key is stored")
        else:
            doc, file_key = found
            eff = effective(doc, public, now)
            if doc.epoch < self._max_epoch:
                return Effective.deny_all(
                    f"epoch went backwards ({doc.epoch} < {self._max_epoch}): tampering"
                )
            if eff.kill_serial < self._max_kill:
                return Effective.deny_all(
                    f"kill serial went backwards ({eff.kill_serial} < {self._max_kill}): tampering"
                )
            self._max_epoch = doc.epoch
            self._max_kill = eff.kill_serial
        if file_key is not None and file_key == probe:  # cache only what that stat describes
            self._key, self._dir_key, self._cached = file_key, dir_probe, eff
        return eff
