"""Hop 1: measuring the client that spawned ``tabwarden mcp`` (``client_identity``, the one
measurement the host makes too), and remembering spawners."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tabwarden import osapi
from tabwarden.bridge.client_identity import measure_process
from tabwarden.bridge.spawner import (
    SPAWNERS_MAX,
    Spawner,
    SpawnerListUnsafe,
    SpawnerUnmeasurable,
    recent_spawners,
    remember_spawner,
)
from tests.fakes import wait_until

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="Linux /proc and pidfd"
)

MEASURE_MY_CLIENT = textwrap.dedent(
    """
    import json, os
    from tabwarden.bridge.client_identity import measure_client_of, SpawnerUnmeasurable
    try:
        s = measure_client_of(os.getpid())
        print(json.dumps({
            "pid": s.pid, "exe": s.exe, "sha256": s.sha256, "create_time": s.create_time,
            "image": s.image, "image_sha256": s.image_sha256, "kind": s.kind,
        }))
    except SpawnerUnmeasurable as exc:
        print(json.dumps({"error": str(exc), "code": exc.code}))
    """
)


def _our_image_sha256() -> str:
    with open("/proc/self/exe", "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


@pytest.mark.promise("H1-01")
def test_child_measures_its_real_parent() -> None:
    """The test process is a Python-hosted client: the child pins our interpreter *and* what
    it runs, exactly as we measure ourselves."""
    out = subprocess.run(  # noqa: S603
        [sys.executable, "-I", "-c", MEASURE_MY_CLIENT], capture_output=True, check=True, timeout=60
    )
    seen = json.loads(out.stdout)
    assert seen["pid"] == os.getpid()
    assert seen["image"] == os.readlink("/proc/self/exe")
    assert seen["image_sha256"] == _our_image_sha256()
    assert seen["kind"] != "binary"
    assert seen["sha256"] != _our_image_sha256()  # never the interpreter alone
    assert seen["create_time"] == osapi.create_time(os.getpid())
    me = measure_process(os.getpid())
    assert (seen["sha256"], seen["exe"]) == (me.sha256, me.exe)


@pytest.mark.promise("H1-01")
def test_a_living_client_is_not_called_replaced_when_the_boot_time_moves(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The boot time /proc/stat gives can read a second apart between two calls (it is the wall
    clock less the uptime). The spawner is measured between two reads of its start: a start
    that moved with it refused a living client as "replaced (PID reused)"."""
    import psutil._pslinux

    boot = iter(range(1_700_000_000, 1_800_000_000))
    monkeypatch.setattr(psutil._pslinux, "boot_time", lambda: float(next(boot)))
    monkeypatch.setattr(psutil, "boot_time", lambda: float(next(boot)))
    first, again = measure_process(os.getpid()), measure_process(os.getpid())
    assert first == again and first.create_time == osapi.create_time(os.getpid())


@pytest.mark.promise("H1-01")
def test_a_plain_binary_is_pinned_by_its_image() -> None:
    sleeper = subprocess.Popen(["sleep", "60"])  # noqa: S607
    try:
        # execve sets the new image before the new command line: wait for both.
        wait_until(
            lambda: (
                os.path.basename(os.path.realpath(f"/proc/{sleeper.pid}/exe")) == "sleep"
                and Path(f"/proc/{sleeper.pid}/cmdline").read_bytes() == b"sleep\x0060\x00"
            )
        )
        found = measure_process(sleeper.pid)
        image = os.path.realpath(f"/proc/{sleeper.pid}/exe")
        with open(image, "rb") as fh:
            assert found.sha256 == hashlib.sha256(fh.read()).hexdigest()
        assert (found.kind, found.exe, found.broad) == ("binary", image, None)
    finally:
        sleeper.kill()
        sleeper.wait(timeout=30)


@pytest.mark.promise("H1-03")
def test_gone_parent_is_unmeasurable() -> None:
    proc = subprocess.Popen([sys.executable, "-I", "-c", "pass"])  # noqa: S603
    proc.wait(timeout=30)
    with pytest.raises(SpawnerUnmeasurable, match="gone") as info:
        measure_process(proc.pid)
    assert info.value.code == "client_not_paired"


@pytest.mark.promise("H1-03")
def test_zombie_parent_is_unmeasurable() -> None:
    proc = subprocess.Popen([sys.executable, "-I", "-c", "pass"])  # noqa: S603
    try:
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # exited, not reaped
        with pytest.raises(SpawnerUnmeasurable, match="exited"):
            measure_process(proc.pid)
    finally:
        proc.wait(timeout=30)


@pytest.mark.skipif(
    os.getuid() != 0 or shutil.which("setpriv") is None, reason="needs root + setpriv"
)
@pytest.mark.promise("H1-03")
def test_unreadable_parent_is_unmeasurable(tmp_path: Path) -> None:
    # A same-UID reader without CAP_SYS_PTRACE cannot read a non-dumpable process's image.
    target = subprocess.Popen(  # noqa: S603
        [
            sys.executable,
            "-I",
            "-c",
            "import ctypes, sys; ctypes.CDLL(None).prctl(4,0,0,0,0); print(flush=True); "
            "sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert target.stdout is not None
        target.stdout.readline()
        code = (
            "from tabwarden.bridge.client_identity import measure_process, SpawnerUnmeasurable\n"
            f"try: measure_process({target.pid})\n"
            "except SpawnerUnmeasurable as e: print(e)\n"
        )
        out = subprocess.run(  # noqa: S603
            [
                "setpriv",
                "--bounding-set",
                "-sys_ptrace",
                "--inh-caps",
                "-sys_ptrace",
                sys.executable,
                "-I",
                "-c",
                code,
            ],
            capture_output=True,
            timeout=60,
            check=True,
        )
        assert b"permission denied" in out.stdout, out
    finally:
        target.kill()
        target.communicate(timeout=30)


# ------------------------------------------------------------------------------ remembering


def _spawner(n: int) -> Spawner:
    return Spawner(
        pid=1000 + n, exe=f"/opt/client{n}/bin/client", sha256=f"{n:064x}", create_time=1.0
    )


def test_remember_and_recent_round_trip(tmp_path: Path) -> None:
    config = tmp_path / "config"
    remember_spawner(config, _spawner(1), now=100.0)
    remember_spawner(config, _spawner(2), now=200.0)
    remember_spawner(config, _spawner(1), now=300.0)  # seen again: updated, not duplicated
    seen = recent_spawners(config)
    assert [(s.path, s.count) for s in seen] == [
        ("/opt/client1/bin/client", 2),
        ("/opt/client2/bin/client", 1),
    ]
    assert (seen[0].first_seen, seen[0].last_seen) == (100, 300)
    path = config / "spawners.json"
    assert stat.S_IMODE(os.lstat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.lstat(config).st_mode) == 0o700
    document = json.loads(path.read_text())
    assert document["version"] == 1
    assert set(document["spawners"][0]) == {
        "path", "sha256", "firstSeen", "lastSeen", "count", "broad", "pins", "kind"
    }  # fmt: skip
    assert not [p for p in config.iterdir() if p.name.endswith(".tmp")]  # no leftovers


def test_what_an_identity_pins_is_remembered_for_the_ceremony(tmp_path: Path) -> None:
    hosted = Spawner(
        7,
        "/usr/bin/node /srv/a.js",
        "e" * 64,
        1.0,
        kind="repl",
        broad="node runs a REPL",
        pins=("the interpreter /usr/bin/node", "  running a program read from stdin or typed"),
    )
    remember_spawner(tmp_path, hosted, now=5.0)
    [seen] = recent_spawners(tmp_path)
    assert (seen.kind, seen.broad, seen.pins) == (hosted.kind, hosted.broad, hosted.pins)
    # Rows from before these fields existed were image hashes: they read as binaries.
    (tmp_path / "spawners.json").write_text(
        json.dumps({"version": 1, "spawners": [_row(1)]}), encoding="utf-8"
    )
    [old] = recent_spawners(tmp_path)
    assert (old.kind, old.broad, old.pins) == ("binary", None, ())
    # A damaged broad reason is never read as "not broad".
    (tmp_path / "spawners.json").write_text(
        json.dumps({"version": 1, "spawners": [{**_row(1), "broad": 3, "pins": "x"}]}),
        encoding="utf-8",
    )
    [damaged] = recent_spawners(tmp_path)
    assert damaged.broad and damaged.pins == ()


def test_remember_keeps_only_the_most_recent(tmp_path: Path) -> None:
    for n in range(SPAWNERS_MAX + 5):
        remember_spawner(tmp_path, _spawner(n), now=1000.0 + n)
    seen = recent_spawners(tmp_path)
    assert len(seen) == SPAWNERS_MAX
    assert seen[0].sha256 == f"{SPAWNERS_MAX + 4:064x}"
    assert seen[-1].sha256 == f"{5:064x}"  # the five oldest were dropped


def _private_file(path: Path, text: str, mode: int = 0o600) -> None:
    path.write_text(text)
    os.chmod(path, mode)


def test_a_damaged_list_is_ignored_then_started_afresh(tmp_path: Path) -> None:
    path = tmp_path / "spawners.json"
    _private_file(path, '{"version": 1, "spawners": [{"path": 3}]')  # truncated
    assert recent_spawners(tmp_path) == []
    remember_spawner(tmp_path, _spawner(1), now=5.0)
    assert [s.sha256 for s in recent_spawners(tmp_path)] == [f"{1:064x}"]


def _attack(kind: str, tmp_path: Path) -> Path:
    """Plant the attacker's spawners.json (or directory) and return the config dir to use."""
    config = tmp_path / "config"
    config.mkdir(mode=0o700)
    path = config / "spawners.json"
    listed = json.dumps({"version": 1, "spawners": [_row(7)]})
    if kind == "symlink":
        _private_file(tmp_path / "elsewhere.json", listed)
        path.symlink_to(tmp_path / "elsewhere.json")
    elif kind == "mode0640":
        _private_file(path, listed, 0o640)
    elif kind == "fifo":
        os.mkfifo(path, 0o600)
    elif kind == "owner":
        _private_file(path, listed)
        os.chown(path, 65534, 65534)
    elif kind in ("dir0755", "dir0750"):
        _private_file(path, listed)
        os.chmod(config, 0o755 if kind == "dir0755" else 0o750)
    elif kind == "dirlink":
        config.rmdir()
        real = tmp_path / "real"
        real.mkdir(mode=0o700)
        _private_file(real / "spawners.json", listed)
        config.symlink_to(real)
    else:
        raise AssertionError(kind)
    return config


def _state(tmp_path: Path) -> dict[str, tuple[int, bytes | None]]:
    out = {}
    for p in sorted(tmp_path.rglob("*")):
        st = os.lstat(p)
        body = p.read_bytes() if stat.S_ISREG(st.st_mode) else None
        out[str(p.relative_to(tmp_path))] = (st.st_mode, body)
    return out


@pytest.mark.parametrize(
    "kind",
    [
        "symlink",
        "mode0640",
        "fifo",
        "dir0755",
        "dir0750",
        "dirlink",
        pytest.param(
            "owner", marks=pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown")
        ),
    ],
)
@pytest.mark.promise("EV-01")
def test_an_unsafe_list_is_never_read_and_never_replaced(tmp_path: Path, kind: str) -> None:
    config = _attack(kind, tmp_path)
    before = _state(tmp_path)
    assert recent_spawners(config) == []  # nothing read: the planted row 7 never shows
    with pytest.raises(SpawnerListUnsafe) as info:
        remember_spawner(config, _spawner(1), now=5.0)
    assert info.value.exit_status == 3 and f"{1:064x}" not in str(info.value)
    assert _state(tmp_path) == before  # nothing written, not even a lock file


def _row(n: int) -> dict[str, object]:
    return {"path": "/x", "sha256": f"{n:064x}", "firstSeen": 1, "lastSeen": 1, "count": 1}


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    code = textwrap.dedent(
        """
        import sys
        from tabwarden.bridge.spawner import Spawner, remember_spawner
        base = int(sys.argv[1])
        for n in range(base, base + 5):
            remember_spawner(sys.argv[2], Spawner(n, f"/c/{n}", f"{n:064x}", 1.0), now=float(n))
        """
    )
    writers = [
        subprocess.Popen([sys.executable, "-I", "-c", code, str(base), str(tmp_path)])  # noqa: S603
        for base in (0, 5, 10)
    ]
    for w in writers:
        assert w.wait(timeout=60) == 0
    assert sorted(s.sha256 for s in recent_spawners(tmp_path)) == [f"{n:064x}" for n in range(15)]
