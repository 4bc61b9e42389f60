"""host/notices.py on its own: what counts as a change of a watched file (an atomic rename to a
same-sized file, an append, a dangling-symlink kill latch appearing, a file vanishing), and that
the push sends a bare counter only while the extension is connected and survives a failed send.
The waits are on events the code under test sets, with a generous deadline."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from tabwarden.host.notices import ChangeWatch, push_trust_changes, stamp

GUARD = 30.0  # hang guard only


def test_each_kind_of_change_moves_the_watch_once(tmp_path: Path) -> None:
    record, latch, audit = (
        tmp_path / "trust.json",
        tmp_path / "kill-latch",
        tmp_path / "audit.jsonl",
    )
    record.write_text("{}")
    watch = ChangeWatch((record, latch, audit))
    assert watch.moved() is False

    # An atomic replace with the same size and mtime still has a new inode.
    st = os.stat(record)
    spare = tmp_path / "trust.json.new"
    spare.write_text("{}")
    os.utime(spare, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(spare, record)
    assert watch.moved() is True and watch.moved() is False

    audit.write_text('{"event":"kill"}\n')  # appears
    assert watch.moved() is True
    with audit.open("a") as fh:  # grows
        fh.write('{"event":"tool_call"}\n')
    assert watch.moved() is True

    latch.symlink_to(tmp_path / "nowhere")  # a dangling symlink is a kill latch too
    assert stamp(latch) is not None and watch.moved() is True
    latch.unlink()  # vanishes (unkill)
    assert watch.moved() is True and watch.moved() is False


def test_the_push_sends_a_counter_only_while_connected_and_outlives_a_failed_send(
    tmp_path: Path,
) -> None:
    record = tmp_path / "trust.json"
    record.write_text("{}")

    async def scenario() -> list[dict[str, Any]]:
        sent: list[dict[str, Any]] = []
        arrived = asyncio.Event()
        connected = False
        fail_next = True

        async def send(message: dict[str, Any]) -> None:
            nonlocal fail_next
            if fail_next:
                fail_next = False
                raise BrokenPipeError("the browser went away")
            sent.append(message)
            arrived.set()

        probes = 0
        watch = ChangeWatch((record,))
        real_moved = watch.moved

        def counting() -> bool:
            nonlocal probes
            probes += 1
            return real_moved()

        watch.moved = counting  # type: ignore[method-assign]
        task = asyncio.create_task(
            push_trust_changes(watch, send, lambda: connected, lambda: 7, 0.01)
        )
        try:
            record.write_text('{"a":1}')  # changed while the extension is away: not queued
            while probes < 3:
                await asyncio.sleep(0.01)
            connected = True
            record.write_text('{"a":22}')  # this send fails; the watch goes on
            while fail_next:
                await asyncio.sleep(0.01)
            record.write_text('{"a":333}')
            await asyncio.wait_for(arrived.wait(), GUARD)
        finally:
            task.cancel()
        return sent

    sent = asyncio.run(asyncio.wait_for(scenario(), GUARD))
    assert sent == [{"type": "trust_changed", "seq": 2, "epoch": 7}]


def test_an_epoch_that_cannot_be_read_is_stated_as_minus_one_and_the_watch_goes_on(
    tmp_path: Path,
) -> None:
    record = tmp_path / "trust.json"
    record.write_text("{}")

    async def scenario() -> list[dict[str, Any]]:
        sent: list[dict[str, Any]] = []
        arrived = asyncio.Event()

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)
            if len(sent) == 2:
                arrived.set()

        calls = 0

        def epoch() -> int:
            nonlocal calls
            calls += 1
            if calls == 1:
                raise OSError("the record is being replaced")
            return 9

        task = asyncio.create_task(
            push_trust_changes(ChangeWatch((record,)), send, lambda: True, epoch, 0.01)
        )
        try:
            record.write_text('{"a":1}')
            while not sent:
                await asyncio.sleep(0.01)
            record.write_text('{"a":22}')
            await asyncio.wait_for(arrived.wait(), GUARD)
        finally:
            task.cancel()
        return sent

    sent = asyncio.run(asyncio.wait_for(scenario(), GUARD))
    assert [n["epoch"] for n in sent] == [-1, 9]
