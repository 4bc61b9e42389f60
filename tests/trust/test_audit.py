"""The append-only audit log: round trip, privacy, concurrency, rotation, damage, redaction."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tabwarden.trust.audit import REDACTED, AuditLog, UnsafeAuditLog, redact_fields


class Clock:
    def __init__(self, start: float = 1_700_000_000.75) -> None:
        self.t = start

    def __call__(self) -> float:
        self.t += 1
        return self.t


def test_append_read_round_trip(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "cfg" / "audit.jsonl", now=Clock())
    assert log.read() == []
    log.append("pair", decision="allow", path="terminal", label="default")
    log.append("call", decision="deny", tool="tab_eval", origin="https://example.com")
    records = log.read()
    assert records == [
        {
            "ts": 1_700_000_001,
            "event": "pair",
            "decision": "allow",
            "path": "terminal",
            "label": "default",
        },
        {
            "ts": 1_700_000_002,
            "event": "call",
            "decision": "deny",
            "path": None,
            "tool": "tab_eval",
            "origin": "https://example.com",
        },
    ]
    assert log.read(limit=1) == records[-1:]
    assert log.corrupt_lines == 0
    raw = log.path.read_bytes()
    assert raw.count(b"\n") == 2 and raw.endswith(b"\n")


def test_file_is_created_0600(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        log = AuditLog(tmp_path / "audit.jsonl")
        log.append("x", decision="allow")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(log.path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(log.lock_path).st_mode) == 0o600


def test_bad_arguments_are_rejected(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl")
    with pytest.raises(ValueError):
        log.append("x", decision="allow", path="telepathy")
    with pytest.raises(ValueError):
        log.append("x", decision="allow", ts=5)
    with pytest.raises(ValueError):
        AuditLog(tmp_path / "a", keep=0)


WRITER = r"""
import sys
from tabwarden.trust.audit import AuditLog
path, who, n, max_bytes = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
log = AuditLog(path, max_bytes=max_bytes, keep=50)
for i in range(n):
    log.append("call", decision="allow", who=who, i=i, pad="x" * 40)
"""


@pytest.mark.parametrize("max_bytes", [5 * 1024 * 1024, 4096], ids=["no-rotation", "rotating"])
@pytest.mark.promise("TR-15")
def test_concurrent_appends_from_processes_lose_nothing(tmp_path: Path, max_bytes: int) -> None:
    path = tmp_path / "audit.jsonl"
    writers, per_writer = 6, 60
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), f"w{k}", str(per_writer), str(max_bytes)]
        )
        for k in range(writers)
    ]
    assert [p.wait(timeout=60) for p in procs] == [0] * writers
    log = AuditLog(path, max_bytes=max_bytes, keep=50)
    records = log.read()
    assert log.corrupt_lines == 0
    assert len(records) == writers * per_writer
    for k in range(writers):  # each writer's lines all present, in its own order
        assert [r["i"] for r in records if r["who"] == f"w{k}"] == list(range(per_writer))
    if max_bytes == 4096:
        assert log.rotated(1).exists()
        assert all(p.stat().st_size <= 4096 for p in log.files() if p.exists())


def test_rotation_keeps_keep_files_and_read_spans_them(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl", max_bytes=300, keep=3, now=Clock())
    for i in range(60):
        log.append("call", decision="allow", i=i)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [
        "audit.jsonl",
        "audit.jsonl.1",
        "audit.jsonl.2",
        "audit.jsonl.3",
        "audit.jsonl.lock",
    ]
    for p in log.files():
        assert p.stat().st_size <= 300
        assert stat.S_IMODE(p.stat().st_mode) == 0o600
    numbers = [r["i"] for r in log.read()]
    # newest last, contiguous, spanning all four files, oldest ones dropped
    assert numbers == list(range(numbers[0], 60))
    assert numbers[0] > 0
    per_file = len(log.path.read_bytes().splitlines())
    assert len(numbers) > per_file * 3
    assert [r["i"] for r in log.read(limit=5)] == [55, 56, 57, 58, 59]


def test_corrupt_lines_are_skipped_and_counted(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl", max_bytes=10_000, keep=2)
    log.append("a", decision="allow")
    with open(log.path, "ab") as fh:
        fh.write(b'{"ts": 1, "event": "broken\n[1, 2]\n\xff\xfe not utf8\n{"torn": ')
    log.append("b", decision="deny")  # a torn tail must not swallow the next good line
    assert [r["event"] for r in log.read()] == ["a", "b"]
    assert log.corrupt_lines == 4
    scan = log.scan()
    assert scan.corrupt == 4 and len(scan.records) == 2


@pytest.mark.promise("TR-15")
def test_secrets_are_redacted_before_writing(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl")
    secret = "s3cr3t-VALUE-7f2a9c"
    log.append(
        "pair",
        decision="allow",
        path="terminal",
        run_secret=secret,
        Token=secret,
        PASSWORD=secret,
        pairing_code=secret,
        cookie=secret,
        nonce=secret,
        mac=secret,
        apiKey=secret,
        nested={"inner": {"session_token": secret}, "ok": 1},
        items=[{"cookieJar": secret}],
        label="default",
    )
    data = log.path.read_bytes()
    assert secret.encode() not in data
    (record,) = log.read()
    for key in (
        "run_secret",
        "Token",
        "PASSWORD",
        "pairing_code",
        "cookie",
        "nonce",
        "mac",
        "apiKey",
    ):
        assert record[key] == REDACTED
    assert record["nested"] == {"inner": {"session_token": REDACTED}, "ok": 1}
    assert record["items"] == [{"cookieJar": REDACTED}]
    assert record["label"] == "default"
    assert redact_fields({"keys": [1]}) == {"keys": REDACTED}


@pytest.mark.promise("TR-15")
def test_symlinked_log_is_refused_and_target_untouched(tmp_path: Path) -> None:
    target = tmp_path / "victim.txt"
    target.write_bytes(b"precious\n")
    os.chmod(target, 0o600)
    link = tmp_path / "audit.jsonl"
    link.symlink_to(target)
    log = AuditLog(link)
    with pytest.raises(UnsafeAuditLog, match="symlink") as info:
        log.append("x", decision="allow")
    assert info.value.code == "unsafe_audit_log" and info.value.hint
    with pytest.raises(UnsafeAuditLog):
        log.read()
    assert target.read_bytes() == b"precious\n"
    assert link.is_symlink()


def test_group_or_world_accessible_log_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_bytes(b"")
    os.chmod(path, 0o640)
    with pytest.raises(UnsafeAuditLog, match="mode 0640"):
        AuditLog(path).append("x", decision="allow")
    assert path.read_bytes() == b""


def test_hard_linked_log_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "elsewhere"
    other.write_bytes(b"")
    os.chmod(other, 0o600)
    os.link(other, tmp_path / "audit.jsonl")
    with pytest.raises(UnsafeAuditLog, match="hard links"):
        AuditLog(tmp_path / "audit.jsonl").append("x", decision="allow")


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to chown to another uid")
def test_log_owned_by_someone_else_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_bytes(b"")
    os.chmod(path, 0o600)
    os.chown(path, 65534, 65534)
    with pytest.raises(UnsafeAuditLog, match="owned by uid"):
        AuditLog(path).append("x", decision="allow")


def test_lines_are_single_json_objects(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl")
    log.append("x", decision="allow", note="line one\nline two\u2028", where=tmp_path)
    (line,) = log.path.read_bytes().splitlines()
    assert json.loads(line)["note"] == "line one\nline two\u2028"
    assert json.loads(line)["where"] == str(tmp_path)


# --- the private-directory rule (tabwarden.private_fs), through the audit log ----------------


def _listing(d: Path) -> list[str]:
    return sorted(os.listdir(d))


def test_symlinked_log_directory_is_refused_and_nothing_written_there(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "cfg").symlink_to(real)
    log = AuditLog(tmp_path / "cfg" / "audit.jsonl")
    with pytest.raises(UnsafeAuditLog, match="symlink"):
        log.append("x", decision="allow")
    with pytest.raises(UnsafeAuditLog, match="symlink"):
        log.read()
    assert _listing(real) == []  # not even the lock file


@pytest.mark.parametrize("mode", [0o750, 0o755])
def test_log_directory_not_0700_is_refused_for_writing_and_reading(
    tmp_path: Path, mode: int
) -> None:
    cfg = tmp_path / "cfg"
    log = AuditLog(cfg / "audit.jsonl")
    log.append("before", decision="allow")
    before = {name: (cfg / name).read_bytes() for name in _listing(cfg)}
    os.chmod(cfg, mode)
    with pytest.raises(UnsafeAuditLog, match=f"mode {mode:04o}"):
        log.append("x", decision="allow")
    with pytest.raises(UnsafeAuditLog, match=f"mode {mode:04o}"):
        log.read()
    assert stat.S_IMODE(os.stat(cfg).st_mode) == mode  # refused, never repaired
    os.chmod(cfg, 0o700)
    assert {name: (cfg / name).read_bytes() for name in _listing(cfg)} == before


def test_group_readable_log_is_not_read(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl")
    log.append("private", decision="allow", note="do not show")
    os.chmod(log.path, 0o640)
    with pytest.raises(UnsafeAuditLog, match="mode 0640") as info:
        log.read()
    assert "do not show" not in str(info.value)


def test_log_replaced_by_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl")
    os.mkfifo(log.path, 0o600)
    with pytest.raises(UnsafeAuditLog, match="not a regular file"):
        log.append("x", decision="allow")
    with pytest.raises(UnsafeAuditLog, match="not a regular file"):
        log.read()
    assert stat.S_ISFIFO(os.lstat(log.path).st_mode)


def test_rotation_refuses_a_planted_rotated_symlink_and_moves_nothing(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious\n")
    cfg = tmp_path / "cfg"
    log = AuditLog(cfg / "audit.jsonl", max_bytes=200, keep=2)
    log.append("one", decision="allow", note="x" * 100)
    log.rotated(1).symlink_to(victim)
    live = log.path.read_bytes()
    with pytest.raises(UnsafeAuditLog, match="symlink"):
        log.append("two", decision="allow", note="y" * 100)
    assert log.path.read_bytes() == live and log.rotated(1).is_symlink()
    assert not os.path.lexists(log.rotated(2)) and victim.read_bytes() == b"precious\n"


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to chown to another uid")
def test_log_directory_owned_by_someone_else_is_refused(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg"
    cfg.mkdir(mode=0o700)
    os.chown(cfg, 65534, 65534)
    with pytest.raises(UnsafeAuditLog, match="owned by uid 65534"):
        AuditLog(cfg / "audit.jsonl").append("x", decision="allow")
    assert _listing(cfg) == []


def test_an_oversized_log_file_is_skipped_and_counted_not_read(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl", max_bytes=100, keep=1)
    fd = os.open(log.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, b'{"event":"big"}\n' * (1024 * 1024 // 16 + 100))
    os.close(fd)
    assert log.read() == [] and log.corrupt_lines == 1


KILLED_WRITER = """
import os, signal, sys
from tabwarden.trust.audit import AuditLog
log = AuditLog(sys.argv[1], sync="group")
for i in range(int(sys.argv[2])):
    log.append("tool_call", decision="allowed", i=i)
os.kill(os.getpid(), signal.SIGKILL)  # the crash: right after the last append returned
"""


@pytest.mark.promise("H1-06")
def test_group_sync_loses_nothing_when_the_writer_dies_right_after_append(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    proc = subprocess.run(  # noqa: S603 (this interpreter and a fixed script)
        [sys.executable, "-c", KILLED_WRITER, str(path), "50"], timeout=60, check=False
    )
    assert proc.returncode == -9  # it really died, before any flush at exit
    log = AuditLog(path)
    assert [r["i"] for r in log.read()] == list(range(50))
    assert log.corrupt_lines == 0


@pytest.mark.promise("H1-06")
def test_group_sync_fsyncs_every_line_off_the_callers_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    synced: list[tuple[str, int]] = []
    real_fsync = os.fsync

    def recording(fd: int) -> None:
        synced.append((threading.current_thread().name, os.fstat(fd).st_ino))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", recording)
    log = AuditLog(tmp_path / "audit.jsonl", sync="group")
    for i in range(30):
        log.append("tool_call", decision="allowed", i=i)
    assert log.flush(timeout=30)
    inode = log.path.stat().st_ino
    assert synced and all(name == "audit-fsync" for name, _ in synced)  # never the caller's
    assert synced[-1][1] == inode  # the last round covered the live file
    assert len(synced) <= 30  # grouped: at most one per line, one per round
    fds = set(os.listdir("/proc/self/fd"))
    log.append("tool_call", decision="allowed", i=30)
    assert log.flush(timeout=30)
    assert set(os.listdir("/proc/self/fd")) == fds  # each descriptor closed once synced

    # The default still syncs before append returns, on the caller's thread.
    synced.clear()
    AuditLog(tmp_path / "each.jsonl").append("pair", decision="allow", path="terminal")
    assert [name for name, _ in synced] == [threading.current_thread().name]
