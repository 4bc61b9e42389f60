"""Reassembly of chunked extension replies: exact, bounded, and strict about order."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tabwarden.protocol.chunking import MAX_CHUNKS, ChunkError, Reassembler, object_members
from tabwarden.protocol.framing import FramingError, loads_object


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


# -- pass-through: the result's bytes as the extension wrote them ------------------------------

#: A reply as a serialiser other than Python's might write it: escapes, spacing, a trailing zero.
WRITTEN = (
    '{"type":"reply", "id":"r3","ok":true,"result": {"t":"caf\\u00e9 \\/ x","n":1.50,"k":[ ]} }'
)


def test_a_successful_reply_hands_out_its_result_bytes_unchanged() -> None:
    r = Reassembler()
    slices = [WRITTEN[i : i + 9] for i in range(0, len(WRITTEN), 9)]
    whole = None
    for seq, data in enumerate(slices):
        whole = r.add_passing(
            {"type": "chunk", "id": "r3", "seq": seq, "total": len(slices), "data": data}
        )
    assert whole is not None
    assert whole.result_json == b'{"t":"caf\\u00e9 \\/ x","n":1.50,"k":[ ]}'
    assert whole.reply == json.loads(WRITTEN)


@pytest.mark.parametrize(
    "written",
    [
        '{"type":"reply","id":"r3","ok":false,"error":{"code":"timeout"}}',
        '{"type":"reply","id":"r3","ok":true,"result":[1]}',
        '{"type":"reply","id":"r3","ok":1,"result":{}}',
    ],
)
def test_anything_but_a_successful_object_result_takes_the_checked_path(written: str) -> None:
    r = Reassembler()
    half = len(written) // 2
    r.add_passing({"type": "chunk", "id": "r3", "seq": 0, "total": 2, "data": written[:half]})
    whole = r.add_passing(
        {"type": "chunk", "id": "r3", "seq": 1, "total": 2, "data": written[half:]}
    )
    assert whole is not None and whole.result_json is None and whole.reply == json.loads(written)


_JSON_PIECES = st.sampled_from(
    [
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        " ",
        '"a"',
        '"b"',
        '"\\u00e9"',
        '"\\ud800"',
        "1",
        "1.5",
        "1e400",
        "NaN",
        "true",
        "null",
        '"',
        "\\",
        "\n",
        "\x00",
        "\udc80",
        "é",
        '{"a":1}',
    ]
)


@settings(max_examples=400)
@given(pieces=st.lists(_JSON_PIECES, max_size=14))
@pytest.mark.promise("H4-61")
def test_object_members_refuses_exactly_what_loads_object_refuses(pieces: list[str]) -> None:
    text = "".join(pieces)
    try:
        expected: dict[str, object] | None = loads_object(text.encode("utf-8", "surrogatepass"))
    except FramingError:
        expected = None
    try:
        members = object_members(text)
    except FramingError:
        assert expected is None, text
        return
    assert expected is not None, text
    assert {k: v for k, (v, _, _) in members.items()} == expected
    for value, start, end in members.values():
        assert json.loads(text[start:end]) == value
