"""``client_identity.ImageHashCache``: a client image's hash remembered across starts, in a
private file keyed by (device, inode, size, mtime_ns, ctime_ns). A real program is measured as
a real process; the attacker rewrites it in place and puts its old mtime back, and is hashed
again; a planted cache file the private-fs rules refuse is neither believed nor replaced."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tabwarden.bridge import client_identity
from tabwarden.bridge.client_identity import (
    HASH_CACHE_FILE,
    ImageHashCache,
    image_key,
    measure_process,
)
from tests.fakes import wait_until


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def program(tmp_path: Path) -> Path:
    """A copy of a real executable the test may rewrite."""
    exe = tmp_path / "bin" / "client"
    exe.parent.mkdir()
    source = shutil.which("sleep")
    assert source is not None
    shutil.copy2(os.path.realpath(source), exe)
    return exe


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "config"
    path.mkdir(mode=0o700)
    return path


def running(exe: Path) -> Iterator[int]:
    proc = subprocess.Popen([str(exe), "600"])  # noqa: S603 (the test's own copy of sleep)
    try:
        # Popen returns at exec's point of no return, before the new command line is in place.
        wait_until(
            lambda: Path(f"/proc/{proc.pid}/cmdline").read_bytes() == f"{exe}\x00600\x00".encode()
        )
        yield proc.pid
    finally:
        proc.kill()
        proc.wait(timeout=60)


def measure(exe: Path, cache: ImageHashCache) -> str:
    for pid in running(exe):
        return measure_process(pid, cache).image_sha256
    raise AssertionError("unreachable")


@pytest.mark.promise("H1-07")
def test_a_cached_image_is_not_hashed_again(
    program: Path, config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = ImageHashCache(config)
    assert measure(program, cache) == sha256_of(program)
    cached = config / HASH_CACHE_FILE
    assert cached.stat().st_mode & 0o777 == 0o600

    def no_hashing(fd: int) -> tuple[str, os.stat_result]:
        raise AssertionError("hashed again")

    monkeypatch.setattr(client_identity, "image_sha256", no_hashing)
    assert measure(program, ImageHashCache(config)) == sha256_of(program)  # a new start


@pytest.mark.promise("H1-07")
def test_an_image_rewritten_with_its_old_mtime_restored_is_hashed_again(
    program: Path, config: Path
) -> None:
    cache = ImageHashCache(config)
    genuine = measure(program, cache)
    before = program.stat()

    # The attack: change the program in place, same size, and put atime/mtime back.
    data = bytearray(program.read_bytes())
    at = data.find(b"Usage")
    assert at > 0
    data[at] ^= 0x20
    with open(program, "r+b") as image:
        image.write(data)
    os.utime(program, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = program.stat()
    assert image_key(after)[:4] == image_key(before)[:4]  # device, inode, size, mtime all kept
    assert after.st_ctime_ns != before.st_ctime_ns  # ...but not the ctime

    measured = measure(program, cache)
    assert measured == sha256_of(program) != genuine  # hashed again: the change is seen


@pytest.mark.promise("H1-07")
def test_a_planted_unsafe_cache_is_neither_believed_nor_replaced(
    program: Path, config: Path
) -> None:
    key = image_key(program.stat())
    forged = json.dumps({"version": 1, "images": [[*key, "f" * 64]]}).encode()
    planted = config / HASH_CACHE_FILE
    planted.write_bytes(forged)
    planted.chmod(0o644)  # readable by others: the private-fs rules refuse it

    assert measure(program, ImageHashCache(config)) == sha256_of(program)  # not "f" * 64
    assert planted.read_bytes() == forged and planted.stat().st_mode & 0o777 == 0o644


@pytest.mark.promise("H1-07")
def test_a_damaged_cache_is_as_if_empty(program: Path, config: Path) -> None:
    cached = config / HASH_CACHE_FILE
    fd = os.open(cached, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, b'{"version": 1, "images": [[1, 2, "x"]], ')
    os.close(fd)
    assert measure(program, ImageHashCache(config)) == sha256_of(program)
    assert json.loads(cached.read_bytes())["images"][0][5] == sha256_of(program)  # rewritten
