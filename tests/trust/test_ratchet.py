"""The epoch ratchet: the seal beside the host key catches what the record alone cannot.

Each test writes real records through the store writers, then does what a same-user program
could — put an older ``trust.json`` back, raise an old record's epoch, lower the kill serial, drop
a revocation, delete the record or the seal — *without* being able to rewrite the seal (that
attacker is ``tests.trust.forge_seal``, answered by the signatures and, for a rollback of both,
by the extension's witness). Readers deny, writers refuse, and nothing changes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tabwarden.private_fs import PrivateDir
from tabwarden.trust import operations, store
from tabwarden.trust.keystore import FileStore
from tabwarden.trust.operations import TerminalPhrase
from tabwarden.trust.ratchet import (
    SEAL_FILE_NAME,
    SealKeeper,
    SealUnreadable,
    TrustTampered,
    digest,
    judge,
    parse_seal,
)
from tabwarden.trust.reader import Reading, TrustReader
from tabwarden.trust.record import TrustUnreadable, parse
from tests.fixtures import enrol_direct, trust_world
from tests.trust import NOW, SHA_A, denied, hand_edit, hand_write, paired, reader, with_client
from tests.trust.softauthn import SoftAuthenticator

UNKILL = TerminalPhrase(action="unkill")


def _seal(path: Path) -> Any:
    return parse_seal((path.parent / SEAL_FILE_NAME).read_bytes())


def _fresh(path: Path, key: Any) -> Reading:
    """What a process started now (no history of its own) reads."""
    return reader(path, key).read(NOW)


def _files(path: Path) -> tuple[bytes, bytes]:
    return path.read_bytes(), (path.parent / SEAL_FILE_NAME).read_bytes()


# --- every writer seals what it writes ------------------------------------------------------


def test_every_write_is_sealed_beside_the_key(tmp_path: Path) -> None:
    path, key = with_client(tmp_path)
    store.engage_kill(path, "cli", NOW)
    seal = _seal(path)
    doc = parse(path.read_bytes())
    assert seal.record.epoch == seal.highest_epoch == doc.epoch == 3
    assert seal.record.sha256 == digest(path.read_bytes())
    assert seal.pending is None and seal.kill_serial == 1
    assert oct((path.parent / SEAL_FILE_NAME).stat().st_mode & 0o777) == "0o600"
    assert _fresh(path, key).tamper is None


# --- a fresh process catches rollback and edits ---------------------------------------------


def test_an_older_record_put_back_is_rolled_back_for_a_fresh_reader(tmp_path: Path) -> None:
    path, key = paired(tmp_path)
    store.set_baseline(path, key, {"eval": True}, NOW)  # eval on, at epoch 2
    old = path.read_bytes()
    store.engage_kill(path, "cli", NOW)
    store.add_restriction(path, "eval", False, NOW)
    hand_write(path, old, reseal=False)  # the attacker cannot reach the seal
    found = _fresh(path, key)
    assert found.tamper is not None and found.tamper.kind == "rolled_back"
    assert found.effective.refused == "trust record rolled back (epoch 2, highest seen 4)"
    assert denied(found.effective) and found.effective.policy.eval is False


def _old_record_raised_to(epoch_delta: int) -> Any:
    def forge(path: Path, old: dict[str, Any], now: dict[str, Any]) -> dict[str, Any]:
        return {**old, "epoch": now["epoch"] + epoch_delta}

    return forge


def _lower_kill(path: Path, old: dict[str, Any], now: dict[str, Any]) -> dict[str, Any]:
    return {**now, "kill": {"serial": 0, "events": []}}


def _drop_revocation(path: Path, old: dict[str, Any], now: dict[str, Any]) -> dict[str, Any]:
    return {**now, "revocations": []}


FORGERIES = {
    "old record, epoch raised to the sealed one": (_old_record_raised_to(0), "other bytes"),
    "old record, epoch raised past the sealed one": (_old_record_raised_to(1), "a later epoch"),
    "kill serial lowered, same epoch": (_lower_kill, "other bytes"),
    "revocation dropped, same epoch": (_drop_revocation, "other bytes"),
}


@pytest.mark.parametrize("name", FORGERIES)
def test_an_edited_record_is_caught_whatever_its_epoch_says(tmp_path: Path, name: str) -> None:
    forge, detail = FORGERIES[name]
    path, key = with_client(tmp_path)
    store.set_baseline(path, key, {"eval": True}, NOW)
    old = json.loads(path.read_bytes())
    store.revoke(path, "client", "claude", NOW)
    store.engage_kill(path, "cli", NOW)
    hand_edit(path, forge(path, old, json.loads(path.read_bytes())), reseal=False)
    found = _fresh(path, key)
    assert found.tamper is not None and found.tamper.kind == "edited", found
    assert found.effective.refused is not None
    assert "edited outside tabwarden" in found.effective.refused
    assert detail in found.effective.refused
    assert denied(found.effective) and found.effective.policy.eval is False


def test_a_deleted_seal_is_refused_not_adopted(tmp_path: Path) -> None:
    """Adopting an unsealed record would make "delete the seal, put the old record back" a
    rollback; only a person adopts it (``unkill``)."""
    path, key = paired(tmp_path)
    (path.parent / SEAL_FILE_NAME).unlink()
    found = _fresh(path, key)
    assert found.tamper is not None and found.tamper.kind == "unsealed"
    assert denied(found.effective)


@pytest.mark.parametrize(
    "garbage", [b"", b"{}", b"not json", b'{"version": 2}', b"\xff" * 10, b"[" * 5000]
)
def test_a_damaged_seal_denies(tmp_path: Path, garbage: bytes) -> None:
    path, key = paired(tmp_path)
    hand_write(path.parent / SEAL_FILE_NAME, garbage, reseal=False)
    eff = reader(path, key).current(NOW)
    assert denied(eff) and eff.refused is not None and "seal" in eff.refused


@given(st.binary(max_size=600))
def test_parse_seal_refuses_anything_that_is_not_a_seal_with_one_error(raw: bytes) -> None:
    """Invariant: it parses a seal or raises SealUnreadable, never anything else."""
    try:
        seal = parse_seal(raw)
    except SealUnreadable:
        return
    assert parse_seal(seal.to_bytes()) == seal


@given(st.integers(min_value=0, max_value=400), st.integers(min_value=1, max_value=255))
def test_any_changed_byte_of_the_record_is_caught(position: int, flip: int) -> None:
    raw = b'{"epoch": 7, "padding": "' + b"x" * 400 + b'"}'
    seal = parse_seal(
        json.dumps(
            {
                "version": 1,
                "record": {"epoch": 7, "sha256": digest(raw)},
                "highestEpoch": 7,
                "killSerial": 0,
                "pending": None,
            }
        ).encode()
    )
    assert judge(raw, 7, seal, paired=True) is None
    changed = bytearray(raw)
    changed[position % len(raw)] ^= flip
    assert judge(bytes(changed), 7, seal, paired=True) is not None


# --- writers refuse a tampered record; kill latches -----------------------------------------


def test_narrowing_writers_do_not_launder_a_tampered_record(tmp_path: Path) -> None:
    world = trust_world(tmp_path)
    path = world.ctx.trust_path
    old = path.read_bytes()
    operations.restrict(world.ctx, {"clickGraceSeconds": 5}, NOW)
    hand_write(path, old, reseal=False)
    before = _files(path)
    with pytest.raises(TrustUnreadable, match="see `tabwarden status`"):  # it says: unkill
        operations.restrict(world.ctx, {"eval": False}, NOW)
    attempts: list[Callable[[], object]] = [
        lambda: store.add_restriction(path, "eval", False, NOW),
        lambda: store.revoke(path, "client", "claude", NOW),
        lambda: store.engage_kill(path, "cli", NOW),
    ]
    for attempt in attempts:
        with pytest.raises(TrustTampered) as refused:
            attempt()
        assert "tabwarden unkill" in refused.value.hint
    assert _files(path) == before
    assert operations.kill(world.ctx, "cli", NOW) == 0  # the kill lands in the latch instead
    assert _files(path) == before
    assert world.ctx.kill_latch.exists() and world.ctx.effective().killed


# --- crash safety: seal {new, pending} → record → seal {new} ---------------------------------


@pytest.mark.promise("BP-06")
def test_a_crash_before_the_record_lands_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, key = with_client(tmp_path)
    before = path.read_bytes()
    real = PrivateDir.write_atomic

    def crash(self: PrivateDir, name: str, data: bytes, mode: int = 0o600) -> None:
        if name == path.name:
            raise OSError(5, "simulated crash before the rename")
        real(self, name, data, mode)

    monkeypatch.setattr(PrivateDir, "write_atomic", crash)
    with pytest.raises(Exception, match="simulated crash"):
        store.engage_kill(path, "cli", NOW)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert _seal(path).pending is not None  # the write was in flight
    found = _fresh(path, key)
    assert found.tamper is None
    # the lost write was a kill: the record it would have replaced is held killed meanwhile
    assert found.effective.killed and [c.label for c in found.effective.paired_clients] == [
        "claude"
    ]
    store.add_restriction(path, "eval", False, NOW)  # the next writer carries on from it
    assert _seal(path).pending is None and _fresh(path, key).tamper is None
    assert parse(path.read_bytes()).epoch == 3


@pytest.mark.promise("BP-06")
def test_a_crash_after_the_record_lands_keeps_it_and_the_next_write_closes_the_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, key = with_client(tmp_path)
    prev = path.read_bytes()
    real = SealKeeper.save
    calls: list[int] = []

    def crash_on_settle(self: SealKeeper, doc: Any, seal: Any) -> None:
        calls.append(1)
        if len(calls) == 2:
            raise OSError(5, "simulated crash before the seal settles")
        real(self, doc, seal)

    monkeypatch.setattr(SealKeeper, "save", crash_on_settle)
    with pytest.raises(OSError, match="settles"):
        store.engage_kill(path, "cli", NOW)
    monkeypatch.undo()
    killed = path.read_bytes()
    assert parse(killed).kill.serial == 1  # the record landed
    assert _fresh(path, key).effective.killed
    # The documented window: one step back is still accepted, and killed (the seal's floor).
    hand_write(path, prev, reseal=False)
    assert _fresh(path, key).tamper is None and _fresh(path, key).effective.killed
    hand_write(path, killed, reseal=False)
    store.add_restriction(path, "eval", False, NOW)  # the next write closes the window
    hand_write(path, prev, reseal=False)
    found = _fresh(path, key)
    assert found.tamper is not None and found.tamper.kind == "rolled_back"


# --- the witness: record and seal put back together -----------------------------------------


def test_a_witnessed_epoch_catches_record_and_seal_rolled_back_together(tmp_path: Path) -> None:
    world = trust_world(tmp_path)
    path = world.ctx.trust_path
    old = _files(path)
    operations.kill(world.ctx, "cli", NOW)
    seen = parse(path.read_bytes()).epoch
    hand_write(path, old[0], reseal=False)
    hand_write(path.parent / SEAL_FILE_NAME, old[1], reseal=False)
    assert world.key is not None
    assert _fresh(path, world.key).effective.killed is False  # they agree: files alone can't tell
    assert operations.witness_epoch(world.ctx, seen - 1, NOW, source="extension") is False
    assert not world.ctx.kill_latch.exists()
    assert operations.witness_epoch(world.ctx, seen, NOW, source="extension") is True
    assert world.ctx.kill_latch.exists()
    found = _fresh(path, world.key)
    assert found.tamper is not None and found.tamper.kind == "rolled_back"
    assert found.effective.refused == f"trust record rolled back (epoch 1, highest seen {seen})"
    [entry] = [e for e in world.audit() if e["event"] == "trust_tampered"]
    assert entry["source"] == "extension" and entry["highest"] == seen
    assert old[0] == path.read_bytes()  # the record itself is left alone


# --- recovery at the terminal ---------------------------------------------------------------


def test_unkill_accepts_a_rolled_back_record_above_every_epoch_sealed(tmp_path: Path) -> None:
    world = trust_world(tmp_path)
    path = world.ctx.trust_path
    assert world.key is not None
    store.add_client(path, world.key, "claude", "/usr/bin/claude", SHA_A, NOW)
    old = path.read_bytes()
    operations.kill(world.ctx, "cli", NOW)
    operations.restrict(world.ctx, {"clickGraceSeconds": 5}, NOW)  # epoch 4
    hand_write(path, old, reseal=False)
    assert world.ctx.effective().refused is not None
    tamper = operations.tampering(world.ctx)
    assert tamper is not None and tamper.kind == "rolled_back"
    epoch = operations.release_kill(world.ctx, UNKILL, NOW)
    assert epoch == 5  # max(record 2, sealed 4) + 1
    assert _seal(path).record.epoch == 5 and _seal(path).highest_epoch == 5
    assert not world.ctx.kill_latch.exists()
    found = _fresh(path, world.key)
    assert found.tamper is None and not found.effective.killed
    assert [c.label for c in found.effective.paired_clients] == ["claude"]  # as it is now
    events = [(e["event"], e.get("kind")) for e in world.audit()]
    assert ("trust_accepted", "rolled_back") in events and events[-1] == ("unkill", None)


def test_a_vanished_record_is_not_accepted_and_pair_reset_continues_above_the_seal(
    tmp_path: Path,
) -> None:
    world = trust_world(tmp_path)
    path = world.ctx.trust_path
    for _ in range(3):
        operations.restrict(world.ctx, {"clickGraceSeconds": 5}, NOW)
    operations.kill(world.ctx, "cli", NOW)  # epoch 5, kill serial 1
    path.unlink()
    with pytest.raises(TrustTampered) as refused:
        operations.release_kill(world.ctx, UNKILL, NOW)
    assert "pair --reset" in refused.value.hint
    assert not path.exists()
    key_store = FileStore(world.config / "host-key.pem")
    operations.pair_host(
        world.ctx, TerminalPhrase(action="pair"), key_store, reset=True, code="c", now=NOW
    )
    doc = parse(path.read_bytes())
    assert doc.epoch > 5 and _seal(path).record.sha256 == digest(path.read_bytes())
    key = key_store.load()
    assert key is not None
    found = reader(path, key).read(NOW)
    assert found.tamper is None and found.effective.killed  # pair --reset never releases


def test_the_gate_latches_once_and_a_restored_file_does_not_un_deny(tmp_path: Path) -> None:
    from tabwarden.trust.gate import TrustGate
    from tests.fixtures import audit_entries, pair_record

    config = tmp_path / "config"
    key = pair_record(config)
    path = config / "trust.json"
    good = path.read_bytes()
    store.set_baseline(path, key, {"eval": True}, NOW)
    newest = path.read_bytes()
    hand_write(path, good, reseal=False)
    gate = TrustGate({"TABWARDEN_CONFIG_DIR": str(config)})
    for _ in range(3):
        assert gate.current().refused is not None
    note = gate.latch_note()
    assert note is not None and note.kind == "rolled_back"
    hand_write(path, newest, reseal=False)  # the right record back
    eff = TrustGate({"TABWARDEN_CONFIG_DIR": str(config)}).current()
    assert eff.refused is None and eff.killed  # still latched until a person says so
    tampered = [e for e in audit_entries(config) if e["event"] == "trust_tampered"]
    assert len(tampered) == 1 and tampered[0]["kind"] == "rolled_back"


def _pair(world: Any, key_store: FileStore, *, reset: bool = False) -> None:
    operations.pair_host(
        world.ctx, TerminalPhrase(action="pair"), key_store, reset=reset, code="c", now=NOW
    )


def _reader_of(path: Path, key_store: FileStore) -> TrustReader:
    def public() -> Any:
        key = key_store.load()
        return None if key is None else key.public

    return TrustReader(path, public)


@pytest.mark.promise("BP-06")
def test_a_reader_looking_while_pair_writes_the_first_record_latches_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`pair` seals "first record being written", stores the key, then seals and writes the
    first record; a host polling at every step in between is denied, but never sees "vanished"."""
    world = trust_world(tmp_path, paired=False)
    path = world.ctx.trust_path
    key_store = FileStore(world.config / "host-key.pem")
    seen: list[Reading] = []
    real_write, real_save, real_key_save = (
        PrivateDir.write_atomic,
        SealKeeper.save,
        FileStore.save,
    )

    def look() -> None:
        seen.append(_reader_of(path, key_store).read(NOW))

    def write(self: PrivateDir, name: str, data: bytes, mode: int = 0o600) -> None:
        if name == path.name:
            look()  # sealed {new, pending: no record}; no record yet
        real_write(self, name, data, mode)

    def save(self: SealKeeper, doc: Any, seal: Any) -> None:
        look()  # before the record's first seal; with the record written, before it settles
        real_save(self, doc, seal)

    def save_key(self: FileStore, key: Any, replace: bool = False) -> None:
        look()  # sealed "first record being written"; no key yet
        real_key_save(self, key, replace=replace)
        look()  # the key, that seal, no record

    monkeypatch.setattr(PrivateDir, "write_atomic", write)
    monkeypatch.setattr(SealKeeper, "save", save)
    monkeypatch.setattr(FileStore, "save", save_key)
    _pair(world, key_store)
    monkeypatch.undo()
    assert len(seen) >= 5
    assert all(r.tamper is None for r in seen), seen
    assert [r.effective.refused is not None for r in seen[:5]] == [False, True, True, True, False]
    assert seen[0].effective.paired_clients == () and not seen[0].effective.killed  # unpaired
    assert not (world.config / "kill-latch").exists()
    assert _reader_of(path, key_store).read(NOW).tamper is None


@pytest.mark.promise("BP-06")
def test_a_key_with_neither_record_nor_seal_is_vanished(tmp_path: Path) -> None:
    """A deleted record, the last step: `pair` never leaves a key alone, so a host key with the
    record *and* its seal deleted is tampering — denied and latched, never "not paired yet"."""
    world = trust_world(tmp_path, paired=False)
    path = world.ctx.trust_path
    key_store = FileStore(world.config / "host-key.pem")
    _pair(world, key_store)
    assert judge(None, None, None, paired=True) is not None
    path.unlink()
    (world.config / SEAL_FILE_NAME).unlink()
    found = _reader_of(path, key_store).read(NOW)
    assert found.tamper is not None and found.tamper.kind == "vanished"
    assert "host key is stored" in found.tamper.reason
    assert found.effective.refused is not None and found.effective.killed
    assert key_store.load() is not None and not path.exists()  # the reader changed nothing


def test_pair_killed_before_storing_the_key_leaves_nothing_to_reset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = trust_world(tmp_path, paired=False)
    key_store = FileStore(world.config / "host-key.pem")

    def crash(self: FileStore, key: Any, replace: bool = False) -> None:
        raise KeyboardInterrupt  # the person pressed ^C, or the process was killed

    monkeypatch.setattr(FileStore, "save", crash)
    with pytest.raises(KeyboardInterrupt):
        _pair(world, key_store)
    monkeypatch.undo()
    left = _reader_of(world.ctx.trust_path, key_store).read(NOW)
    assert left.tamper is None and left.effective.refused is None  # still "not paired yet"
    _pair(world, key_store)  # no --reset needed
    assert _reader_of(world.ctx.trust_path, key_store).read(NOW).effective.refused is None


@pytest.mark.promise("BP-06")
def test_pair_killed_after_storing_the_key_is_denied_not_latched_until_pair_reset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = trust_world(tmp_path, paired=False)
    key_store = FileStore(world.config / "host-key.pem")

    def crash(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(store, "initialise", crash)
    with pytest.raises(KeyboardInterrupt):
        _pair(world, key_store)
    monkeypatch.undo()
    left = _reader_of(world.ctx.trust_path, key_store).read(NOW)
    assert left.tamper is None and left.effective.refused is not None
    with pytest.raises(operations.AlreadyPaired):
        _pair(world, key_store)
    _pair(world, key_store, reset=True)
    after = _reader_of(world.ctx.trust_path, key_store).read(NOW)
    assert after.tamper is None and after.effective.refused is None


def test_pair_without_reset_refuses_a_seal_left_behind_before_minting(tmp_path: Path) -> None:
    world = trust_world(tmp_path)
    world.ctx.trust_path.unlink()  # record gone, its seal left
    key_store = FileStore(world.config / "host-key.pem")
    with pytest.raises(TrustTampered) as refused:
        operations.pair_host(
            world.ctx, TerminalPhrase(action="pair"), key_store, reset=False, code="c", now=NOW
        )
    assert "pair --reset" in refused.value.hint
    assert key_store.load() is None and not world.ctx.trust_path.exists()


def test_the_seal_mirrors_the_two_factor_latch_and_a_reset_clears_both(tmp_path: Path) -> None:
    """The seal says ``twoFactor`` exactly while the record it vouches for is latched; a seal
    written before the field existed reads as not latched, and a value other than true is
    refused."""
    world = trust_world(tmp_path)
    assert world.key is not None
    path = world.ctx.trust_path
    raw = (path.parent / SEAL_FILE_NAME).read_bytes()
    assert b"twoFactor" not in raw and _seal(path).two_factor is False  # as older seals read
    store.add_window_only_browser(path, world.key, "spare", NOW)
    assert _seal(path).two_factor is False
    enrol_direct(world.config, world.key, "chromium", SoftAuthenticator())
    assert _seal(path).two_factor is True
    store.revoke(path, "browser", "chromium", NOW)
    assert _seal(path).two_factor is True
    store.initialise(path, world.key, "file", NOW, replace_existing=True)
    assert _seal(path).two_factor is False
    bad = json.loads(raw)
    bad["twoFactor"] = False
    with pytest.raises(SealUnreadable):
        parse_seal(json.dumps(bad).encode("ascii"))
