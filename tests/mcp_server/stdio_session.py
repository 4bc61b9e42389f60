"""One MCP session with a real ``tabwarden mcp`` over its stdio, as a client runs it: a fresh
runtime and config directory under the test's ``tmp_path`` (never the person's), ``initialize``
and ``notifications/initialized``, then each request in turn, each waiting for its answer, then
stdin closed so the server exits (it must exit 0). The tests that measure or probe the server
where a client meets it share this one setup."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bench.jsonrpc import INITIALIZED, TOOLS_LIST, initialize, line
from tests.fakes import host_env

#: What a client says first: the MCP handshake (bench/jsonrpc.py, which the bench's clients say).
HANDSHAKE: tuple[Mapping[str, Any], ...] = (initialize("pytest"), INITIALIZED)


def dirs(tmp_path: Path) -> tuple[Path, Path]:
    """The session's runtime and config directories (made, private; kept across sessions of one
    test, so a record written into config beforehand is the one the server reads)."""
    runtime, config = tmp_path / "run", tmp_path / "config"
    runtime.mkdir(mode=0o700, exist_ok=True)
    config.mkdir(mode=0o700, exist_ok=True)
    return runtime, config


def session(
    tmp_path: Path,
    command: list[str],
    requests: list[Mapping[str, Any]],
    *,
    stderr: Path | None = None,
) -> dict[object, bytes]:
    """Run ``command`` (after ``sys.executable``) for one session: the handshake, then
    ``requests``. The raw answer line of each request, by id; the server's stderr goes to
    ``stderr`` (else nowhere)."""
    runtime, _ = dirs(tmp_path)
    with open(stderr, "wb") if stderr is not None else open("/dev/null", "wb") as err:
        proc = subprocess.Popen(  # noqa: S603 (this interpreter, our own command)
            [sys.executable, *command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            env=host_env(runtime),
        )
    assert proc.stdin is not None and proc.stdout is not None
    answers: dict[object, bytes] = {}
    try:
        for message in [*HANDSHAKE, *requests]:
            proc.stdin.write(line(message))
            proc.stdin.flush()
            while "id" in message and message["id"] not in answers:
                answer = proc.stdout.readline()
                assert answer, "the server closed stdout early"
                answers[json.loads(answer).get("id")] = answer.rstrip(b"\n")
        proc.stdin.close()  # the client goes away: the server exits
        assert proc.wait(timeout=120) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return answers


def tools_list_line(tmp_path: Path, *args: str, stderr: Path | None = None) -> bytes:
    """The ``tools/list`` answer exactly as ``tabwarden mcp *args`` writes it on stdout."""
    command = ["-m", "tabwarden", "mcp", *args]
    return session(tmp_path, command, [TOOLS_LIST], stderr=stderr)[2]


def listed_names(line: bytes) -> set[str]:
    """The names of the tools a ``tools/list`` answer lists."""
    return {tool["name"] for tool in json.loads(line)["result"]["tools"]}
