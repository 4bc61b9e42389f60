"""The download sandbox writes only new, private files directly inside itself: no path, no
hidden name, no overwrite, no symlink followed, nothing over the cap."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tabwarden.mcp_server.downloads import (
    MAX_DOWNLOAD_BYTES,
    DownloadRefused,
    sandbox_dir,
    save_download,
    target,
)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"TABWARDEN_DOWNLOAD_DIR": str(tmp_path / "downloads")}


def test_the_sandbox_is_the_config_dirs_downloads_unless_set(tmp_path: Path) -> None:
    assert sandbox_dir({"TABWARDEN_CONFIG_DIR": str(tmp_path)}) == tmp_path / "downloads"
    assert sandbox_dir({"TABWARDEN_DOWNLOAD_DIR": "/x/y"}) == Path("/x/y")


def test_a_new_file_is_written_private_in_a_private_directory(env: dict[str, str]) -> None:
    path = save_download("report 1.json", b'{"a": 1}', env)
    assert path == Path(env["TABWARDEN_DOWNLOAD_DIR"]) / "report 1.json"
    assert path.read_bytes() == b'{"a": 1}'
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert os.stat(path.parent).st_mode & 0o777 == 0o700


@pytest.mark.parametrize("name", ["../x", "a/b", "/etc/passwd", ".bashrc", "", "a..b", "x\x00"])
def test_names_that_are_not_plain_file_names_are_refused(env: dict[str, str], name: str) -> None:
    with pytest.raises(DownloadRefused):
        target(name, env)
    with pytest.raises(DownloadRefused):
        save_download(name, b"x", env)
    box = Path(env["TABWARDEN_DOWNLOAD_DIR"])
    assert not box.exists() or list(box.iterdir()) == []


def test_an_existing_file_or_symlink_is_never_replaced(env: dict[str, str], tmp_path: Path) -> None:
    save_download("a.txt", b"first", env)
    with pytest.raises(DownloadRefused):
        target("a.txt", env)
    with pytest.raises(DownloadRefused):
        save_download("a.txt", b"second", env)
    assert (Path(env["TABWARDEN_DOWNLOAD_DIR"]) / "a.txt").read_bytes() == b"first"
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (Path(env["TABWARDEN_DOWNLOAD_DIR"]) / "link").symlink_to(victim)
    with pytest.raises(DownloadRefused):
        save_download("link", b"overwritten?", env)
    assert victim.read_text() == "keep"


def test_a_symlinked_sandbox_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "downloads").symlink_to(elsewhere)
    with pytest.raises(DownloadRefused):
        save_download("a.txt", b"x", {"TABWARDEN_DOWNLOAD_DIR": str(tmp_path / "downloads")})
    assert list(elsewhere.iterdir()) == []


def test_nothing_over_the_cap_is_written(env: dict[str, str]) -> None:
    with pytest.raises(DownloadRefused):
        save_download("big.bin", b"\0" * (MAX_DOWNLOAD_BYTES + 1), env)
    assert not (Path(env["TABWARDEN_DOWNLOAD_DIR"]) / "big.bin").exists()
