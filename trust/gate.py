"""The one question every enforcement point asks: what does the trust record grant right now?

``TrustGate`` wraps a ``TrustReader`` (stat-cached, fail-closed, never raises) with the rule for
finding the host key's public half, which is the anchor grants are verified against — never the
copy inside ``trust.json``:

1. ``$TABWARDEN_CONFIG_DIR/host-key.pem`` exists → the file store (``pair --file-store``).
2. else the OS keyring, when it is usable → its key, or "no key" (unpaired).
3. else (no usable keyring: headless, no D-Bus) → "no key". If a trust record exists anyway, the
   reader denies everything ("a trust record exists but no host key is stored"): a locked or
   missing keyring can only take power away.

Before anything is paired there is no record to write a kill into, so ``tabwarden kill`` then
leaves ``kill-latch`` beside where the record would be; its mere presence (any file, even a
dangling symlink) means killed. It is a narrowing record: honoured unsigned, removed only by
``unkill``'s terminal ceremony. The gate also writes it — any process may narrow — the first time
its reader finds the record tampered with (``trust.ratchet``: rolled back, edited, vanished,
unsealed), with a note saying what was found, and audits that once; so putting the right file
back afterwards does not silently un-deny: a person runs ``tabwarden unkill``.

The gate must never cache a denial and never turn an error into a grant.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import logging
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tabwarden.paths import config_dir
from tabwarden.trust.keys import HostPublicKey
from tabwarden.trust.ratchet import Tamper
from tabwarden.trust.reader import Reading, TrustReader
from tabwarden.trust.record_file import trust_path
from tabwarden.trust.verify import Effective

if TYPE_CHECKING:
    from tabwarden.trust.keystore import KeyStore

log = logging.getLogger("tabwarden.trust")

FILE_STORE_NAME = "host-key.pem"
KILL_LATCH_NAME = "kill-latch"
#: A latch note is a line of JSON; anything much larger is not ours.
_MAX_LATCH_NOTE = 4096


def write_kill_latch(latch: Path, note: dict[str, Any]) -> bool:
    """Create the kill latch with ``note`` (one JSON line). False when a latch exists already:
    it is never replaced, so the first note (e.g. what tampering was found) stays. On a full disk
    the latch is still created (an empty file is a kill latch too) with its note lost; only a
    latch that cannot be created at all raises ``OSError``."""
    latch.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(latch, flags, 0o600)
    except FileExistsError:
        return False
    try:
        data = (json.dumps(note, sort_keys=True) + "\n").encode("utf-8")
        if os.write(fd, data) != len(data):
            raise OSError(errno.ENOSPC, "short write")
        os.fsync(fd)
    except OSError as exc:
        # The latch exists, and its existence is the kill; only the note is lost (a full disk).
        log.error("the kill latch was created but its note was not written (%s)", exc.strerror)
    finally:
        os.close(fd)
    return True


def latch_tamper_note(latch: Path) -> Tamper | None:
    """The tampering the kill latch was written for, if it was (never raises)."""
    try:
        fd = os.open(latch, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        raw = os.read(fd, _MAX_LATCH_NOTE + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        note = json.loads(raw)
    except ValueError:
        return None
    return Tamper.from_json(note.get("tamper")) if isinstance(note, dict) else None


def host_key_store(config: Path, kind: str | None = None) -> KeyStore:
    """The store holding (or to hold) the host key: the file store when its file exists or is
    asked for, else the OS keyring. Never falls back from one to the other silently."""
    from tabwarden.trust.keystore import store_for

    if kind is None:
        kind = (
            "file"
            if (config / FILE_STORE_NAME).exists() or (config / FILE_STORE_NAME).is_symlink()
            else "keyring"
        )
    return store_for(kind, config)


def load_host_public(config: Path) -> HostPublicKey | None:
    """The host key's public half from its store, or None when no key is stored (unpaired)."""
    from tabwarden.trust.keystore import FileStore, KeyringStore, KeyStoreUnavailable

    key_file = config / FILE_STORE_NAME
    if key_file.exists() or key_file.is_symlink():
        key = FileStore(key_file).load()  # unsafe/corrupt file raises: the reader denies
        return key.public if key is not None else None
    try:
        key = KeyringStore().load()
    except KeyStoreUnavailable as exc:
        log.debug("keyring not usable (%s); treating as no host key", exc)
        return None
    return key.public if key is not None else None


class TrustGate:
    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.env = env
        self.config = config_dir(env)
        self.path = trust_path(env)
        self._reader = TrustReader(self.path, lambda: load_host_public(self.config))

    @property
    def kill_latch(self) -> Path:
        return self.config / KILL_LATCH_NAME

    def read(self, now: int | None = None) -> Reading:
        """What the record grants (the latch applied), and what tampering was found, if any."""
        at = int(time.time()) if now is None else now
        reading = self._reader.read(at)
        if reading.tamper is not None:
            self._latch(reading.tamper, at)
        eff = reading.effective
        if not eff.killed and os.path.lexists(self.kill_latch):
            return Reading(dataclasses.replace(eff, killed=True), reading.tamper)
        return reading

    def current(self, now: int | None = None) -> Effective:
        return self.read(now).effective

    def latch_note(self) -> Tamper | None:
        """The tampering the kill latch was written for (None: no latch, or a plain kill)."""
        return latch_tamper_note(self.kill_latch)

    def _latch(self, tamper: Tamper, now: int) -> None:
        """Latch the kill switch for ``tamper`` (once) and audit it; never raises."""
        note = {"at": now, "reason": "trust record tampered", "tamper": tamper.to_json()}
        try:
            created = write_kill_latch(self.kill_latch, note)
        except OSError as exc:
            log.error("could not latch the kill switch for %s: %s", tamper.reason, exc)
            return
        if not created:
            return
        log.error("kill switch latched: %s. %s", tamper.reason, tamper.next_step)
        try:
            from tabwarden.trust.audit import AuditLog

            AuditLog.default(self.env).append(
                "trust_tampered",
                decision="narrowed",
                kind=tamper.kind,
                reason=tamper.reason,
                epoch=tamper.epoch,
                highest=tamper.highest,
            )
        except Exception as exc:  # the latch is what matters; the audit line is best effort
            log.error("could not audit the latched kill switch (%s)", type(exc).__name__)
