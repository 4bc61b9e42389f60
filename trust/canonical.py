"""Canonical JSON bytes: what a grant's signature covers.

Sorted keys, ``(",", ":")`` separators, UTF-8 without escaping non-ASCII, no NaN. Only JSON's
exact types are accepted: ``dict`` with ``str`` keys, ``list``/``tuple``, ``str``, ``int``,
``bool`` and ``None``. Floats are refused (the record uses integers only, so there is exactly one
byte string per value), as are non-string keys and strings that are not valid Unicode scalar
values (lone surrogates cannot be encoded as UTF-8).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

__all__ = ["NotCanonical", "canonical"]

#: Deeper than any trust record needs; refuses pathological input before recursion limits do.
MAX_DEPTH = 32


class NotCanonical(ValueError):
    """The value has no canonical JSON form (float, non-str key, bad string, too deep, ...)."""


def _check(value: object, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise NotCanonical("nested too deeply")
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, int):
        return
    if isinstance(value, float):
        raise NotCanonical("floats have no canonical form; use integers")
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise NotCanonical("string is not valid Unicode (lone surrogate)") from None
        return
    if isinstance(value, (list, tuple)):
        for item in value:
            _check(item, depth + 1)
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise NotCanonical(f"object keys must be strings, not {type(key).__name__}")
            _check(key, depth + 1)
            _check(item, depth + 1)
        return
    raise NotCanonical(f"{type(value).__name__} is not a JSON value")


def _plain(value: object) -> object:
    """Mappings (e.g. MappingProxyType) as dicts, so ``json`` serialises them."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def canonical(obj: object) -> bytes:
    """The one canonical byte string for ``obj``; ``NotCanonical`` if there is none."""
    _check(obj, 0)
    text = json.dumps(
        _plain(obj), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    return text.encode("utf-8")
