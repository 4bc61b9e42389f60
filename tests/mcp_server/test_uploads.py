"""The upload sandbox refuses every way out of it, and reads nothing it has not proven inside."""

from __future__ import annotations

import asyncio
import base64
import json
import os
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tabwarden.mcp_server.bridge_client import BridgeClient
from tabwarden.mcp_server.server import build_server
from tabwarden.mcp_server.uploads import (
    MAX_UPLOAD_BYTES,
    UploadRefused,
    check_upload,
    resolve_upload,
)
from tests.fakes import FakeBrowser, tool_error, wait_until_extension_connected
from tests.fixtures import nothing_relayed, paired_guard


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
        with pytest.raises(UploadRefused, match="symlink") as refused:
            check_upload(path, {"TABWARDEN_UPLOAD_DIR": str(sandbox)})
        assert "ssh key" not in str(refused.value)


@pytest.mark.promise("H4-17")
def test_a_symlink_staying_inside_is_refused_too(sandbox: Path) -> None:
    """No symlink is followed, not even one that points inside today: the walk never follows
    one, so what it checks is what it reads."""
    (sandbox / "alias.txt").symlink_to(sandbox / "ok.txt")
    (sandbox / "subalias").symlink_to(sandbox / "sub")
    for path in ("alias.txt", "subalias/deep.txt"):
        with pytest.raises(UploadRefused, match="symlink"):
            resolve_upload(sandbox, path)


@pytest.mark.promise("H4-17")
def test_a_sandbox_root_that_is_a_symlink_is_refused(tmp_path: Path) -> None:
    """The attacker points the sandbox at a directory of secrets: nothing in it is read."""
    secrets_dir = tmp_path / "home"
    secrets_dir.mkdir()
    (secrets_dir / "id_ed25519").write_bytes(b"PRIVATE KEY BYTES")
    box = tmp_path / "uploads"
    box.symlink_to(secrets_dir)
    for path in ("id_ed25519", str(box / "id_ed25519")):
        with pytest.raises(UploadRefused, match="is a symlink") as refused:
            check_upload(path, {"TABWARDEN_UPLOAD_DIR": str(box)})
        assert "PRIVATE KEY" not in str(refused.value)


@pytest.mark.promise("H4-17")
def test_a_hard_link_to_a_file_outside_is_refused(sandbox: Path) -> None:
    """A hard link has no inside: its other name is the secret outside the sandbox."""
    os.link(sandbox.parent / "secret.txt", sandbox / "report.txt")
    with pytest.raises(UploadRefused, match="hard link") as refused:
        check_upload("report.txt", {"TABWARDEN_UPLOAD_DIR": str(sandbox)})
    assert "ssh key" not in str(refused.value)
    assert (sandbox.parent / "secret.txt").read_text() == "ssh key"  # left as it was


def test_a_sandbox_that_is_a_file_or_missing_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(UploadRefused, match="not a directory"):
        resolve_upload(tmp_path / "file", "x")


def test_non_regular_and_oversize_are_refused(sandbox: Path) -> None:
    os.mkfifo(sandbox / "fifo")
    with pytest.raises(UploadRefused, match="regular"):
        resolve_upload(sandbox, "fifo")
    with pytest.raises(UploadRefused, match="regular"):
        resolve_upload(sandbox, "sub")
    with (sandbox / "big.bin").open("wb") as fh:  # sparse: nothing is written
        fh.truncate(MAX_UPLOAD_BYTES + 1)
    with pytest.raises(UploadRefused, match="limit"):
        resolve_upload(sandbox, "big.bin")


def test_missing_sandbox_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UploadRefused, match="does not exist"):
        resolve_upload(tmp_path / "nope", "x")


def test_check_upload_returns_the_real_path_and_the_size(sandbox: Path) -> None:
    real, size = check_upload("sub/deep.txt", {"TABWARDEN_UPLOAD_DIR": str(sandbox)})
    assert real == (sandbox / "sub" / "deep.txt").resolve() and size == 4


def test_a_sparse_file_over_100_mb_passes_and_a_line_break_is_refused(sandbox: Path) -> None:
    """The limit is 1 GiB (Chrome reads the file; nothing crosses the bridge): a 150 MB file
    passes without being read; a name with a line break would split the person's list."""
    with (sandbox / "big.bin").open("wb") as fh:
        fh.truncate(150 * 1024 * 1024)
    env = {"TABWARDEN_UPLOAD_DIR": str(sandbox)}
    assert check_upload("big.bin", env)[1] == 150 * 1024 * 1024
    (sandbox / "two\nlines.txt").write_text("x")
    with pytest.raises(UploadRefused, match="line break"):
        check_upload("two\nlines.txt", env)


def test_check_upload_refuses_what_resolve_refuses(sandbox: Path) -> None:
    with pytest.raises(UploadRefused, match="outside"):
        check_upload(str(sandbox.parent / "secret.txt"), {"TABWARDEN_UPLOAD_DIR": str(sandbox)})


def test_a_fifo_is_refused_without_waiting_on_it(sandbox: Path) -> None:
    """A FIFO planted under a file's name would block an ordinary open: the walk opens without
    blocking and judges the descriptor."""
    (sandbox / "ok.txt").unlink()
    os.mkfifo(sandbox / "ok.txt")
    with pytest.raises(UploadRefused, match="regular"):
        check_upload("ok.txt", {"TABWARDEN_UPLOAD_DIR": str(sandbox)})


@pytest.mark.parametrize("plant", ["hard link", "symlinked root"])
@pytest.mark.promise("H4-17")
def test_page_upload_of_a_planted_file_relays_nothing_and_shows_no_byte(
    fake_browser: FakeBrowser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plant: str
) -> None:
    """The attacker's attempt through the real server: a hard link in the sandbox to a secret
    outside, or the sandbox itself a symlink to the secret's directory. The agent gets
    ``policy_denied``; the secret's bytes appear nowhere in the result; the browser is asked for
    nothing."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "id_ed25519").write_bytes(b"PRIVATE-KEY-BYTES")
    box = tmp_path / "uploads"
    if plant == "hard link":
        box.mkdir()
        os.link(home / "id_ed25519", box / "id_ed25519")
    else:
        box.symlink_to(home)
    monkeypatch.setenv("TABWARDEN_UPLOAD_DIR", str(box))
    fake_browser.wait_socket()
    fake_browser.hello()
    bridge = BridgeClient(label="test", env={"TABWARDEN_RUNTIME_DIR": str(fake_browser.runtime)})
    server = build_server(bridge, paired_guard())

    async def scenario() -> Any:
        async with Client(server, raise_exceptions=True) as client:
            await wait_until_extension_connected(bridge.status)
            return await client.call_tool(
                "page_upload", {"tabId": 4, "path": "id_ed25519", "selector": "input"}
            )

    result = asyncio.run(scenario())
    error = tool_error(result)
    assert error is not None and error["code"] == "policy_denied", result
    shown = json.dumps([c.model_dump() for c in result.content]) + json.dumps(
        result.structured_content
    )
    assert (
        "PRIVATE-KEY" not in shown and base64.b64encode(b"PRIVATE-KEY").decode()[:12] not in shown
    )
    nothing_relayed(fake_browser)
