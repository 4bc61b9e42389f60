"""Hop 1: measuring the process that spawned ``tabwarden mcp``, and remembering spawners."""

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

import psutil
import pytest

from tabwarden.mcp_server.spawner import (
    SPAWNERS_MAX,
    Spawner,
    SpawnerListUnsafe,
    SpawnerUnmeasurable,
    matches,
    measure_parent,
    recent_spawners,
    remember_spawner,
)

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="Linux /proc and pidfd"
)

MEASURE_MY_PARENT = textwrap.dedent(
    """
    import json
    from tabwarden.mcp_server.spawner import measure_parent, SpawnerUnmeasurable
    try:
        s = measure_parent()
        print(json.dumps(
            {"pid": s.pid, "exe": s.exe, "sha256": s.sha256, "create_time": s.create_time}
        ))
    except SpawnerUnmeasurable as exc:
        print(json.dumps({"error": str(exc), "code": exc.code}))
    """
)


def _our_image_sha256() -> str:
    with open("/proc/self/exe", "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def test_child_measures_its_real_parent() -> None:
    out = subprocess.run(  # noqa: S603
        [sys.executable, "-I", "-c", MEASURE_MY_PARENT], capture_output=True, check=True, timeout=60
    )
    seen = json.loads(out.stdout)
    assert seen["pid"] == os.getpid()
    assert seen["exe"] == os.readlink("/proc/self/exe")
    assert seen["sha256"] == _our_image_sha256()
    assert seen["create_time"] == psutil.Process().create_time()
    spawner = Spawner(seen["pid"], seen["exe"], seen["sha256"], seen["create_time"])
    assert matches(
        spawner, [("/some/other/label", _our_image_sha256().upper())]
    )  # the hash decides
    assert not matches(spawner, [(seen["exe"], "0" * 64), ("x", "not hex")])
    assert not matches(spawner, [])


def test_measure_parent_by_pid_matches_the_image_it_runs() -> None:
    spawner = measure_parent(os.getpid())
    assert spawner.sha256 == _our_image_sha256()
    assert spawner.create_time == psutil.Process().create_time()


def test_gone_parent_is_unmeasurable() -> None:
    proc = subprocess.Popen([sys.executable, "-I", "-c", "pass"])  # noqa: S603
    proc.wait(timeout=30)
    with pytest.raises(SpawnerUnmeasurable, match="gone") as info:
        measure_parent(proc.pid)
    assert info.value.code == "client_not_paired"


def test_zombie_parent_is_unmeasurable() -> None:
    proc = subprocess.Popen([sys.executable, "-I", "-c", "pass"])  # noqa: S603
    try:
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # exited, not reaped
        with pytest.raises(SpawnerUnmeasurable, match="exited"):
            measure_parent(proc.pid)
    finally:
        proc.wait(timeout=30)


@pytest.mark.skipif(
    os.getuid() != 0 or shutil.which("setpriv") is None, reason="needs root + setpriv"
)
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
            "from tabwarden.mcp_server.spawner import measure_parent, SpawnerUnmeasurable\n"
            f"try: measure_parent({target.pid})\n"
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
    assert set(document["spawners"][0]) == {"path", "sha256", "firstSeen", "lastSeen", "count"}
    assert not [p for p in config.iterdir() if p.name.endswith(".tmp")]  # no leftovers


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
        from tabwarden.mcp_server.spawner import Spawner, remember_spawner
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
