"""The speaker binding in ``FrameStream`` (docs/adr/0001, "speaker binding"): every chunk read off
a bridge socket must come from the process pinned at accept/connect, which must still be alive
and executing the image it was pinned with. Real sockets and real second processes; the judge of
one chunk's ancillary data is also exercised directly for what a real process cannot produce here
(pid 0, missing credentials)."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tabwarden.bridge.admission import check_peer
from tabwarden.bridge.framestream import ConnectionClosed, FrameStream, SpeakerChanged
from tabwarden.bridge.peer import UCRED, Speaker
from tabwarden.protocol import frames

DEADLINE = 30.0


def _frame(message: dict[str, object]) -> bytes:
    return frames.encode_frame(message)


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    """A connected pair; the pinned end is ``a``, whose peer (``b``) is this very process."""
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        yield a, b
    finally:
        a.close()
        b.close()


def _write_from_child(sock: socket.socket, data: bytes) -> int:
    """Another real process writes ``data`` on ``sock`` (inherited), then exits; its pid."""
    child = subprocess.run(  # noqa: S603
        [
            sys.executable,
            "-c",
            "import os, sys; os.write(int(sys.argv[1]), bytes.fromhex(sys.argv[2])); "
            "print(os.getpid())",
            str(sock.fileno()),
            data.hex(),
        ],
        pass_fds=[sock.fileno()],
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        check=True,
    )
    return int(child.stdout)


def test_frames_from_the_pinned_process_are_read_and_answered(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    a, b = pair

    async def main() -> None:
        stream = FrameStream(a, check_peer(a, None))
        assert stream.speaker_pid == os.getpid()
        b.sendall(_frame({"n": 1}) + _frame({"n": 2}))
        assert await stream.receive() == {"n": 1}
        assert await stream.receive() == {"n": 2}
        await stream.send({"n": 3})
        b.settimeout(DEADLINE)
        decoder = frames.decoder()
        while (got := decoder.next_frame()) is None:
            decoder.receive_data(b.recv(65536))
        assert got == {"n": 3}
        stream.close()

    asyncio.run(main())


def test_a_second_process_writing_on_the_socket_is_refused_and_stays_refused(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    a, b = pair

    async def main() -> None:
        stream = FrameStream(a, check_peer(a, None))
        b.sendall(_frame({"n": 1}))
        assert await stream.receive() == {"n": 1}
        intruder = _write_from_child(b, _frame({"type": "request", "id": 1, "action": "tab_list"}))
        with pytest.raises(SpeakerChanged) as refused:
            await stream.receive()
        assert refused.value.reason == (
            f"a frame came from pid {intruder}, not the attested pid {os.getpid()} "
            "(socket handed to another process)"
        )
        assert isinstance(refused.value, ConnectionClosed)  # every caller already closes on it
        b.sendall(_frame({"n": 2}))  # the pinned process again: the connection is finished
        with pytest.raises(SpeakerChanged):
            await stream.receive()
        stream.close()

    asyncio.run(main())


def test_a_frame_spliced_from_two_writers_is_refused(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    """The pinned process writes a frame's first half, another process the rest: the kernel
    returns the halves in separate reads, and the second is refused before it is decoded."""
    a, b = pair
    whole = _frame({"type": "request", "id": 7, "action": "tab_list", "args": {}})

    async def main() -> None:
        stream = FrameStream(a, check_peer(a, None))
        b.sendall(whole[:9])
        intruder = _write_from_child(b, whole[9:])
        with pytest.raises(SpeakerChanged, match=f"from pid {intruder}, not the attested"):
            await asyncio.wait_for(stream.receive(), DEADLINE)
        stream.close()

    asyncio.run(main())


def test_file_descriptors_sent_by_the_pinned_process_are_refused_and_never_installed(
    pair: tuple[socket.socket, socket.socket], tmp_path: Path
) -> None:
    a, b = pair
    target = tmp_path / "passed"
    target.write_text("x")

    async def main() -> None:
        stream = FrameStream(a, check_peer(a, None))
        before = set(os.listdir("/proc/self/fd"))
        fd = os.open(target, os.O_RDONLY)
        try:
            b.sendmsg(
                [_frame({"n": 1})],
                [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fd.to_bytes(4, sys.byteorder))],
            )
        finally:
            os.close(fd)
        with pytest.raises(SpeakerChanged, match="ancillary data beyond its credentials"):
            await stream.receive()
        assert set(os.listdir("/proc/self/fd")) == before  # nothing of theirs was installed
        stream.close()

    asyncio.run(main())


CONNECT_THEN = textwrap.dedent(
    """
    import os, socket, sys
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sys.argv[1])
    os.set_inheritable(s.fileno(), True)
    print(s.fileno(), flush=True)
    sys.stdin.readline()  # the test has pinned us
    if sys.argv[2] == "exit":
        s.sendall(bytes.fromhex(sys.argv[3]))
        os._exit(0)
    # Same pid, another image, the socket kept: it writes a well-formed frame.
    script = 'printf "\\\\000\\\\000\\\\000\\\\002{}" >&$0; read x'
    os.execv("/bin/sh", ["sh", "-c", script, str(s.fileno())])
    """
)


def _pinned_child(tmp_path: Path, mode: str) -> tuple[subprocess.Popen[str], socket.socket]:
    path = str(tmp_path / "l.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)
    listener.settimeout(DEADLINE)
    child = subprocess.Popen(  # noqa: S603
        [sys.executable, "-c", CONNECT_THEN, path, mode, _frame({"n": 1}).hex()],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    conn, _ = listener.accept()
    listener.close()
    return child, conn


def test_a_pinned_process_that_exits_can_no_longer_vouch_for_its_frames(tmp_path: Path) -> None:
    """Its PID could be recycled: frames still buffered from it are not handed out."""
    child, conn = _pinned_child(tmp_path, "exit")

    async def main() -> None:
        speaker = check_peer(conn, None)
        assert speaker.pid == child.pid
        stream = FrameStream(conn, speaker)
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
        child.wait(DEADLINE)
        with pytest.raises(SpeakerChanged, match=f"the attested pid {child.pid} has exited"):
            await stream.receive()
        stream.close()

    asyncio.run(main())


def test_a_pinned_process_that_execs_another_program_is_refused(tmp_path: Path) -> None:
    child, conn = _pinned_child(tmp_path, "exec")
    try:

        async def main() -> None:
            stream = FrameStream(conn, check_peer(conn, None))
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
            with pytest.raises(SpeakerChanged, match="now executes another program"):
                await asyncio.wait_for(stream.receive(), DEADLINE)
            stream.close()

        asyncio.run(main())
    finally:
        child.kill()
        child.wait(DEADLINE)


def test_close_wakes_a_receive_that_is_waiting(pair: tuple[socket.socket, socket.socket]) -> None:
    a, _b = pair

    async def main() -> None:
        stream = FrameStream(a, check_peer(a, None))
        waiting = asyncio.create_task(stream.receive())
        await asyncio.sleep(0)  # let it start waiting for the socket
        stream.close()
        with pytest.raises(ConnectionClosed):
            await asyncio.wait_for(waiting, DEADLINE)
        with pytest.raises(ConnectionClosed):
            await stream.send({"n": 1})

    asyncio.run(main())


# -- the judge of one chunk, for what no real process here can produce -------------------------


def _speaker() -> Speaker:
    return Speaker(pid=4242, uid=os.getuid(), pidfd=-1, exe=None)


def _creds(pid: int, uid: int) -> list[tuple[int, int, bytes]]:
    return [(socket.SOL_SOCKET, socket.SCM_CREDENTIALS, UCRED.pack(pid, uid, 0))]


@pytest.mark.parametrize(
    ("ancillary", "flags", "reason"),
    [
        ([], 0, "without kernel credentials"),
        (_creds(0, os.getuid()), 0, "pid 0"),
        (_creds(4243, os.getuid()), 0, "from pid 4243, not the attested pid 4242"),
        (_creds(4242, os.getuid() + 1), 0, f"from uid {os.getuid() + 1}, not the attested uid"),
        (_creds(4242, os.getuid()), socket.MSG_CTRUNC, "ancillary data beyond"),
        (_creds(4242, os.getuid()) * 2, 0, "malformed kernel credentials"),
        ([(socket.SOL_SOCKET, socket.SCM_RIGHTS, b"\0" * 4)], 0, "unexpected ancillary data"),
    ],
    ids=["missing", "pid-0", "other-pid", "other-uid", "truncated", "twice", "rights"],
)
def test_the_chunk_judge_refuses(
    ancillary: list[tuple[int, int, bytes]], flags: int, reason: str
) -> None:
    why = _speaker().foreign_chunk(ancillary, flags)
    assert why is not None and reason in why


def test_the_chunk_judge_admits_the_pinned_pid() -> None:
    assert _speaker().foreign_chunk(_creds(4242, os.getuid()), 0) is None
