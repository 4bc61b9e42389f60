"""The upload sandbox refuses every way out of it, and reads nothing it has not proven inside."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tabwarden.mcp_server import uploads
from tabwarden.mcp_server.uploads import (
    MAX_UPLOAD_BYTES,
    UploadRefused,
    read_upload,
    resolve_upload,
)


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    box = tmp_path / "uploads"
    (box / "sub").mkdir(parents=True)
    (box / "ok.txt").write_text("fine")
    (box / "sub" / "deep.txt").write_text("fine")
    (tmp_path / "secret.txt").write_text("ssh key")
    return box


def test_files_inside_are_resolved(sandbox: Path) -> None:
    assert resolve_upload(sandbox, "ok.txt") == (sandbox / "ok.txt").resolve()
    assert resolve_upload(sandbox, "sub/deep.txt") == (sandbox / "sub" / "deep.txt").resolve()
    assert resolve_upload(sandbox, str(sandbox / "ok.txt")) == (sandbox / "ok.txt").resolve()


@pytest.mark.parametrize(
    "path", ["../secret.txt", "sub/../../secret.txt", "sub/../ok.txt", "", "a\x00b"]
)
def test_dotdot_and_malformed_are_refused(sandbox: Path, path: str) -> None:
    with pytest.raises(UploadRefused):
        resolve_upload(sandbox, path)


def test_absolute_path_outside_is_refused(sandbox: Path) -> None:
    with pytest.raises(UploadRefused, match="outside"):
        resolve_upload(sandbox, str(sandbox.parent / "secret.txt"))
    with pytest.raises(UploadRefused):
        resolve_upload(sandbox, "/etc/passwd")


def test_symlink_leaving_the_sandbox_is_refused(sandbox: Path) -> None:
    (sandbox / "link.txt").symlink_to(sandbox.parent / "secret.txt")
    (sandbox / "dirlink").symlink_to(sandbox.parent)
    for path in ("link.txt", "dirlink/secret.txt"):
        with pytest.raises(UploadRefused, match="outside"):
            resolve_upload(sandbox, path)


def test_symlink_staying_inside_is_fine(sandbox: Path) -> None:
    (sandbox / "alias.txt").symlink_to(sandbox / "ok.txt")
    assert resolve_upload(sandbox, "alias.txt") == (sandbox / "ok.txt").resolve()


def test_non_regular_and_oversize_are_refused(sandbox: Path) -> None:
    os.mkfifo(sandbox / "fifo")
    with pytest.raises(UploadRefused, match="regular"):
        resolve_upload(sandbox, "fifo")
    with pytest.raises(UploadRefused, match="regular"):
        resolve_upload(sandbox, "sub")
    (sandbox / "big.bin").write_bytes(b"x" * (MAX_UPLOAD_BYTES + 1))
    with pytest.raises(UploadRefused, match="limit"):
        resolve_upload(sandbox, "big.bin")


def test_missing_sandbox_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UploadRefused, match="does not exist"):
        resolve_upload(tmp_path / "nope", "x")


def test_read_upload_returns_the_real_path_and_the_bytes(sandbox: Path) -> None:
    real, data = read_upload("sub/deep.txt", {"TABWARDEN_UPLOAD_DIR": str(sandbox)})
    assert real == (sandbox / "sub" / "deep.txt").resolve() and data == b"fine"


def test_read_upload_refuses_what_resolve_refuses_without_reading(sandbox: Path) -> None:
    with pytest.raises(UploadRefused, match="outside"):
        read_upload(str(sandbox.parent / "secret.txt"), {"TABWARDEN_UPLOAD_DIR": str(sandbox)})


@pytest.mark.parametrize("swap", ["symlink", "fifo"])
def test_a_file_swapped_after_the_check_is_refused_not_followed_or_waited_on(
    sandbox: Path, monkeypatch: pytest.MonkeyPatch, swap: str
) -> None:
    """The race: the path was proven inside, then replaced by a symlink out of the sandbox or by
    a FIFO (whose open would block). The read opens without following and without blocking,
    and re-checks on the descriptor."""
    swapped = sandbox / "ok.txt"
    swapped.unlink()
    if swap == "symlink":
        swapped.symlink_to(sandbox.parent / "secret.txt")
    else:
        os.mkfifo(swapped)
    monkeypatch.setattr(uploads, "resolve_upload", lambda _box, _requested: swapped)
    with pytest.raises(UploadRefused) as refused:
        read_upload("ok.txt", {"TABWARDEN_UPLOAD_DIR": str(sandbox)})
    assert "ssh key" not in str(refused.value)
