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
``unkill``'s terminal ceremony.

The gate must never cache a denial and never turn an error into a grant.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from pathlib import Path
from typing import Any

from tabwarden.paths import config_dir
from tabwarden.trust.keys import HostPublicKey
from tabwarden.trust.reader import TrustReader
from tabwarden.trust.record_file import trust_path
from tabwarden.trust.verify import Effective

log = logging.getLogger("tabwarden.trust")

FILE_STORE_NAME = "host-key.pem"
KILL_LATCH_NAME = "kill-latch"


def host_key_store(config: Path, kind: str | None = None) -> Any:
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
        self.config = config_dir(env)
        self.path = trust_path(env)
        self._reader = TrustReader(self.path, lambda: load_host_public(self.config))

    @property
    def kill_latch(self) -> Path:
        return self.config / KILL_LATCH_NAME

    def current(self, now: int | None = None) -> Effective:
        eff = self._reader.current(int(time.time()) if now is None else now)
        if not eff.killed and os.path.lexists(self.kill_latch):
            return dataclasses.replace(eff, killed=True)
        return eff
