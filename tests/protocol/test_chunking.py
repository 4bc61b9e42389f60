"""Reassembly of chunked extension replies: exact, bounded, and strict about order."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tabwarden.protocol.chunking import MAX_CHUNKS, ChunkError, Reassembler


def chunks(reply: dict[str, object], parts: int) -> list[dict[str, object]]:
    text = json.dumps(reply, ensure_ascii=False)
    size = -(-len(text) // parts)
    slices = [text[i : i + size] for i in range(0, len(text), size)]
    return [
        {"type": "chunk", "id": reply["id"], "seq": i, "total": len(slices), "data": d}
        for i, d in enumerate(slices)
    ]


REPLY = {"type": "reply", "id": "r1", "ok": True, "result": {"text": "é" * 5000 + "x" * 5000}}


def test_round_trip() -> None:
    r = Reassembler()
    messages = chunks(REPLY, 7)
    assert [r.add(m) for m in messages[:-1]] == [None] * (len(messages) - 1)
    assert r.add(messages[-1]) == REPLY


@settings(max_examples=100)
@given(text=st.text(max_size=3000), parts=st.integers(min_value=2, max_value=40))
def test_any_text_any_split_round_trips(text: str, parts: int) -> None:
    reply = {"type": "reply", "id": "r9", "ok": True, "result": {"t": text}}
    messages = chunks(reply, parts)
    if len(messages) < 2:
        return
    r = Reassembler()
    out = [r.add(m) for m in messages]
    assert out[-1] == reply and all(o is None for o in out[:-1])


@pytest.mark.parametrize("mutate", ["gap", "reorder", "total_changes", "starts_late", "bad_total"])
def test_malformed_sequences_are_refused(mutate: str) -> None:
    messages = chunks(REPLY, 5)
    if mutate == "gap":
        del messages[2]
    elif mutate == "reorder":
        messages[1], messages[2] = messages[2], messages[1]
    elif mutate == "total_changes":
        messages[3] = {**messages[3], "total": 9}
    elif mutate == "starts_late":
        messages = messages[1:]
    else:
        messages[0] = {**messages[0], "total": MAX_CHUNKS + 1}
    r = Reassembler()
    with pytest.raises(ChunkError) as err:
        for m in messages:
            r.add(m)
    assert err.value.reply_id == "r1"
    # The reassembler recovers: the next well-formed reply goes through.
    assert [r.add(m) for m in chunks({**REPLY, "id": "r2"}, 3)][-1] == {**REPLY, "id": "r2"}


def test_interleaved_reply_loses_the_open_one() -> None:
    r = Reassembler()
    first = chunks(REPLY, 3)
    other = chunks({**REPLY, "id": "r2"}, 3)
    r.add(first[0])
    with pytest.raises(ChunkError) as err:
        r.add(other[0])
    assert err.value.reply_id == "r1"


def test_size_limit_is_enforced_before_buffering_more() -> None:
    r = Reassembler(limit=100)
    with pytest.raises(ChunkError, match="exceeds 100 bytes"):
        for m in chunks({"type": "reply", "id": "r1", "ok": True, "result": {"x": "y" * 500}}, 4):
            r.add(m)


def test_reassembled_reply_must_name_its_own_id() -> None:
    messages = chunks({**REPLY, "id": "r1"}, 3)
    messages = [{**m, "id": "zz"} for m in messages]
    with pytest.raises(ChunkError, match="another id"):
        r = Reassembler()
        for m in messages:
            r.add(m)


@pytest.mark.parametrize(
    "bad",
    [
        {},
        {"id": "r1"},
        {"id": "r1", "seq": "0", "total": 2, "data": ""},
        {"id": 5, "seq": 0, "total": 2, "data": ""},
    ],
)
def test_malformed_fields(bad: dict[str, object]) -> None:
    with pytest.raises(ChunkError):
        Reassembler().add(bad)
