"""Structure-aware edits of a seed, steered by the fuzzer's bytes (shared by the harnesses).

A byte-level mutator rarely gets a JSON document past its parser, so the structured harnesses
read their input as a *recipe*: ``Recipe(data)`` hands out small choices, and ``edit_json`` /
``edit_bytes`` apply those choices to a valid seed (replace, delete, duplicate, splice a subtree
from a donor, nudge an integer, bend a string). The same input always makes the same edit, so a
crash input replays exactly. Plain Python: no atheris, no randomness of its own.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

#: Scalars an edit may drop in anywhere: JSON's edge cases and the record's own vocabulary.
SCALARS: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    1,
    -1,
    2**53 - 1,
    2**53,
    2**64,
    "",
    "0",
    "\u0000",
    "\ud800",
    "\U0001f600",
    "a" * 300,
    "client",
    "browser",
    "baseline",
    "release",
    "https://example.com",
    "http://127.0.0.1:8080",
    "constructor",
    "__proto__",
    [],
    {},
    1.5,
)


class Recipe:
    """The fuzzer's bytes as a stream of choices; past the end every choice is 0."""

    __slots__ = ("_data", "_pos")

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._pos = 0

    @property
    def left(self) -> int:
        return len(self._data) - self._pos

    def byte(self) -> int:
        if self._pos >= len(self._data):
            return 0
        value = self._data[self._pos]
        self._pos += 1
        return value

    def below(self, n: int) -> int:
        """A choice in ``range(n)`` (two bytes, so lists up to 65,536 long are reachable)."""
        if n <= 1:
            return 0
        return ((self.byte() << 8) | self.byte()) % n

    def pick(self, items: Sequence[Any]) -> Any:
        """One of ``items`` — a copy, so an edit never changes a pool or a seed."""
        return copy.deepcopy(items[self.below(len(items))])

    def take(self, n: int) -> bytes:
        chunk = self._data[self._pos : self._pos + n]
        self._pos += len(chunk)
        return chunk

    def rest(self) -> bytes:
        return self.take(self.left)


def subtrees(value: Any) -> list[Any]:
    """Every node of a JSON value (itself included), for donors and for choosing a target."""
    out = [value]
    if isinstance(value, dict):
        for item in value.values():
            out.extend(subtrees(item))
    elif isinstance(value, list):
        for item in value:
            out.extend(subtrees(item))
    return out


def _containers(value: Any) -> list[Any]:
    return [v for v in subtrees(value) if isinstance(v, (dict, list))]


def _nudge(value: Any, recipe: Recipe) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return recipe.pick((value + 1, value - 1, 0, -value, value * 2**32, 2**53 - 1))
    if isinstance(value, str):
        if not value:
            return recipe.pick(("x", "\x00", " "))
        i = recipe.below(len(value))
        op = recipe.below(5)
        if op == 0:  # change one character
            return (
                value[:i]
                + chr((ord(value[i]) + recipe.pick((1, -1, 32))) % 0x110000)
                + value[i + 1 :]
            )
        if op == 1:  # drop one
            return value[:i] + value[i + 1 :]
        if op == 2:  # insert a character
            return (
                value[:i] + recipe.pick(("/", ".", "=", "\\", "\u00e9", "\ud800", "@")) + value[i:]
            )
        if op == 3:  # case, whitespace
            return recipe.pick((value.upper(), " " + value, value + "\n", value + value))
        return value[:i]
    return value


def edit_json(value: Any, recipe: Recipe, donors: Sequence[Any] = ()) -> Any:
    """A deep copy of ``value`` with up to a few edits the recipe chooses."""
    doc = copy.deepcopy(value)
    for _ in range(1 + recipe.below(4)):
        if recipe.left == 0:
            break
        holders = _containers(doc)
        if not holders:
            return recipe.pick(SCALARS)
        holder = recipe.pick(holders)
        keys: list[Any] = list(holder) if isinstance(holder, dict) else list(range(len(holder)))
        op = recipe.below(8)
        if not keys or op == 0:  # add an entry
            new = recipe.pick(donors) if donors and recipe.byte() & 1 else recipe.pick(SCALARS)
            if isinstance(holder, dict):
                holder[
                    recipe.pick(("kind", "sig", "epoch", "x", "uv", "windowOnly", "key", "value"))
                ] = new
            else:
                holder.insert(recipe.below(len(holder) + 1), new)
            continue
        key = recipe.pick(keys)
        if op == 1:  # delete
            del holder[key]
        elif op == 2 and isinstance(holder, list):  # duplicate
            holder.insert(key, copy.deepcopy(holder[key]))
        elif op == 3 and donors:  # splice a subtree from a donor (e.g. another record's grant)
            holder[key] = recipe.pick(donors)
        elif op == 4:  # replace with a scalar
            holder[key] = recipe.pick(SCALARS)
        elif op == 5 and isinstance(holder, dict):  # rename a key
            holder[_nudge(str(key), recipe)] = holder.pop(key)
        else:  # nudge the value in place
            holder[key] = _nudge(holder[key], recipe)
    return doc


def edit_bytes(seed: bytes, recipe: Recipe) -> bytes:
    """``seed`` with up to a few byte edits (flip, set, insert, delete, truncate)."""
    buf = bytearray(seed)
    for _ in range(1 + recipe.below(4)):
        if recipe.left == 0:
            break
        op = recipe.below(6)
        pos = recipe.below(len(buf) + 1)
        if op == 0 and buf:
            buf[min(pos, len(buf) - 1)] ^= 1 << recipe.below(8)
        elif op == 1 and buf:
            buf[min(pos, len(buf) - 1)] = recipe.byte()
        elif op == 2:
            buf[pos:pos] = recipe.take(1 + recipe.below(8))
        elif op == 3:
            del buf[pos : pos + 1 + recipe.below(16)]
        elif op == 4:
            del buf[pos:]
        else:
            buf[pos:pos] = buf[pos : pos + 1 + recipe.below(32)]
    return bytes(buf)
