"""``host/native.py`` ``NativePipe`` over real pipes, as Chrome drives it: a real process whose
stdin/stdout are pipes, messages echoed through the pipe's own event-loop I/O. Big answers the
reader is slow to take (the pipe's buffer fills, the write must wait) — finished even when
their sender is cancelled — the 1 MiB host->browser
cap, the browser->host size limit checked from the header, a clean EOF, and a stop signal while
nothing arrives."""

from __future__ import annotations

import json
import select
import signal
import struct
import subprocess
import sys
from typing import Any

import pytest

from tabwarden.protocol import nativemsg

ECHO = """
import asyncio, signal, sys
from tabwarden.host.native import NativePipe
from tabwarden.protocol.framing import FrameTooLarge

async def main():
    pipe = NativePipe()
    async def on_message(m):
        if m.get("cancel"):  # the second big answer's sender is cancelled mid-message
            await pipe.send({"n": 0, "pad": "x" * 900_000})
            sender = asyncio.create_task(pipe.send({"n": 1, "pad": "x" * 900_000}))
            await asyncio.sleep(0)  # one step: it wrote what fitted and waits on the pipe
            sender.cancel()
            await asyncio.gather(sender, return_exceptions=True)
            print("cancelled:", sender.cancelled(), file=sys.stderr, flush=True)
            await pipe.send({"n": 2, "pad": ""})
            return
        try:
            await pipe.send({"n": m["n"], "pad": "x" * m["size"]})
        except FrameTooLarge:
            await pipe.send({"n": m["n"], "refused": "too large"})
    reading = asyncio.create_task(pipe.read_messages(on_message))
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, reading.cancel)
    try:
        reason = await reading
    except asyncio.CancelledError:
        reason = "stopped"
    print("reason:", reason, file=sys.stderr)

asyncio.run(main())
"""

HEADER = struct.Struct("=I")


def start() -> subprocess.Popen[bytes]:
    return subprocess.Popen(  # noqa: S603 (this interpreter and a fixed script)
        [sys.executable, "-c", ECHO],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return HEADER.pack(len(body)) + body


def read_frame(proc: subprocess.Popen[bytes]) -> dict[str, Any]:
    assert proc.stdout is not None
    (length,) = HEADER.unpack(proc.stdout.read(4))
    assert length <= nativemsg.MAX_HOST_TO_BROWSER
    message: dict[str, Any] = json.loads(proc.stdout.read(length))
    return message


def finish(proc: subprocess.Popen[bytes]) -> tuple[int, str, bytes]:
    """Close stdin, wait for the end: (exit status, stderr, what stdout still carried)."""
    out, err = proc.communicate(timeout=60)
    return proc.returncode, err.decode(), out


@pytest.mark.promise("H4-28")
def test_big_answers_wait_for_a_slow_reader_and_arrive_whole_in_order() -> None:
    proc = start()
    assert proc.stdin is not None
    sizes = [900_000, 10, 500_000, 1_048_000 - 30, 3]
    # Every request first, nothing read: the answers overflow the pipe's buffer many times.
    for n, size in enumerate(sizes):
        proc.stdin.write(frame({"n": n, "size": size}))
    proc.stdin.flush()
    answers = [read_frame(proc) for _ in sizes]
    assert [(a["n"], len(a["pad"])) for a in answers] == list(enumerate(sizes))
    status, err, rest = finish(proc)
    assert status == 0 and "reason: None" in err and rest == b""  # EOF is a clean end


@pytest.mark.promise("H4-28")
def test_an_answer_above_chromes_limit_is_refused_before_a_byte_is_written() -> None:
    proc = start()
    assert proc.stdin is not None
    proc.stdin.write(frame({"n": 0, "size": nativemsg.MAX_HOST_TO_BROWSER}))
    proc.stdin.write(frame({"n": 1, "size": 5}))
    proc.stdin.flush()
    assert read_frame(proc) == {"n": 0, "refused": "too large"}
    assert read_frame(proc) == {"n": 1, "pad": "xxxxx"}  # the stream is still in step
    assert finish(proc)[0] == 0


@pytest.mark.promise("H4-28")
def test_an_oversized_browser_frame_is_refused_from_its_header() -> None:
    proc = start()
    assert proc.stdin is not None
    proc.stdin.write(frame({"n": 0, "size": 1}))
    # Only the header of a frame past the limit: refused from the header, its body never awaited.
    proc.stdin.write(HEADER.pack(nativemsg.MAX_BROWSER_TO_HOST + 1))
    proc.stdin.flush()
    assert read_frame(proc) == {"n": 0, "pad": "x"}
    status, err, rest = finish(proc)
    assert status == 0 and "reason: browser sent a bad frame" in err
    assert rest == b""  # nothing answered after the refusal


@pytest.mark.promise("H4-28")
def test_a_stop_signal_ends_a_pipe_waiting_on_a_silent_browser() -> None:
    proc = start()
    assert proc.stdin is not None
    proc.stdin.write(frame({"n": 0, "size": 1}))
    proc.stdin.flush()
    assert read_frame(proc)["n"] == 0  # it is up and waiting on stdin
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)  # stdin still open: only the signal can end it
    status, err, _ = finish(proc)
    assert status == 0 and "reason: stopped" in err


@pytest.mark.promise("H4-28")
def test_a_message_whose_sender_is_cancelled_mid_write_is_still_sent_whole() -> None:
    proc = start()
    assert proc.stdin is not None
    proc.stdin.write(frame({"cancel": True}))
    proc.stdin.flush()
    # Nothing is read until the sender was cancelled: its message could not fit the pipe.
    assert proc.stderr is not None
    ready, _, _ = select.select([proc.stderr], [], [], 60)
    assert ready, "the pipe never reported the cancelled sender"
    assert proc.stderr.readline() == b"cancelled: True\n"
    answers = [read_frame(proc) for _ in range(3)]  # in step: no half frame in between
    assert [(a["n"], len(a["pad"])) for a in answers] == [(0, 900_000), (1, 900_000), (2, 0)]
    status, _, rest = finish(proc)
    assert status == 0 and rest == b""
