"""trust/record_file.py's writer under attack: ``update`` refuses before ``mutate`` ever sees the
record, and nothing in the directory (or behind a planted link) changes."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from tabwarden.trust.record import TrustDocument, TrustUnreadable
from tabwarden.trust.record_file import load, update
from tests.trust import with_client


def _state(root: Path) -> dict[str, tuple[int, bytes | None]]:
    out: dict[str, tuple[int, bytes | None]] = {}
    for p in sorted(root.rglob("*")):
        st = os.lstat(p)
        out[str(p.relative_to(root))] = (
            st.st_mode,
            p.read_bytes() if stat.S_ISREG(st.st_mode) else None,
        )
    return out


def _symlinked_record(path: Path, tmp_path: Path) -> None:
    os.replace(path, tmp_path / "victim.json")
    path.symlink_to(tmp_path / "victim.json")


def _symlinked_dir(path: Path, tmp_path: Path) -> None:
    os.replace(path.parent, tmp_path / "real")
    path.parent.symlink_to(tmp_path / "real")


def _fifo(path: Path, tmp_path: Path) -> None:
    path.unlink()
    os.mkfifo(path, 0o600)


def _symlinked_lock(path: Path, tmp_path: Path) -> None:
    (path.parent / "trust.lock").unlink()
    (path.parent / "trust.lock").symlink_to(tmp_path / "victim.lock")


ATTACKS: dict[str, tuple[Callable[[Path, Path], None], str]] = {
    "symlinked record": (_symlinked_record, "symlink"),
    "symlinked directory": (_symlinked_dir, "symlink"),
    "record mode 0640": (lambda p, _: os.chmod(p, 0o640), "mode 0640"),
    "directory mode 0750": (lambda p, _: os.chmod(p.parent, 0o750), "not 0700"),
    "directory mode 0755": (lambda p, _: os.chmod(p.parent, 0o755), "not 0700"),  # noqa: S103
    "record is a fifo": (_fifo, "not a regular file"),
    "record owned by someone else": (lambda p, _: os.chown(p, 65534, 65534), "owned by uid"),
    "lock is a symlink": (_symlinked_lock, "symlink"),
}


@pytest.mark.parametrize("name", list(ATTACKS))
@pytest.mark.promise("EV-01")
def test_update_refuses_and_writes_nothing(tmp_path: Path, name: str) -> None:
    if "someone else" in name and os.geteuid() != 0:
        pytest.skip("needs root to chown")
    path, _key = with_client(tmp_path / "home")
    attack, fragment = ATTACKS[name]
    (tmp_path / "victim.lock").write_bytes(b"lock victim\n")
    attack(path, tmp_path)
    before = _state(tmp_path)
    seen: list[TrustDocument] = []

    def mutate(doc: TrustDocument) -> TrustDocument:
        seen.append(doc)
        return doc.with_(epoch=doc.epoch)

    with pytest.raises(TrustUnreadable, match=fragment):
        update(path, mutate)
    if "lock" not in name:  # readers take no lock
        with pytest.raises(TrustUnreadable, match=fragment):
            load(path, expect_paired=True)
    assert seen == []  # nothing was read, so nothing could be decided on it
    assert _state(tmp_path) == before  # nothing written: no temp, no lock, no victim change
