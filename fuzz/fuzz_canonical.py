# Invariant: on every JSON value, trust.canonical.canonical (Python) and extension/shared/canonical-json.js (JavaScript, one Node process fed every value over stdin) agree byte for byte — both give the same UTF-8 bytes or both refuse — except where JSON's number types differ by design: Python refuses every float and JavaScript refuses every non-finite, fractional or unsafe number, so an integer beyond ±(2**53 - 1) is Python-only and an integral float is JavaScript-only; and Python's bytes always parse back to the value.  # noqa: E501
"""Atheris harness: a differential check of the two canonical-JSON implementations.

Both ends sign or check the same bytes (a tap's ``detail``, the grants), so a value one side
writes differently is a grant that verifies on one side only. Input: byte 0 even — the rest is
JSON text, parsed by Python (floats, NaN and huge integers kept as Python reads them); odd — the
rest is a recipe that builds a value from strings chosen to split the implementations (UTF-16 vs
code-point key order, C0 controls, U+2028, lone surrogates, astral characters, ``__proto__``),
safe and unsafe integers and deep nesting.

The Node peer (``fuzz/js/canonical_peer.mjs``) starts on first use and serves the whole run.

Run: ``python fuzz/fuzz_canonical.py -runs=100000 -max_len=4096`` (or ``python -m fuzz.run``).
"""

from __future__ import annotations

import atexit
import base64
import json
import math
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fuzz.preamble import instrumented, run_libfuzzer
    from fuzz.seed_edits import Recipe
else:
    try:  # `python -m fuzz.run`, pytest
        from fuzz.preamble import instrumented, run_libfuzzer
        from fuzz.seed_edits import Recipe
    except ImportError:  # `python fuzz/fuzz_canonical.py`: this directory is sys.path[0]
        from preamble import instrumented, run_libfuzzer
        from seed_edits import Recipe

with instrumented(__name__):
    from tabwarden.trust.canonical import NotCanonical, canonical

PEER = Path(__file__).resolve().parent / "js" / "canonical_peer.mjs"
SAFE = 2**53 - 1
MAX_SENT_DEPTH = 400
PIECES = (
    "a",
    "B",
    "~",
    "\x00",
    "\x1f",
    "\x7f",
    "\b\f\n\r\t",
    '"',
    "\\",
    "/",
    "\u00e9",
    "\u2028",
    "\u2029",
    "\ue000",
    "\uffff",
    "\U00010000",
    "\U0001f600",
    "\ud800",
    "\udfff",
    "\ud83d",
    "__proto__",
    "constructor",
    "1",
    "",
)
INTS = (0, 1, -1, 10, SAFE, -SAFE, SAFE + 1, -(SAFE + 1), 2**64, 123456789)
FLOATS = (1.5, -0.5, 1e-7, 1.0, -0.0, 1e300, math.inf, math.nan)


class Peer:
    """One Node process running canonical_peer.mjs, asked one value per line."""

    def __init__(self) -> None:
        node = shutil.which("node")
        if node is None:
            raise RuntimeError("the canonical-JSON differential needs Node.js (scripts/setup)")
        self._proc = subprocess.Popen(  # noqa: S603 - Node and a file in this checkout
            [node, str(PEER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="ascii",
            bufsize=1,
        )
        atexit.register(self.close)

    def canonical(self, value: Any) -> bytes | None:
        """JavaScript's bytes for ``value``, or None when it refuses."""
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(json.dumps(value, ensure_ascii=True) + "\n")
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the Node peer exited ({self._proc.poll()})")
        answer = json.loads(line)
        return None if answer.get("refused") else base64.b64decode(answer["ok"])

    def close(self) -> None:
        if self._proc.poll() is None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            self._proc.wait(timeout=30)


_peer: Peer | None = None


def peer() -> Peer:
    global _peer
    if _peer is None:
        _peer = Peer()
    return _peer


def _walk(value: Any) -> tuple[list[Any], int]:
    """Every number in ``value`` and its nesting depth (no recursion: inputs nest deeply)."""
    numbers: list[Any] = []
    deepest = 0
    stack = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(node, dict):
            stack.extend((item, depth + 1) for item in node.values())
        elif isinstance(node, list):
            stack.extend((item, depth + 1) for item in node)
        elif isinstance(node, (int, float)) and not isinstance(node, bool):
            numbers.append(node)
    return numbers, deepest


def check(value: Any) -> None:
    numbers, depth = _walk(value)
    if depth > MAX_SENT_DEPTH:
        return  # json.dumps itself would give up; both sides refuse far sooner
    # The value both sides see: what the JSON line carries ("\ud800" + "\udfff" written
    # separately is one astral character once parsed, on either side).
    value = json.loads(json.dumps(value))
    try:
        ours: bytes | None = canonical(value)
    except NotCanonical:
        ours = None
    theirs = peer().canonical(value)
    floats = [n for n in numbers if isinstance(n, float)]
    if floats:
        assert ours is None, "Python wrote a float"
        if any(not math.isfinite(f) or f != int(f) or abs(f) > SAFE for f in floats):
            assert theirs is None, "JavaScript wrote a fractional, unsafe or non-finite number"
        return  # an integral float reads as an integer in JavaScript: no common ground
    if any(abs(n) > SAFE for n in numbers):
        assert theirs is None, "JavaScript wrote an unsafe integer"
        return
    assert ours == theirs, (value, ours, theirs)
    if ours is not None:
        assert json.loads(ours) == value


def _string(recipe: Recipe) -> str:
    return "".join(recipe.pick(PIECES) for _ in range(recipe.below(5)))


def build(recipe: Recipe, depth: int = 0) -> Any:
    kind = recipe.below(9)
    if depth > 36 or recipe.left == 0:
        kind = recipe.below(3)
    if kind == 0:
        return recipe.pick((None, True, False))
    if kind == 1:
        return recipe.pick(INTS)
    if kind == 2:
        return _string(recipe)
    if kind == 3:
        return recipe.pick(FLOATS) if recipe.byte() % 8 == 0 else recipe.pick(INTS)
    if kind in (4, 5):
        return [build(recipe, depth + 1) for _ in range(recipe.below(4))]
    if kind == 6:  # a tower: nesting around the Python limit (32)
        height = 24 + recipe.below(12)
        inner = build(recipe, depth + height)
        for _ in range(height):
            inner = [inner] if recipe.byte() & 1 else {"k": inner}
        return inner
    return {_string(recipe): build(recipe, depth + 1) for _ in range(recipe.below(5))}


def test_one_input(data: bytes) -> None:
    if not data:
        return
    if data[0] & 1 == 0:
        try:
            value = json.loads(data[1:])
        except (ValueError, RecursionError):
            return
    else:
        value = build(Recipe(data[1:]))
    check(value)


SEEDS: list[bytes] = [
    b'\x00{"b":1,"a":[true,null,"\\u00e9"],"\\ud83d\\ude00":"x","\\uffff":0}',
    b'\x00{"__proto__":{"x":1},"constructor":[]}',
    b'\x00["\\u2028\\u2029\\u0000\\u001f\\u007f","\\ud800"]',
    b"\x00[9007199254740991,-9007199254740991,9007199254740992]",
    b"\x00[1.5,1.0,-0.0,1e400,NaN]",
    b"\x00" + b"[" * 33 + b"1" + b"]" * 33,
    b"\x00" + b"[" * 32 + b"1" + b"]" * 32,
    bytes([1, 0, 7, 0, 3]) + bytes(range(40)),
    bytes([1, 0, 6, 0, 0, 0, 1]) + b"\x01" * 20,
    bytes([1]) + bytes(range(255, 0, -1)),
]


def main() -> None:
    run_libfuzzer(test_one_input)


if __name__ == "__main__":
    main()
