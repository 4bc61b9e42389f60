"""The download sandbox: what a page or an agent names can never leave it, overwrite a file or
follow a symlink, and a finished download is copied in (never moved) with its bytes intact."""

from __future__ import annotations

import asyncio
import base64
import os
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tabwarden.mcp_server.bridge_client import BridgeClient
from tabwarden.mcp_server.downloads import (
    MAX_NAME_BYTES,
    DownloadSandbox,
    SandboxRefused,
    SandboxUnavailable,
    safe_name,
    sandbox_dir,
)
from tabwarden.mcp_server.server import build_server
from tests.fakes import tool_error
from tests.fixtures import paired_guard


def test_the_sandbox_is_resolved_in_one_place(tmp_path: Path) -> None:
    assert sandbox_dir({"TABWARDEN_CONFIG_DIR": str(tmp_path)}) == tmp_path / "downloads"
    explicit = {"TABWARDEN_CONFIG_DIR": str(tmp_path), "TABWARDEN_DOWNLOAD_DIR": "/srv/box"}
    assert sandbox_dir(explicit) == Path("/srv/box")


@pytest.mark.parametrize(
    ("suggested", "safe"),
    [
        ("report.pdf", "report.pdf"),
        ("../../x", "x"),
        ("_.._x", "_._x"),
        ("/etc/passwd", "passwd"),
        ("..\\..\\win.ini", "win.ini"),
        (".bashrc", "bashrc"),
        ("a\x00b\nc.txt", "a_b_c.txt"),
        ("..", "download"),
        ("", "download"),
        ("   ", "download"),
    ],
)
def test_safe_name_keeps_one_harmless_component(suggested: str, safe: str) -> None:
    assert safe_name(suggested) == safe


def test_safe_name_is_bounded_and_keeps_the_extension() -> None:
    name = safe_name("é" * 300 + ".pdf")
    assert name.endswith(".pdf") and len(name.encode()) <= MAX_NAME_BYTES


def test_a_page_named_path_stays_inside_and_nothing_is_overwritten(tmp_path: Path) -> None:
    box = DownloadSandbox(tmp_path / "downloads")
    first = box.save_bytes("../../x", b"one", fallback="f")
    second = box.save_bytes("../../x", b"two", fallback="f")
    third = box.save_bytes("x", b"three", fallback="f")
    root = (tmp_path / "downloads").resolve()
    assert [p.path.parent for p in (first, second, third)] == [root] * 3
    assert [p.path.name for p in (first, second, third)] == ["x", "x (1)", "x (2)"]
    assert first.path.read_bytes() == b"one" and second.path.read_bytes() == b"two"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["downloads"]  # nothing beside it
    assert os.stat(first.path).st_mode & 0o777 == 0o600
    assert os.stat(root).st_mode & 0o777 == 0o700


def test_a_symlink_planted_under_the_expected_name_is_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "downloads"
    root.mkdir(mode=0o700)
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    (root / "q3.pdf").symlink_to(victim)
    saved = DownloadSandbox(root).save_bytes("q3.pdf", b"%PDF-1.4", fallback="page.pdf")
    assert saved.path.name == "q3 (1).pdf"
    assert victim.read_bytes() == b"precious"


@pytest.mark.promise("H4-59")
def test_a_sandbox_that_is_a_symlink_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "downloads").symlink_to(elsewhere)
    with pytest.raises(SandboxUnavailable):
        DownloadSandbox(tmp_path / "downloads").save_bytes("a.pdf", b"x", fallback="p")
    assert list(elsewhere.iterdir()) == []


def test_copy_in_copies_a_finished_download_and_leaves_the_original(tmp_path: Path) -> None:
    chrome_dir = tmp_path / "Downloads"
    chrome_dir.mkdir()
    original = chrome_dir / "3f1c.bin"
    payload = bytes(range(256)) * 100
    original.write_bytes(payload)
    saved = DownloadSandbox(tmp_path / "box").copy_in(
        str(original), "../../report.bin", expected_size=len(payload)
    )
    assert saved.path == (tmp_path / "box").resolve() / "report.bin"
    assert saved.path.read_bytes() == payload and saved.size == len(payload)
    assert original.read_bytes() == payload  # observe only: Chrome's copy stays


def test_copy_in_refuses_a_symlink_a_directory_and_a_changed_size(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_bytes(b"key material")
    link = tmp_path / "link"
    link.symlink_to(secret)
    box = DownloadSandbox(tmp_path / "box")
    with pytest.raises(SandboxUnavailable):
        box.copy_in(str(link), "x", expected_size=None)
    with pytest.raises(SandboxRefused):
        box.copy_in(str(tmp_path), "x", expected_size=None)
    with pytest.raises(SandboxUnavailable):
        box.copy_in(str(secret), "x", expected_size=3)
    assert not (tmp_path / "box").exists() or list((tmp_path / "box").iterdir()) == []


def test_a_download_that_cannot_be_opened_says_why_and_not_where(tmp_path: Path) -> None:
    """The error names the reason (the error's name) and never the path a page chose."""
    box = DownloadSandbox(tmp_path / "box")
    gone = tmp_path / "secret-project-name.bin"
    with pytest.raises(SandboxUnavailable) as missing:
        box.copy_in(str(gone), "x", expected_size=None)
    assert str(missing.value) == "the finished download could not be opened (ENOENT)"
    link = tmp_path / "link"
    link.symlink_to(tmp_path)
    with pytest.raises(SandboxUnavailable) as followed:
        box.copy_in(str(link), "x", expected_size=None)
    assert str(followed.value) == "the finished download could not be opened (ELOOP)"


@pytest.mark.promise("H4-59")
def test_copy_in_refuses_a_hard_link_to_a_file_outside(tmp_path: Path) -> None:
    """A same-user program swaps Chrome's finished file for a hard link to a secret: nothing is
    copied, the sandbox stays empty, the secret stays as it was and is named in no error."""
    secret = tmp_path / "id_ed25519"
    secret.write_bytes(b"PRIVATE-KEY-BYTES")
    chrome_dir = tmp_path / "Downloads"
    chrome_dir.mkdir()
    planted = chrome_dir / "report.pdf"
    os.link(secret, planted)
    box = tmp_path / "box"
    with pytest.raises(SandboxRefused, match="hard link") as refused:
        DownloadSandbox(box).copy_in(str(planted), "report.pdf", expected_size=17)
    assert "PRIVATE" not in str(refused.value)
    assert not box.exists() or list(box.iterdir()) == []
    assert secret.read_bytes() == b"PRIVATE-KEY-BYTES"


class _Replies(BridgeClient):
    """A bridge whose browser answers with canned replies, by action."""

    def __init__(self, runtime: Path, box: Path, replies: dict[str, dict[str, Any]]) -> None:
        env = {"TABWARDEN_RUNTIME_DIR": str(runtime), "TABWARDEN_DOWNLOAD_DIR": str(box)}
        super().__init__(label="files", env=env)
        self._replies = replies

    async def call(
        self,
        action: str,
        args: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        command: str | None = None,
        read_only: bool = False,
    ) -> dict[str, Any]:
        return self._replies[action]


def _call(bridge: BridgeClient, tool: str, args: dict[str, Any]) -> Any:
    server = build_server(bridge, paired_guard())

    async def scenario() -> Any:
        async with Client(server, raise_exceptions=True) as client:
            return await client.call_tool(tool, args)

    return asyncio.run(scenario())


def test_the_server_writes_the_pdf_and_the_client_sees_only_its_path(
    runtime_dir: Path, tmp_path: Path
) -> None:
    pdf = b"%PDF-1.4\n" + b"x" * 5000
    reply = {"data": base64.b64encode(pdf).decode(), "name": "../../../q3.pdf"}
    result = _call(
        _Replies(runtime_dir, tmp_path / "box", {"page_pdf": reply}), "page_pdf", {"tabId": 1}
    )
    assert tool_error(result) is None
    written = Path(result.structured_content["path"])
    assert written == (tmp_path / "box").resolve() / "q3.pdf" and written.read_bytes() == pdf
    assert result.structured_content == {"path": str(written), "size": len(pdf)}
    assert reply["data"] not in str(result.content)  # the bytes never reach the model


def test_a_finished_download_is_copied_in_and_chromes_path_is_not_shown(
    runtime_dir: Path, tmp_path: Path
) -> None:
    chrome = tmp_path / "Downloads" / "guid-1"
    chrome.parent.mkdir()
    chrome.write_bytes(b"payload")
    reply = {
        "state": "complete",
        "filename": "../../x",
        "url": None,
        "receivedBytes": 7,
        "totalBytes": 7,
        "file": {"source": str(chrome), "size": 7},
    }
    bridge = _Replies(runtime_dir, tmp_path / "box", {"page_wait_download": reply})
    result = _call(bridge, "page_wait_download", {"tabId": 1})
    out = result.structured_content
    assert Path(out["path"]).parent == (tmp_path / "box").resolve()
    assert Path(out["path"]).read_bytes() == b"payload" and out["size"] == 7
    assert "file" not in out and str(chrome) not in str(result.content)
    assert chrome.read_bytes() == b"payload"
    # Not complete: nothing is copied, and the reply passes as it is.
    started = reply | {"state": "started", "file": None}
    bridge = _Replies(runtime_dir, tmp_path / "box2", {"page_wait_download": started})
    out = _call(bridge, "page_wait_download", {"tabId": 1}).structured_content
    assert out["state"] == "started" and "path" not in out
    assert not (tmp_path / "box2").exists()
