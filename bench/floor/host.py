"""The bench floor's native-messaging host: the least a host can do, timed from its side.

Chrome launches it (through the wrapper the bench writes) when the floor extension connects.
It sends ``--echo`` small messages one at a time and times each round trip, then asks
``--bulk`` times for ``--bulk-bytes`` in ``--chunk-bytes`` messages and times each transfer,
writes the figures as JSON to ``--out`` (temp file, then rename) and exits. Blocking reads and
writes on stdin/stdout, no threads, no event loop: this is the floor a real host is measured
against. Standard library only; it must never write anything but Chrome's framing to stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import sys
import time
from typing import Any, BinaryIO

HEADER = struct.Struct("=I")  # Chrome's framing: 32-bit native-endian length, UTF-8 JSON


def send(out: BinaryIO, message: dict[str, Any]) -> None:
    body = json.dumps(message, separators=(",", ":")).encode()
    out.write(HEADER.pack(len(body)) + body)
    out.flush()


def receive(inp: BinaryIO) -> dict[str, Any]:
    header = inp.read(HEADER.size)
    if len(header) < HEADER.size:
        raise EOFError("the browser closed the port")
    (length,) = HEADER.unpack(header)
    body = inp.read(length)
    if len(body) < length:
        raise EOFError("the browser closed the port mid-message")
    message: dict[str, Any] = json.loads(body)
    return message


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--echo", type=int, default=200)
    parser.add_argument("--bulk", type=int, default=5)
    parser.add_argument("--bulk-bytes", type=int, default=10_000_000)
    parser.add_argument("--chunk-bytes", type=int, default=1_000_000)
    args, _chrome_args = parser.parse_known_args(argv)  # Chrome appends the caller's origin
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    echo_ms: list[float] = []
    for i in range(args.echo):
        start = time.perf_counter()
        send(out, {"op": "echo", "i": i})
        reply = receive(inp)
        echo_ms.append((time.perf_counter() - start) * 1000)
        if reply.get("i") != i:
            raise RuntimeError(f"echo {i} answered with {reply!r}")
    count = -(-args.bulk_bytes // args.chunk_bytes)
    bulk_ms: list[float] = []
    for _ in range(args.bulk):
        start = time.perf_counter()
        send(out, {"op": "bulk", "count": count, "chunkBytes": args.chunk_bytes})
        received = 0
        for seq in range(count):
            chunk = receive(inp)
            if chunk.get("seq") != seq:
                raise RuntimeError(f"chunk {seq} arrived as {chunk.get('seq')!r}")
            received += len(chunk["data"])
        bulk_ms.append((time.perf_counter() - start) * 1000)
    result = {
        "echo_ms": echo_ms,
        "bulk_ms": bulk_ms,
        "bulk_bytes": count * args.chunk_bytes,
        "chunk_bytes": args.chunk_bytes,
    }
    write_result(args.out, result)
    return 0


def write_result(path: str, result: dict[str, Any]) -> None:
    temp = path + ".tmp"
    with open(temp, "w", encoding="utf-8") as handle:
        json.dump(result, handle)
    os.replace(temp, path)


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Exception as exc:  # the bench reports it instead of waiting out its deadline
        out = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--out=")), None)
        if out:
            write_result(out, {"error": f"{type(exc).__name__}: {exc}"})
        raise
