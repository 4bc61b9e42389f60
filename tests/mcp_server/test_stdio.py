"""``mcp_server/stdio.py``: ``tabwarden mcp``'s stdin and stdout on the event loop. Lines arrive
whole however the pipe splits them; a real server answers over pipes, and over a file on stdin
(not pollable: the SDK's own transport), and while it serves, fd 1 is not the wire."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tabwarden.mcp_server.stdio import LoopLines, LoopWriter, pollable
from tests.fakes import host_env

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}


def test_lines_arrive_whole_however_the_pipe_splits_them() -> None:
    sent = [b'{"a": 1}\n', b'{"b": "\xc3\xa9' + b"x" * 200_000 + b'"}\n', b"\xff bad\n", b"tail"]
    got = asyncio.run(asyncio.wait_for(_read_lines(b"".join(sent)), 60))
    assert got == [line.decode("utf-8", "replace") for line in sent]


async def _read_lines(wire: bytes) -> list[str]:
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)

    async def feed() -> None:
        loop = asyncio.get_running_loop()
        for i in range(0, len(wire), 7_777):  # splits inside lines and inside a character
            await loop.run_in_executor(None, os.write, write_fd, wire[i : i + 7_777])
        os.close(write_fd)

    feeder = asyncio.ensure_future(feed())
    got = [line async for line in LoopLines(read_fd)]
    await feeder
    os.close(read_fd)
    return got


def test_a_writer_finishes_a_write_larger_than_the_pipe() -> None:
    text = "é" * 3_000_000 + "\n"

    async def scenario() -> bytes:
        read_fd, write_fd = os.pipe()
        os.set_blocking(write_fd, False)
        loop = asyncio.get_running_loop()
        reader = loop.run_in_executor(None, _read_all, read_fd)
        await LoopWriter(write_fd).write(text)
        os.close(write_fd)
        return await reader

    assert asyncio.run(asyncio.wait_for(scenario(), 60)) == text.encode()


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


def test_only_pipes_and_sockets_are_pollable(tmp_path: Path) -> None:
    read_fd, write_fd = os.pipe()
    with open(tmp_path / "f", "w") as regular:
        assert pollable(read_fd) and pollable(write_fd) and not pollable(regular.fileno())
    os.close(read_fd)
    os.close(write_fd)


def _serve_once(runtime_dir: Path, stdin: int | None, data: bytes | None) -> dict[str, object]:
    done = subprocess.run(  # noqa: S603 (this interpreter, our own entry point)
        [sys.executable, "-I", "-m", "tabwarden", "mcp"],
        stdin=stdin,
        input=data,
        capture_output=True,
        env=host_env(runtime_dir),
        timeout=120,
    )
    [line] = done.stdout.splitlines()  # one answer and nothing else: no stray output
    answer: dict[str, object] = json.loads(line)
    return answer


@pytest.mark.promise("H1-11")
def test_a_real_server_answers_over_pipes_and_with_a_file_on_stdin(
    runtime_dir: Path, tmp_path: Path
) -> None:
    request = json.dumps(INITIALIZE).encode() + b"\n"
    over_pipe = _serve_once(runtime_dir, None, request)
    assert over_pipe["id"] == 1 and "result" in over_pipe
    (tmp_path / "requests.jsonl").write_bytes(request)
    with open(tmp_path / "requests.jsonl", "rb") as file:
        from_file = _serve_once(runtime_dir, file.fileno(), None)
    assert from_file["id"] == 1 and "result" in from_file
