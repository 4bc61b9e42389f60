"""A screenshot's ``bytes`` is counted without decoding the image (``tools._decoded_size``): the
count is the decoded length for every capture, and anything else is counted (or refused) as
decoding counts it."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tabwarden.mcp_server.tools import _decoded_size


@given(st.binary(max_size=4096))
def test_a_capture_is_counted_as_its_decoded_length(image: bytes) -> None:
    assert _decoded_size(base64.b64encode(image).decode()) == len(image)


@given(st.text(max_size=64))
def test_anything_else_is_counted_or_refused_as_decoding_does(data: str) -> None:
    if len(data) % 4 == 0 and data.isascii() and len(data) - len(data.rstrip("=")) <= 2:
        return  # whole groups of ASCII: counted by arithmetic (the docstring says so)
    try:
        expected = len(base64.b64decode(data, validate=False))
    except ValueError:  # binascii.Error
        with pytest.raises(ValueError):
            _decoded_size(data)
    else:
        assert _decoded_size(data) == expected
