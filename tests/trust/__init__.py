"""Tests for tabwarden.trust. Small shared helpers for real trust records in ``tmp_path``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tabwarden.trust import store
from tabwarden.trust.keys import HostKey
from tabwarden.trust.ratchet import SEAL_FILE_NAME, Seal, SealedRecord, digest
from tabwarden.trust.reader import TrustReader
from tabwarden.trust.record import Credential
from tabwarden.trust.verify import Effective

NOW = 1_760_000_000
SHA_A = "a" * 64
SHA_B = "b" * 64


def paired(tmp_path: Path, key: HostKey | None = None) -> tuple[Path, HostKey]:
    """A fresh record (signed default baseline) in a 0700 config dir, plus its host key."""
    key = key or HostKey.generate()
    path = tmp_path / "cfg" / "trust.json"
    store.initialise(path, key, "file", NOW)
    return path, key


def with_client(tmp_path: Path) -> tuple[Path, HostKey]:
    path, key = paired(tmp_path)
    store.add_client(path, key, "claude", "/usr/bin/claude", SHA_A, NOW + 1)
    return path, key


def reader(path: Path, key: HostKey) -> TrustReader:
    return TrustReader(path, lambda: key.public)


def read_json(path: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(path.read_bytes())
    return result


def forge_seal(path: Path) -> None:
    """Rewrite the file store's ratchet seal to vouch for whatever ``path`` holds now, as an
    attacker who can write both files would (the seal is as private as the key beside it, no
    more). With the ratchet out of the way, the signatures are the barrier left."""
    raw = path.read_bytes()
    try:
        epoch = json.loads(raw)["epoch"]
    except (ValueError, KeyError, TypeError):
        return  # not a record: the reader refuses it before it looks at a seal
    if type(epoch) is not int or epoch < 0:
        return
    seal = Seal(
        record=SealedRecord(epoch=epoch, sha256=digest(raw)), highest_epoch=epoch, kill_serial=0
    )
    seal_file = path.with_name(SEAL_FILE_NAME)
    temp = seal_file.with_name(seal_file.name + ".edit")
    temp.write_bytes(seal.to_bytes())
    os.chmod(temp, 0o600)
    os.replace(temp, seal_file)


def hand_write(path: Path, data: bytes | str, mode: int = 0o600, *, reseal: bool = True) -> None:
    """Replace the file the way an editor does (new inode), keeping it ours and 0600; with
    ``reseal`` (the default) the attacker rewrites the ratchet seal to match (``forge_seal``)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    temp = path.with_name(path.name + ".edit")
    temp.write_bytes(raw)
    os.chmod(temp, mode)
    os.replace(temp, path)
    if reseal:
        forge_seal(path)


def hand_edit(path: Path, obj: dict[str, Any], *, reseal: bool = True) -> None:
    hand_write(path, json.dumps(obj, indent=2), reseal=reseal)


def denied(eff: Effective) -> bool:
    return eff.killed and not eff.paired_clients and not eff.browsers


def credential(uv: bool) -> Credential:
    """A stand-in enrolled credential (its key is not a real one: for record shapes only)."""
    return Credential(
        credential_id="Y3JlZA",
        public_key="cGs",
        sign_count=3,
        enrolled_at=1,
        path="webauthn",
        uv=uv,
    )
