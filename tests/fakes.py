"""Test doubles for the other end of a real host process driven through its real stdin/stdout pipes.

``FakeBrowser`` plays Chrome's part of hop 3 (it launches ``tabwarden host`` with the origin
argument and speaks native messaging on the pipes); everything on the host side is the real
program. Tests that need real Chromium live in tests/browser/.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tabwarden.manifests import ALLOWED_ORIGIN
from tabwarden.protocol import nativemsg
from tabwarden.protocol.framing import FrameDecoder, dumps_object, encode_body

if TYPE_CHECKING:
    from tabwarden.mcp_server.bridge_client import BridgeClient

REPO = Path(__file__).resolve().parent.parent


def host_env(runtime: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("XDG_RUNTIME_DIR", None)
    env["TABWARDEN_RUNTIME_DIR"] = str(runtime)
    env["TABWARDEN_CONFIG_DIR"] = str(runtime.parent / "config")  # never the person's real record
    env.pop("TABWARDEN_BROWSER", None)
    env.update(extra)
    return env


#: Runs the real host with executable attestation switched off *in-process* (an argument, not a
#: flag): for tests of the layers behind attestation (handshake, relay, framing) that connect
#: from the test process itself. Tests of attestation use ``attested=True``: the real command.
UNATTESTED_HOST = (
    "import argparse, sys\n"
    "from tabwarden.host import main as m\n"
    "sys.exit(m.run(m.build_parser(argparse.ArgumentParser()).parse_args(sys.argv[1:]), "
    "attest=None))\n"
)


#: /proc/net/unix's flag of a socket that listens (the kernel's __SO_ACCEPTCON).
_ACCEPTING = 0x10000


def _listening(path: Path) -> bool:
    """Whether a socket bound to ``path`` listens (read from /proc/net/unix: no connection is
    made, so the host sees nothing)."""
    for line in Path("/proc/net/unix").read_text().splitlines()[1:]:
        # Num RefCount Protocol Flags Type St Inode Path
        parts = line.split()
        if len(parts) >= 8 and parts[7] == str(path) and int(parts[3], 16) & _ACCEPTING:
            return True
    return False


class FakeBrowser:
    """Chrome's side of native messaging, for a real host subprocess."""

    def __init__(
        self,
        runtime: Path,
        *,
        label: str = "test",
        origin: str = ALLOWED_ORIGIN,
        attested: bool = False,
        env: dict[str, str] | None = None,
    ) -> None:
        entry = ["-m", "tabwarden", "host"] if attested else ["-c", UNATTESTED_HOST]
        self.proc = subprocess.Popen(
            [sys.executable, "-I", *entry, "--browser", label, origin],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=host_env(runtime, **(env or {})),
        )
        self.label = label
        self.runtime = runtime
        self._decoder: FrameDecoder = FrameDecoder(nativemsg.HEADER, nativemsg.MAX_HOST_TO_BROWSER)
        self.stderr_lines: list[str] = []
        #: The host's ``trust_changed`` notices, in arrival order (``receive`` sets them aside).
        self.notices: list[dict[str, Any]] = []
        self._stderr_thread = threading.Thread(target=self._drain_stderr, daemon=True)
        self._stderr_thread.start()

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr_lines.append(line.decode("utf-8", "replace"))

    @property
    def stderr(self) -> str:
        return "".join(self.stderr_lines)

    def wait_stderr(self, text: str, timeout: float = 60.0) -> str:
        """Block until ``text`` appears in the host's stderr (read by a thread), or fail."""
        deadline = _deadline(timeout)
        while text not in self.stderr:
            _pause_until(deadline)
        return self.stderr

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(encode_body(dumps_object(message), nativemsg.HEADER, 1 << 30))
        self.proc.stdin.flush()

    def receive(self, timeout: float = 60.0) -> dict[str, Any]:
        """The next message from the host. ``trust_changed`` notices (host/notices.py) arrive
        whenever the record changes on disk, between any two replies: they are set aside in
        ``notices``, as the real extension handles them apart. A hang guard with a generous
        deadline: a host that never answers fails the test instead of holding its worker."""
        deadline = _deadline(timeout)
        while True:
            frame = self._next_frame(deadline)
            if frame.get("type") == "trust_changed":
                self.notices.append(frame)
                continue
            return frame

    def wait_notices(self, count: int = 1, timeout: float = 60.0) -> list[dict[str, Any]]:
        """Read until at least ``count`` ``trust_changed`` notices arrived (a hang guard with a
        generous deadline, never a timing assertion); any other message is a failure."""
        deadline = _deadline(timeout)
        while len(self.notices) < count:
            frame = self._next_frame(deadline)
            assert frame.get("type") == "trust_changed", frame
            self.notices.append(frame)
        return self.notices

    def _next_frame(self, deadline: float) -> dict[str, Any]:
        """One whole frame from the host's stdout; ``TimeoutError`` once ``deadline`` passed."""
        import select

        assert isinstance(self.proc.stdout, io.BufferedReader)  # a PIPE with default buffering
        while True:
            frame = self._decoder.next_frame()
            if frame is not None:
                return frame
            if not select.select([self.proc.stdout], [], [], 0.5)[0]:
                _pause_until(deadline)  # raises TimeoutError once the deadline passed
                continue
            chunk = self.proc.stdout.read1(65536)  # read1 leaves nothing buffered behind select
            if not chunk:
                raise EOFError("host closed stdout")
            self._decoder.receive_data(chunk)

    def hello(self) -> dict[str, Any]:
        self.send({"type": "hello", "protocol": 1, "extensionVersion": "test"})
        return self.receive()

    def wait_socket(self, timeout: float = 60.0) -> Path:
        """Block until the host listens on its socket. The file appears at ``bind``, before
        ``listen``: a connect in between is refused, so its existence alone is not enough."""
        sock = self.runtime / f"{self.label}.sock"
        deadline = _deadline(timeout)
        while not _listening(sock):
            if self.proc.poll() is not None:
                raise AssertionError(f"host exited early ({self.proc.returncode}): {self.stderr}")
            _pause_until(deadline)
        return sock

    def close(self) -> int:
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=15)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


def _deadline(timeout: float) -> float:
    import time

    return time.monotonic() + timeout


def _pause_until(deadline: float) -> None:
    import time

    if time.monotonic() > deadline:
        raise TimeoutError("condition not met before the deadline")
    time.sleep(0.02)


def wait_until(condition: Any, timeout: float = 30.0) -> None:
    """Poll ``condition()`` until it is true; a hang guard with a generous deadline, never a
    timing assertion. ``TimeoutError`` when it never becomes true."""
    deadline = _deadline(timeout)
    while not condition():
        _pause_until(deadline)


async def wait_until_extension_connected(status: Any, timeout: float = 30.0) -> None:
    """Poll an async ``status()`` (BridgeClient.status) until the extension is connected.

    Event-free by nature (the host pushes the state; the client reads it locally), so it polls
    with a generous deadline; a hang guard, not a timing assertion.
    """
    import asyncio
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (await status()).extension_connected:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"the extension did not connect within {timeout} s")


async def connected_client(runtime: Path, role: str = "mcp") -> BridgeClient:
    """A ``BridgeClient`` of ``role`` on the host under ``runtime``, once the host says the
    extension is connected; the caller closes it."""
    from tabwarden.mcp_server.bridge_client import BridgeClient

    client = BridgeClient(label="test", env={"TABWARDEN_RUNTIME_DIR": str(runtime)}, role=role)
    await wait_until_extension_connected(client.status)
    return client


def tool_error(result: Any) -> dict[str, Any] | None:
    """The machine-readable error of an MCP tool result (``_meta``), or None when it succeeded."""
    if not result.is_error:
        return None
    meta = result.meta or {}
    error = meta.get("dev.tabwarden/error")
    assert isinstance(error, dict), f"error result without a coded error: {result}"
    text = result.content[0].text
    assert text.startswith(f"{error['code']}: "), text  # the same code, readable by a model
    return error


#: A bridge client (the MCP server's stand-in) for a test to run in its own process, so the host
#: measures that process as its client: it connects claiming no identity, waits until the
#: extension is connected, asks for the tab list once, and prints the outcome as one JSON line
#: (``{"ok": ...}`` or ``{"code": ..., "message": ...}``).
BRIDGE_CLIENT = textwrap.dedent(
    """
    import asyncio, json, os, time
    from tabwarden.mcp_server.bridge_client import BridgeClient, BridgeError

    async def main() -> None:
        client = BridgeClient(
            label="test", env={"TABWARDEN_RUNTIME_DIR": os.environ["TABWARDEN_RUNTIME_DIR"]}
        )
        try:
            deadline = time.monotonic() + 30
            while not (await client.status()).extension_connected:
                if time.monotonic() > deadline:
                    raise SystemExit("the extension never connected")
                await asyncio.sleep(0.02)
            print(json.dumps({"ok": await client.call("tab_list")}))
        except BridgeError as exc:
            print(json.dumps({"code": exc.code, "message": str(exc)}))
        finally:
            await client.close()

    asyncio.run(main())
    """
)
