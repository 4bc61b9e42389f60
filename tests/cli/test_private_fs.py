"""tabwarden.private_fs: each rule against the attacker's attempt, refused with nothing read or
written (the directory listing, the victim's bytes and the planted entry all unchanged)."""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from tabwarden.private_fs import (
    EntryExists,
    EntryTooLarge,
    PrivateDir,
    PrivateFsError,
    PrivateFsFailure,
    UnsafeEntry,
    open_private_dir,
)

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown")
VICTIM = b"the victim's bytes\n"
SECRET = b"SECRET-CONTENTS-0123456789"


def _private(tmp_path: Path, name: str = "priv") -> Path:
    d = tmp_path / name
    d.mkdir(mode=0o700)
    os.chmod(d, 0o700)
    return d


def _file(path: Path, data: bytes = SECRET, mode: int = 0o600) -> Path:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    os.write(fd, data)
    os.close(fd)
    os.chmod(path, mode)
    return path


def _snapshot(d: Path) -> dict[str, tuple[int, bytes | None]]:
    """Every entry's type bits and (for regular files) bytes: what an attack could change."""
    out: dict[str, tuple[int, bytes | None]] = {}
    for name in sorted(os.listdir(d)):
        st = os.lstat(d / name)
        data = (d / name).read_bytes() if stat.S_ISREG(st.st_mode) else None
        out[name] = (stat.S_IFMT(st.st_mode), data)
    return out


def _opened(d: Path) -> PrivateDir:
    found = open_private_dir(d, create=False)
    assert found is not None
    return found


def _no_secret(exc: BaseException) -> None:
    assert SECRET.decode() not in str(exc) and SECRET.decode() not in repr(exc)


# --- the directory rule ----------------------------------------------------------------------


def test_a_good_directory_opens_and_a_missing_one_is_none(tmp_path: Path) -> None:
    d = _private(tmp_path)
    with _opened(d) as pd:
        assert pd.path == d
    assert open_private_dir(tmp_path / "missing", create=False) is None
    assert not (tmp_path / "missing").exists()


def test_create_makes_the_directory_and_missing_parents_0700(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        pd = open_private_dir(tmp_path / "a" / "b", create=True)
    finally:
        os.umask(old)
    assert pd is not None
    pd.close()
    for d in (tmp_path / "a", tmp_path / "a" / "b"):
        assert stat.S_IMODE(os.stat(d).st_mode) == 0o700


@pytest.mark.parametrize("create", [False, True])
def test_a_symlinked_directory_is_refused_and_its_target_untouched(
    tmp_path: Path, create: bool
) -> None:
    real = _private(tmp_path, "real")
    _file(real / "f")
    link = tmp_path / "link"
    link.symlink_to(real)
    before = _snapshot(real)
    with pytest.raises(UnsafeEntry) as info:
        open_private_dir(link, create=create)
    assert info.value.kind == "symlink"
    assert link.is_symlink() and _snapshot(real) == before


@pytest.mark.parametrize("mode", [0o750, 0o755, 0o701, 0o500, 0o770])
@pytest.mark.parametrize("create", [False, True])
def test_a_directory_that_is_not_exactly_0700_is_refused_and_not_repaired(
    tmp_path: Path, mode: int, create: bool
) -> None:
    d = _private(tmp_path)
    _file(d / "f")
    os.chmod(d, mode)
    try:
        with pytest.raises(UnsafeEntry) as info:
            open_private_dir(d, create=create)
        assert info.value.kind == "mode"
        assert stat.S_IMODE(os.stat(d).st_mode) == mode  # refused, never "fixed"
    finally:
        os.chmod(d, 0o700)
    assert _snapshot(d) == {"f": (stat.S_IFREG, SECRET)}


def test_a_file_where_the_directory_should_be_is_refused(tmp_path: Path) -> None:
    _file(tmp_path / "notdir")
    with pytest.raises(UnsafeEntry) as info:
        open_private_dir(tmp_path / "notdir", create=True)
    assert info.value.kind == "not_directory"
    assert (tmp_path / "notdir").read_bytes() == SECRET


@needs_root
def test_a_directory_owned_by_someone_else_is_refused(tmp_path: Path) -> None:
    d = _private(tmp_path)
    _file(d / "f")
    os.chown(d, 65534, 65534)
    with pytest.raises(UnsafeEntry) as info:
        open_private_dir(d, create=True)
    assert info.value.kind == "owner" and "65534" in str(info.value)
    assert _snapshot(d) == {"f": (stat.S_IFREG, SECRET)}


# --- the file rule: reading ------------------------------------------------------------------


def test_read_returns_the_bytes_of_a_private_file_and_none_when_missing(tmp_path: Path) -> None:
    d = _private(tmp_path)
    _file(d / "f")
    with _opened(d) as pd:
        found = pd.read("f", 1024)
        assert found is not None and found[0] == SECRET
        assert pd.read("missing", 1024) is None


def _plant(kind: str, d: Path, tmp_path: Path) -> None:
    """Put the attacker's entry at ``d / "f"``."""
    target = d / "f"
    if kind == "symlink":
        _file(tmp_path / "victim", VICTIM)
        target.symlink_to(tmp_path / "victim")
    elif kind == "dangling":
        target.symlink_to(tmp_path / "nowhere")
    elif kind == "mode0640":
        _file(target, mode=0o640)
    elif kind == "mode0604":
        _file(target, mode=0o604)
    elif kind == "fifo":
        os.mkfifo(target, 0o600)
    elif kind == "hardlink":
        _file(tmp_path / "victim", VICTIM)
        os.link(tmp_path / "victim", target)
    elif kind == "directory":
        target.mkdir(mode=0o700)
    elif kind == "owner":
        _file(target)
        os.chown(target, 65534, 65534)
    else:
        raise AssertionError(kind)


ATTACKS = [
    pytest.param("symlink", "symlink"),
    pytest.param("dangling", "symlink"),
    pytest.param("mode0640", "mode"),
    pytest.param("mode0604", "mode"),
    pytest.param("fifo", "not_regular"),
    pytest.param("hardlink", "links"),
    pytest.param("directory", "not_regular"),
    pytest.param("owner", "owner", marks=needs_root),
]


def _within_deadline(action: Callable[[], object]) -> BaseException | None:
    """Run ``action`` in a thread; fail (not hang) if it blocks, e.g. on a planted FIFO."""
    caught: list[BaseException] = []

    def run() -> None:
        try:
            action()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            caught.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=10)
    assert not worker.is_alive(), "the operation blocked"
    return caught[0] if caught else None


@pytest.mark.parametrize(("attack", "kind"), ATTACKS)
def test_read_refuses_each_attack_and_returns_nothing(
    tmp_path: Path, attack: str, kind: str
) -> None:
    d = _private(tmp_path)
    _plant(attack, d, tmp_path)
    before = _snapshot(d)
    with _opened(d) as pd:
        exc = _within_deadline(lambda: pd.read("f", 1 << 20))
    assert isinstance(exc, UnsafeEntry) and exc.kind == kind
    _no_secret(exc)
    assert VICTIM.decode() not in str(exc)
    assert _snapshot(d) == before


@pytest.mark.parametrize(("attack", "kind"), ATTACKS)
@pytest.mark.parametrize("operation", ["write_atomic", "create_new", "append", "lock"])
def test_writes_refuse_each_attack_and_change_nothing(
    tmp_path: Path, attack: str, kind: str, operation: str
) -> None:
    d = _private(tmp_path)
    _plant(attack, d, tmp_path)
    before = _snapshot(d)
    victim_before = (tmp_path / "victim").read_bytes() if (tmp_path / "victim").exists() else None

    def act(pd: PrivateDir) -> None:
        if operation == "write_atomic":
            pd.write_atomic("f", b"attacker-chosen")
        elif operation == "create_new":
            pd.create_new("f", b"attacker-chosen")
        elif operation == "append":
            os.close(pd.open_file("f", os.O_WRONLY | os.O_APPEND, create=True))
        else:
            with pd.locked("f"):
                pass

    with _opened(d) as pd:
        exc = _within_deadline(lambda: act(pd))
    assert isinstance(exc, UnsafeEntry) and exc.kind == kind, exc
    assert _snapshot(d) == before  # nothing replaced, nothing created (no temp left either)
    if victim_before is not None:
        assert (tmp_path / "victim").read_bytes() == victim_before
    if attack == "dangling":
        assert not (tmp_path / "nowhere").exists()


def test_a_file_over_the_limit_is_refused_before_it_is_returned(tmp_path: Path) -> None:
    d = _private(tmp_path)
    _file(d / "f", b"x" * 2048)
    with _opened(d) as pd:
        with pytest.raises(EntryTooLarge):
            pd.read("f", 2047)
        found = pd.read("f", 2048)
    assert found is not None and len(found[0]) == 2048


# --- writing ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", [0o600, 0o700, 0o400])
def test_write_atomic_creates_exactly_the_owner_only_mode_whatever_the_umask(
    tmp_path: Path, mode: int
) -> None:
    d = _private(tmp_path)
    old = os.umask(0)
    try:
        with _opened(d) as pd:
            pd.write_atomic("f", b"one", mode)
            os.chmod(d / "f", 0o600)
            pd.write_atomic("f", b"two", mode)
    finally:
        os.umask(old)
    assert (d / "f").read_bytes() == b"two"
    assert stat.S_IMODE(os.stat(d / "f").st_mode) == mode
    assert os.listdir(d) == ["f"]  # no temp left behind


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o606, 0o4700])
def test_a_mode_that_is_not_owner_only_is_never_written(tmp_path: Path, mode: int) -> None:
    d = _private(tmp_path)
    with _opened(d) as pd:
        with pytest.raises(ValueError):
            pd.write_atomic("f", b"data", mode)
        with pytest.raises(ValueError):
            pd.create_new("f", b"data", mode)
    assert os.listdir(d) == []


def test_create_new_never_replaces_an_existing_file(tmp_path: Path) -> None:
    d = _private(tmp_path)
    _file(d / "f")
    with _opened(d) as pd:
        with pytest.raises(EntryExists):
            pd.create_new("f", b"second")
        pd.create_new("g", b"fresh")
    assert _snapshot(d) == {"f": (stat.S_IFREG, SECRET), "g": (stat.S_IFREG, b"fresh")}
    assert stat.S_IMODE(os.stat(d / "g").st_mode) == 0o600


def test_unlink_removes_a_symlink_itself_never_its_target(tmp_path: Path) -> None:
    d = _private(tmp_path)
    _file(tmp_path / "victim", VICTIM)
    (d / "f").symlink_to(tmp_path / "victim")
    with _opened(d) as pd:
        assert pd.unlink("f") is True
        assert pd.unlink("f") is False
    assert (tmp_path / "victim").read_bytes() == VICTIM


def test_a_failure_of_the_os_is_typed_not_a_bare_oserror(tmp_path: Path) -> None:
    d = _private(tmp_path)
    (d / "sub").mkdir()
    with _opened(d) as pd:
        with pytest.raises(PrivateFsFailure) as info:
            pd.unlink("sub")  # EISDIR: a refusal of the OS, not of a rule
    assert isinstance(info.value, PrivateFsError) and not isinstance(info.value, OSError)


def test_a_closed_directory_cannot_be_used(tmp_path: Path) -> None:
    pd = _opened(_private(tmp_path))
    pd.close()
    pd.close()  # idempotent
    with pytest.raises(ValueError):
        pd.read("f", 10)
