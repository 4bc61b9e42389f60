# Invariant: the policy lattice (tabwarden.trust.policy) raises only PolicyError on any value; its order agrees with an independent model of the table in its docstring; restrict() and restrict_explained() never raise, never widen (the result is never wider than the policy given, nor than any prefix of the restrictions), keep each key at the policy's value or one restriction's normalised value, and agree with is_narrowing; origins normalise idempotently to a bare scheme://host[:port]; and every policy survives to_json() -> validate_values() unchanged.  # noqa: E501
"""Atheris harness for the policy lattice and the restriction overlay (tabwarden.trust.policy).

Input: a recipe (``seed_edits.Recipe``) that builds a policy from a values object (keys and
values drawn from pools of valid values and near misses), then a list of restrictions (pairs,
``{"key", "value"}`` mappings, or junk items). ``_model_le`` is the docstring's table written
out again, not the module's ``_le``.

Run: ``python fuzz/fuzz_policy.py -runs=100000 -max_len=4096`` (or ``python -m fuzz.run``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fuzz.preamble import instrumented, run_libfuzzer
    from fuzz.seed_edits import SCALARS, Recipe
else:
    try:  # `python -m fuzz.run`, pytest
        from fuzz.preamble import instrumented, run_libfuzzer
        from fuzz.seed_edits import SCALARS, Recipe
    except ImportError:  # `python fuzz/fuzz_policy.py`: this directory is sys.path[0]
        from preamble import instrumented, run_libfuzzer
        from seed_edits import SCALARS, Recipe

with instrumented(__name__):
    from tabwarden.trust import policy as lattice

Policy = lattice.Policy
PolicyError = lattice.PolicyError

ORIGINS: tuple[Any, ...] = (
    "https://example.com",
    "https://EXAMPLE.com:443",
    "http://example.com:80",
    "http://127.0.0.1",
    "http://127.0.0.1:8080",
    "http://127.1",
    "http://0x7f.0.0.1",
    "http://[::1]",
    "http://[0:0:0:0:0:0:0:1]:80",
    "http://[::ffff:127.0.0.1]",
    "https://xn--bcher-kva.example",
    "https://bücher.example",
    "https://example.com/",
    "https://example.com/path",
    "https://user@example.com",
    "https://*.example.com",
    "https://example.com:0",
    "https://example.com:65536",
    "https://example.com:08080",
    "https://-bad-.example",
    "https://a..b",
    "https://example.com.",
    "chrome-extension://abc",
    "file:///etc/passwd",
    "javascript:alert(1)",
    "https://" + "a" * 63 + ".example",
    "https://" + ".".join(["a" * 60] * 5),
    "",
    "https://127.0.0.1.evil.test",
    "https://1.2.3.4.5",
    "https://999.1.1.1",
    "HTTPS://Example.COM",
    "https://example.com\n",
    7,
    None,
)
ACTIONS: tuple[Any, ...] = (
    "submit",
    "link_click",
    "press",
    "select",
    "tab_close",
    "eval",
    "upload",
    "Submit",
    "",
    "a" * 33,
    "x-y",
    1,
)
FAMILIES: tuple[Any, ...] = ("input", "layout", "read", "devtools", "files", "all", "Input", "", 3)
VALUES: dict[str, tuple[Any, ...]] = {
    "clickGraceSeconds": (0, 1, 30, 600, 601, -1, True, "30", 2**64),
    "confirmTimeoutSeconds": (4, 5, 60, 600, 601, 0, False, None),
    "eval": (True, False, 1, 0, None, "true"),
    "upload": (True, False, 1, "false"),
    "passwordFill": (True, False, []),
    "presenceConfirm": (True, False, 0),
    "closeTabsOnSessionEnd": (True, False, 1, None),
    "maxAgentTabs": (0, 1, 20, 200, 201, -1, True, "20"),
    "dialogArming": (True, False, 1, "true"),
    "pageFetch": (True, False, 0, "true"),
    "consoleCapture": (True, False, 1, "true"),
    "networkCapture": (True, False, 0, None),
    "provenance": ("strict", "confirm", "off", "Off", "", True, None),
    "agentTabsAudible": (True, False, 1, "true"),
}
KEYS = (*lattice.POLICY_KEYS, "unknown", "Origins", "", "__proto__")
_BARE = re.compile(r"^https?://(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:[1-9][0-9]{0,4})?$")


def _model_le(key: str, a: Any, b: Any) -> bool:
    """``a`` is at most as permissive as ``b`` for ``key`` (the docstring's table)."""
    if key in ("origins", "toolFamilies"):  # fewer approved sites, fewer families is narrower
        return all(o in b for o in a)
    if key == "confirm":  # confirming more actions is narrower
        return all(x in a for x in b)
    if key in ("eval", "upload", "passwordFill"):  # false is narrower
        return a is False or b is True
    if key in ("presenceConfirm", "closeTabsOnSessionEnd"):  # true is narrower
        return a is True or b is False
    if key == "provenance":  # strict < confirm < off
        order = ("strict", "confirm", "off")
        return order.index(a) <= order.index(b)
    return int(a) <= int(b)  # the two timeouts and the tab cap: smaller is narrower


def model_wider(a: Policy, b: Policy) -> bool:
    return any(not _model_le(k, a[k], b[k]) for k in lattice.POLICY_KEYS)


def _list(recipe: Recipe, pool: tuple[Any, ...]) -> Any:
    if recipe.byte() % 16 == 0:
        return recipe.pick(SCALARS)
    return [recipe.pick(pool) for _ in range(recipe.below(5))]


def _value(recipe: Recipe, key: str) -> Any:
    if recipe.byte() % 12 == 0:
        return recipe.pick(SCALARS)
    if key == "origins":
        return _list(recipe, ORIGINS)
    if key == "confirm":
        return _list(recipe, ACTIONS)
    if key == "toolFamilies":
        return _list(recipe, FAMILIES)
    return recipe.pick(VALUES.get(key, SCALARS))


def _policy(recipe: Recipe) -> Policy:
    values: dict[str, Any] = {}
    for _ in range(recipe.below(len(lattice.POLICY_KEYS) + 1)):
        key = recipe.pick(KEYS) if recipe.byte() % 8 == 0 else recipe.pick(lattice.POLICY_KEYS)
        values[key] = _value(recipe, key)
    try:
        return lattice.validate_values(values)
    except PolicyError:
        return lattice.DEFAULT_POLICY if recipe.byte() & 1 else lattice.DENY_POLICY


def _restriction(recipe: Recipe) -> Any:
    key = recipe.pick(KEYS)
    value = _value(recipe, key if key in lattice.POLICY_KEYS else "origins")
    shape = recipe.below(5)
    if shape == 0:
        return (key, value)
    if shape == 1:
        return {"key": key, "value": value}
    if shape == 2:
        return {"value": value}
    if shape == 3:
        return recipe.pick(SCALARS)
    return (key, value, "extra")


def restriction_pair(item: Any) -> tuple[Any, Any]:
    """(key, value) of a restriction in any shape ``restrict`` documents; (None, None) else."""
    if isinstance(item, tuple) and len(item) == 2:
        return item[0], item[1]
    if isinstance(item, dict):
        return item.get("key"), item.get("value")
    return getattr(item, "key", None), getattr(item, "value", None)


def check_origin(origin: Any) -> None:
    try:
        bare = lattice.normalise_origin(origin)
    except PolicyError:
        return
    assert _BARE.match(bare), bare
    assert lattice.normalise_origin(bare) == bare, bare


def check_policy(p: Policy) -> None:
    assert lattice.validate_values(p.to_json()) == p
    for key in lattice.POLICY_KEYS:
        assert lattice.is_narrowing(p, key, p.to_json()[key])
    for origin in p.origins:
        assert _BARE.match(origin), origin


def test_one_input(data: bytes) -> None:
    recipe = Recipe(data)
    for _ in range(recipe.below(3)):
        check_origin(recipe.pick(ORIGINS))
    base = _policy(recipe)
    other = _policy(recipe)
    check_policy(base)
    assert lattice.is_wider(base, other) == model_wider(base, other), (base, other)
    assert not lattice.is_wider(base, base)
    restrictions = [_restriction(recipe) for _ in range(recipe.below(6))]

    result, ignored = lattice.restrict_explained(base, restrictions)
    assert lattice.restrict(base, restrictions) == result
    assert len(ignored) <= len(restrictions)
    check_policy(result)
    assert not model_wider(result, base), (result, base)
    for cut in range(len(restrictions) + 1):
        assert not model_wider(result, lattice.restrict(base, restrictions[:cut]))
    for key in lattice.POLICY_KEYS:
        candidates = [base[key]]
        for item in restrictions:
            k, v = restriction_pair(item)
            if k == key:
                try:
                    candidates.append(lattice.validate_value(key, v))
                except PolicyError:
                    pass
        assert result[key] in candidates, (key, result[key], candidates)

    for item in restrictions:
        key, value = restriction_pair(item)
        if not isinstance(key, str):
            continue
        narrowing = lattice.is_narrowing(base, key, value)
        single = lattice.restrict(base, [(key, value)])
        if narrowing:
            assert single[key] == lattice.validate_value(key, value)
        else:
            assert single == base, (key, value)
    changes = {k: v for k, v in map(restriction_pair, restrictions) if isinstance(k, str)}
    try:
        widened = lattice.apply_set(base, changes)
    except PolicyError:
        return
    check_policy(widened)


SEEDS: list[bytes] = [
    b"",
    b"\x00\x01\x00\x00\x00\x01\x00\x02\x00\x03",
    bytes(range(64)),
    b"\x00\x02" * 40,
    b"\x05\x00\x07" * 30,
    b"\xff" * 64,
]


def main() -> None:
    run_libfuzzer(test_one_input)


if __name__ == "__main__":
    main()
