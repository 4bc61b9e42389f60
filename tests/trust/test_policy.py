"""The policy lattice: restrictions only narrow; origins compare exactly."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tabwarden.trust.policy import (
    DEFAULT_POLICY,
    DENY_POLICY,
    POLICY_KEYS,
    Policy,
    PolicyError,
    apply_set,
    is_narrowing,
    is_wider,
    normalise_origin,
    restrict,
    restrict_explained,
    validate_values,
)


def test_default_policy_matches_the_documented_table() -> None:
    assert DEFAULT_POLICY.to_json() == {
        "origins": [],
        "confirm": ["link_click", "press", "select", "submit", "tab_close"],
        "eval": False,
        "upload": False,
        "passwordFill": False,
        "clickGraceSeconds": 30,
        "confirmTimeoutSeconds": 40,
        "presenceConfirm": False,
        "closeTabsOnSessionEnd": False,
        "maxAgentTabs": 20,
        "dialogArming": False,
        "pageFetch": False,
        "consoleCapture": False,
        "networkCapture": False,
        "provenance": "confirm",
        "agentTabsAudible": False,
        "toolFamilies": [],
    }
    assert tuple(DEFAULT_POLICY) == POLICY_KEYS
    assert DEFAULT_POLICY["passwordFill"] is False
    with pytest.raises(AttributeError):
        DEFAULT_POLICY.eval = True  # type: ignore[misc]  # frozen
    assert not is_wider(DENY_POLICY, DEFAULT_POLICY) and is_wider(DEFAULT_POLICY, DENY_POLICY)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("https://Example.COM", "https://example.com"),
        ("https://example.com:443", "https://example.com"),
        ("http://example.com:8080", "http://example.com:8080"),
        ("http://127.0.0.1", "http://127.0.0.1"),
        ("http://127.0.0.1.evil.test", "http://127.0.0.1.evil.test"),
        ("http://[::1]:3000", "http://[::1]:3000"),
        ("http://localhost:80", "http://localhost"),
    ],
)
def test_normalise_origin(raw: str, expected: str) -> None:
    assert normalise_origin(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "https://example.com/",
        "https://example.com/path",
        "https://user@example.com",
        "https://user:pw@example.com",
        "https://*.example.com",
        "*",
        "https://example.com?q",
        "https://example.com#f",
        "ftp://example.com",
        "chrome-extension://abc",
        "example.com",
        "http://127.1",
        "http://0x7f.0.0.1",
        "http://1.2.3.4.5",
        "http://exa mple.com",
        "http://example.com:0",
        "http://example.com:65536",
        "http://ex_ample.com",
        "http://bücher.de",
        "http://a..b",
    ],
)
def test_normalise_origin_refuses_anything_but_an_exact_origin(raw: str) -> None:
    with pytest.raises(PolicyError) as info:
        normalise_origin(raw)
    assert info.value.code == "policy_invalid"


@pytest.mark.promise("TR-04", "H4-01")
def test_lookalike_origin_is_not_the_approved_one() -> None:
    base = validate_values({"origins": ["http://127.0.0.1"]})
    assert not is_narrowing(base, "origins", ["http://127.0.0.1.evil.test"])
    assert restrict(base, [("origins", ["http://127.0.0.1.evil.test"])]) == base


@pytest.mark.parametrize(
    "values",
    [
        {"nope": True},
        {"eval": 1},
        {"eval": "false"},
        {"clickGraceSeconds": True},
        {"clickGraceSeconds": 601},
        {"clickGraceSeconds": -1},
        {"confirmTimeoutSeconds": 4},
        {"confirmTimeoutSeconds": 30.0},
        {"origins": "https://a.test"},
        {"origins": ["https://a.test/"]},
        {"confirm": ["Submit"]},
        {"confirm": [1]},
    ],
)
def test_validate_values_refuses_bad_input(values: dict[str, Any]) -> None:
    with pytest.raises(PolicyError) as info:
        validate_values(values)
    assert info.value.code == "policy_invalid"


def test_restrict_narrows_and_ignores_widening() -> None:
    base = validate_values({"origins": ["https://a.test", "https://b.test"], "eval": True})
    narrowed, ignored = restrict_explained(
        base,
        [
            {"key": "origins", "value": ["https://a.test"]},
            {"key": "eval", "value": False},
            {"key": "origins", "value": ["https://a.test", "https://b.test"]},  # widens now
            ("clickGraceSeconds", 600),  # widens
            ("confirm", []),  # widens: fewer confirmations
            ("presenceConfirm", True),
            ("nope", 1),
            ("eval", "yes"),
        ],
    )
    assert narrowed.origins == ("https://a.test",)
    assert narrowed.eval is False and narrowed.presence_confirm is True
    assert narrowed.click_grace_seconds == 30 and narrowed.confirm == DEFAULT_POLICY.confirm
    assert len(ignored) == 5
    assert any("would widen" in r for r in ignored) and any(
        "unknown policy key" in r for r in ignored
    )


@pytest.mark.promise("H4-26")
def test_tab_lifecycle_keys_close_and_fewer_tabs_narrow() -> None:
    """Closing an ended session's tabs and a lower tab cap are narrowings (free); turning the
    closing off again or raising the cap widens (signed, with presence)."""
    narrowed, ignored = restrict_explained(
        DEFAULT_POLICY, [("closeTabsOnSessionEnd", True), ("maxAgentTabs", 5)]
    )
    assert narrowed.close_tabs_on_session_end is True and narrowed.max_agent_tabs == 5
    assert ignored == ()
    assert is_narrowing(narrowed, "maxAgentTabs", 4)
    assert not is_narrowing(narrowed, "closeTabsOnSessionEnd", False)
    assert not is_narrowing(narrowed, "maxAgentTabs", 6)
    assert not is_narrowing(DEFAULT_POLICY, "maxAgentTabs", 0)  # out of range: invalid
    assert is_wider(DEFAULT_POLICY, narrowed)


@pytest.mark.promise("H4-45")
def test_dialog_arming_on_widens_and_off_is_free() -> None:
    """Arming an answer to a dialog nobody saw yet is a grant: turning it on needs the signed
    path, a restriction turning it on is ignored, and turning it off is a free narrowing."""
    assert DEFAULT_POLICY.dialog_arming is False
    assert not is_narrowing(DEFAULT_POLICY, "dialogArming", True)
    still, ignored = restrict_explained(DEFAULT_POLICY, [("dialogArming", True)])
    assert still.dialog_arming is False
    assert ignored == ("restriction 0 (dialogArming): would widen the policy",)
    armed = apply_set(DEFAULT_POLICY, {"dialogArming": True})
    assert is_wider(armed, DEFAULT_POLICY)
    assert is_narrowing(armed, "dialogArming", False)
    assert restrict(armed, [("dialogArming", False)]).dialog_arming is False
    assert not is_narrowing(armed, "dialogArming", "false")  # invalid: not narrowing


@pytest.mark.promise("H4-50")
def test_page_fetch_on_widens_and_off_is_free() -> None:
    """page_fetch sends requests with the page's cookies: on is the signed widening, a
    restriction turning it on is ignored, off is free."""
    assert DEFAULT_POLICY.page_fetch is False
    assert not is_narrowing(DEFAULT_POLICY, "pageFetch", True)
    still, ignored = restrict_explained(DEFAULT_POLICY, [("pageFetch", True)])
    assert still.page_fetch is False
    assert ignored == ("restriction 0 (pageFetch): would widen the policy",)
    on = apply_set(DEFAULT_POLICY, {"pageFetch": True})
    assert is_wider(on, DEFAULT_POLICY)
    assert restrict(on, [("pageFetch", False)]).page_fetch is False


@pytest.mark.promise("H4-83")
def test_agent_tabs_audible_on_widens_and_off_is_free() -> None:
    """Agents' tabs are muted by default; leaving them audible (a page the agent opened may be
    heard by the person) is the signed widening, a restriction turning it on is ignored, off is
    free; an older record without the key reads as muted."""
    assert DEFAULT_POLICY.agent_tabs_audible is False and DENY_POLICY.agent_tabs_audible is False
    assert validate_values({}).agent_tabs_audible is False
    assert not is_narrowing(DEFAULT_POLICY, "agentTabsAudible", True)
    still, ignored = restrict_explained(DEFAULT_POLICY, [("agentTabsAudible", True)])
    assert still.agent_tabs_audible is False
    assert ignored == ("restriction 0 (agentTabsAudible): would widen the policy",)
    audible = apply_set(DEFAULT_POLICY, {"agentTabsAudible": True})
    assert is_wider(audible, DEFAULT_POLICY)
    assert restrict(audible, [("agentTabsAudible", False)]).agent_tabs_audible is False
    with pytest.raises(PolicyError):
        validate_values({"agentTabsAudible": "yes"})


def test_apply_set_may_widen_but_validates() -> None:
    wide = apply_set(DEFAULT_POLICY, {"eval": True, "origins": ["https://A.test:443"]})
    assert wide.eval and wide.origins == ("https://a.test",)
    assert is_wider(wide, DEFAULT_POLICY) and not is_wider(DEFAULT_POLICY, wide)
    with pytest.raises(PolicyError):
        apply_set(DEFAULT_POLICY, {"bogus": 1})


# --- the lattice, by property ----------------------------------------------------------------

ORIGINS = ["https://a.test", "https://b.test", "http://127.0.0.1", "http://127.0.0.1.evil.test"]
ACTIONS = ["submit", "link_click", "press", "select", "tab_close", "navigate"]

_values: dict[str, st.SearchStrategy[Any]] = {
    "origins": st.lists(st.sampled_from(ORIGINS), max_size=4),
    "confirm": st.lists(st.sampled_from(ACTIONS), max_size=6),
    "eval": st.booleans(),
    "upload": st.booleans(),
    "passwordFill": st.booleans(),
    "clickGraceSeconds": st.integers(0, 600),
    "confirmTimeoutSeconds": st.integers(5, 600),
    "presenceConfirm": st.booleans(),
    "closeTabsOnSessionEnd": st.booleans(),
    "maxAgentTabs": st.integers(1, 200),
    "dialogArming": st.booleans(),
    "pageFetch": st.booleans(),
    "consoleCapture": st.booleans(),
    "networkCapture": st.booleans(),
    "provenance": st.sampled_from(["strict", "confirm", "off"]),
    "agentTabsAudible": st.booleans(),
    "toolFamilies": st.lists(st.sampled_from(["input", "layout", "read", "devtools", "files"])),
}
policies = st.fixed_dictionaries(_values).map(validate_values)
_garbage = st.one_of(st.none(), st.text(max_size=5), st.integers(-5, 1000), st.booleans())
restriction = st.one_of(
    st.sampled_from(POLICY_KEYS).flatmap(lambda k: st.tuples(st.just(k), _values[k])),
    st.tuples(st.sampled_from([*POLICY_KEYS, "bogus"]), _garbage),
)
restrictions = st.lists(restriction, max_size=12)


@given(policies, restrictions)
@pytest.mark.promise("TR-04")
def test_restrict_is_never_wider_than_its_baseline(base: Policy, rs: list[Any]) -> None:
    assert not is_wider(restrict(base, rs), base)


@given(policies, restrictions, restrictions)
@pytest.mark.promise("TR-04")
def test_more_restrictions_never_widen(base: Policy, first: list[Any], more: list[Any]) -> None:
    assert not is_wider(restrict(base, first + more), restrict(base, first))


@given(
    policies,
    st.sampled_from(POLICY_KEYS).flatmap(lambda k: st.tuples(st.just(k), _values[k])),
    restrictions,
)
def test_apply_set_then_restrict(base: Policy, change: tuple[str, Any], rs: list[Any]) -> None:
    key, value = change
    changed = apply_set(base, {key: value})
    assert not is_wider(restrict(changed, rs), changed)
    # is_narrowing agrees with the order: narrowing exactly when the change widens nothing
    assert is_narrowing(base, key, value) == (not is_wider(changed, base))
    if is_narrowing(base, key, value):
        assert restrict(base, [change]) == changed


@given(policies, policies)
def test_is_wider_is_a_partial_order(a: Policy, b: Policy) -> None:
    assert not is_wider(a, a)
    if not is_wider(a, b) and not is_wider(b, a):
        assert a == b


@pytest.mark.promise("H4-53")
def test_provenance_loosening_widens_and_tightening_is_free() -> None:
    """strict < confirm < off: towards off needs the signed path, towards strict is a free
    restriction; any other word is invalid (and so never narrowing)."""
    assert DEFAULT_POLICY.provenance == "confirm"
    assert is_narrowing(DEFAULT_POLICY, "provenance", "strict")
    assert not is_narrowing(DEFAULT_POLICY, "provenance", "off")
    still, ignored = restrict_explained(DEFAULT_POLICY, [("provenance", "off")])
    assert still.provenance == "confirm"
    assert ignored == ("restriction 0 (provenance): would widen the policy",)
    assert restrict(DEFAULT_POLICY, [("provenance", "strict")]).provenance == "strict"
    off = apply_set(DEFAULT_POLICY, {"provenance": "off"})
    assert is_wider(off, DEFAULT_POLICY) and not is_wider(DEFAULT_POLICY, off)
    assert not is_narrowing(off, "provenance", "Strict")
    with pytest.raises(PolicyError):
        validate_values({"provenance": "loose"})
    assert DENY_POLICY.provenance == "strict"
