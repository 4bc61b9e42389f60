"""Concurrent writers lose nothing: 8 real processes x 25 locked updates each, and the ratchet
seal beside the key ends up vouching for exactly the last record written."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path
from typing import Any

import pytest

from tabwarden.trust import store
from tabwarden.trust.keys import HostKey
from tabwarden.trust.ratchet import SEAL_FILE_NAME, digest, parse_seal
from tabwarden.trust.reader import TrustReader
from tabwarden.trust.record_file import load
from tests.trust import reader

WORKERS = 8
EACH = 25


def _worker(path: str, pem: bytes, idx: int, barrier: Any) -> None:
    key = HostKey.from_pem(pem)
    barrier.wait(timeout=60)
    for i in range(EACH):
        tag = idx * 1000 + i
        op = (idx + i) % 3
        if op == 0:
            store.add_restriction(path, "eval", False, tag)
        elif op == 1:
            store.engage_kill(path, f"w{tag}", tag)
        else:
            store.add_client(path, key, f"w{tag}", f"/usr/bin/w{tag}", f"{tag:064x}", tag)


@pytest.mark.promise("TR-08")
def test_eight_processes_lose_no_update(tmp_path: Path) -> None:
    key = HostKey.generate()
    cfg = tmp_path / "cfg"
    cfg.mkdir(mode=0o700)
    path = cfg / "trust.json"
    store.initialise(path, key, "file", 0)  # epoch 1, sealed

    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(WORKERS)
    procs = [
        ctx.Process(target=_worker, args=(str(path), key.to_pem(), idx, barrier))
        for idx in range(WORKERS)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0] * WORKERS

    doc = load(path, expect_paired=True)
    assert doc is not None
    expected = {idx * 1000 + i for idx in range(WORKERS) for i in range(EACH)}
    seen = (
        [r.at for r in doc.policy.restrictions]
        + [e.at for e in doc.kill.events]
        + [c.paired_at for c in doc.clients]
    )
    assert len(seen) == WORKERS * EACH == 200
    assert set(seen) == expected
    assert doc.epoch == 201
    assert sorted(e.serial for e in doc.kill.events) == list(range(1, len(doc.kill.events) + 1))
    eff = reader(path, key).current(0)
    assert eff.killed and len(eff.paired_clients) == len(doc.clients) and not eff.ignored
    assert sorted(os.listdir(cfg)) == [SEAL_FILE_NAME, "trust.json", "trust.lock"]
    seal = parse_seal((cfg / SEAL_FILE_NAME).read_bytes())
    assert seal.pending is None and seal.record.epoch == seal.highest_epoch == 201
    assert seal.record.sha256 == digest(path.read_bytes())


def _writer(path: str, pem: bytes, idx: int) -> None:
    key = HostKey.from_pem(pem)
    for i in range(EACH):
        if i % 2:
            store.add_restriction(path, "eval", False, idx * 1000 + i)
        else:
            store.add_client(path, key, f"w{idx}-{i}", "/usr/bin/w", f"{i:064x}", i)


@pytest.mark.promise("BP-06")
def test_readers_never_mistake_a_write_in_flight_for_tampering(tmp_path: Path) -> None:
    """Readers take no lock; writers seal, write, seal. A fresh reader (no cache, no history)
    polling while two processes write must judge every read sound — never rolled back or
    edited, which would latch the kill switch for nothing."""
    key = HostKey.generate()
    cfg = tmp_path / "cfg"
    cfg.mkdir(mode=0o700)
    path = cfg / "trust.json"
    store.initialise(path, key, "file", 0)
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(path), key.to_pem(), i)) for i in range(2)]
    for p in procs:
        p.start()
    reads = 0
    while any(p.is_alive() for p in procs) or reads < 50:
        reading = TrustReader(path, lambda: key.public).read(0)
        assert reading.tamper is None, reading
        assert reading.effective.refused is None, reading
        reads += 1
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0, 0]
    assert load(path, expect_paired=True) is not None
