"""Subdomain approvals (``https://*.example.com``): what is refused, what they approve, how they
order, and that the extension's suffix list is the vendored one (docs/adr/0019)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tabwarden.trust import suffixes
from tabwarden.trust.policy import (
    Policy,
    PolicyError,
    apply_set,
    approves,
    describe_approval,
    is_narrowing,
    is_wider,
    normalise_approval,
    restrict,
    validate_values,
)

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("https://*.example.com", "https://*.example.com"),
        ("HTTPS://*.Example.COM:443", "https://*.example.com"),
        ("http://*.app.localhost:8123", "http://*.app.localhost:8123"),
        ("https://*.sub.example.co.uk", "https://*.sub.example.co.uk"),
        ("https://*.example.co.uk", "https://*.example.co.uk"),
        ("https://*.xn--bcher-kva.de", "https://*.xn--bcher-kva.de"),
        ("https://*.www.ck", "https://*.www.ck"),  # an exception rule: www.ck is registrable
    ],
)
def test_a_subdomain_approval_over_an_owned_domain_is_normalised(raw: str, expected: str) -> None:
    assert normalise_approval(raw) == expected


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ("*", "leftmost label"),
        ("https://*", "leftmost label"),
        ("https://*.", "leftmost label"),
        ("https://*.*.example.com", "leftmost label"),
        ("https://a*.example.com", "leftmost label"),
        ("https://*example.com", "leftmost label"),
        ("https://www.*.example.com", "leftmost label"),
        ("https://*.example.com/", "no path"),
        ("https://*.example.com/*", "no path"),
        ("https://user@*.example.com", "leftmost label"),
        ("https://*.com", "com is a public suffix"),
        ("https://*.co.uk", "co.uk is a public suffix"),
        ("https://*.github.io", "github.io is a public suffix"),
        ("https://*.localhost", "localhost is a public suffix"),
        ("https://*.test", "test is a public suffix"),
        ("https://*.foo.ck", "foo.ck is a public suffix"),  # a wildcard rule: *.ck
        ("https://*.amazonaws.com", "holds public suffixes"),
        ("https://*.kawasaki.jp", "holds public suffixes"),
        ("https://*.bücher.de", "punycode"),
        ("https://*.127.0.0.1", "IP address"),
        ("https://*.[::1]", "IP address"),
        ("ftp://*.example.com", "only http and https"),
        ("https://*.example.com:0", "port out of range"),
        ("https://*.ex_ample.com", "not a valid host"),
    ],
)
@pytest.mark.promise("H4-85")
def test_a_bad_subdomain_approval_is_refused_with_a_code_and_a_hint(raw: str, why: str) -> None:
    base = validate_values({"origins": ["https://a.test"]})
    with pytest.raises(PolicyError) as info:
        normalise_approval(raw)
    assert info.value.code == "policy_invalid"
    assert why in str(info.value)
    assert "*.example.com" in info.value.hint and "public suffix" in info.value.hint
    # The attacker's widening through any path is refused, and nothing changed:
    with pytest.raises(PolicyError):
        apply_set(base, {"origins": ["https://a.test", raw]})
    assert not is_narrowing(base, "origins", [raw])
    assert restrict(base, [("origins", [raw])]) == base


APPROVAL = "https://*.example.com"


@pytest.mark.parametrize(
    ("origin", "approved"),
    [
        ("https://example.com", True),  # as Chrome's https://*.example.com/* does
        ("https://www.example.com", True),
        ("https://a.b.example.com", True),
        ("https://evilexample.com", False),
        ("https://example.com.evil.test", False),
        ("https://www.example.com.evil.test", False),
        ("https://example.org", False),
        ("https://com", False),
        ("http://www.example.com", False),
        ("https://www.example.com:8443", False),
        ("https://*.example.com", False),
    ],
)
@pytest.mark.promise("H4-85")
def test_a_subdomain_approval_approves_its_domain_and_below_only(
    origin: str, approved: bool
) -> None:
    assert approves([APPROVAL], origin) is approved


def test_a_port_is_part_of_a_subdomain_approval() -> None:
    assert approves(["http://*.app.localhost:8123"], "http://x.app.localhost:8123")
    assert not approves(["http://*.app.localhost:8123"], "http://x.app.localhost")
    assert not approves(["http://*.app.localhost:8123"], "http://x.app.localhost:8124")


@pytest.mark.promise("H4-85")
def test_adding_a_wildcard_widens_and_narrowing_it_is_free() -> None:
    exact = validate_values({"origins": ["https://www.example.com"]})
    wild = apply_set(exact, {"origins": [APPROVAL]})
    assert is_wider(wild, exact)
    assert not is_narrowing(exact, "origins", [APPROVAL])
    # narrower inside the wildcard: an exact origin or a deeper wildcard under it is free
    assert is_narrowing(wild, "origins", ["https://shop.example.com"])
    assert is_narrowing(wild, "origins", ["https://*.shop.example.com"])
    assert restrict(wild, [("origins", ["https://shop.example.com"])])["origins"] == (
        "https://shop.example.com",
    )
    # a parent or sibling wildcard, another scheme or port is not inside it
    for wider in (
        "https://*.example.org",
        "http://*.example.com",
        "https://*.example.com:8443",
        "https://evilexample.com",
    ):
        assert not is_narrowing(wild, "origins", [wider]), wider
        assert restrict(wild, [("origins", [wider])]) == wild


def test_an_exact_origin_under_a_wildcard_is_folded_into_it() -> None:
    p = validate_values({"origins": ["https://a.example.com", APPROVAL, "https://*.b.example.com"]})
    assert p["origins"] == (APPROVAL,)


def test_a_wildcard_is_described_in_plain_words() -> None:
    assert describe_approval(APPROVAL) == "example.com and every subdomain (https)"
    assert describe_approval("http://*.app.localhost:8123") == (
        "app.localhost and every subdomain (http, port 8123)"
    )
    assert describe_approval("https://example.com") == "https://example.com"


# --- by property -------------------------------------------------------------------------------

_label = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,6}[a-z0-9])?", fullmatch=True)
_bases = st.sampled_from(["example.com", "example.co.uk", "shop.example.com", "app.localhost"])
_hosts = st.one_of(
    st.lists(_label, min_size=1, max_size=3).map(".".join),
    st.tuples(st.lists(_label, max_size=2), _bases).map(lambda t: ".".join([*t[0], t[1]])),
    st.tuples(_bases, _label).map(lambda t: f"{t[0]}.{t[1]}"),
    st.tuples(_label, _bases).map(lambda t: f"{t[0]}{t[1]}"),
)
_schemes = st.sampled_from(["http", "https"])
_ports = st.sampled_from(["", ":8443", ":80", ":443"])


def _registrable(host: str) -> str:
    labels = host.split(".")
    for i in range(len(labels) - 1, -1, -1):
        candidate = ".".join(labels[i:])
        if not suffixes.is_public_suffix(candidate):
            return candidate
    return host


@pytest.mark.promise("H4-85")
@given(_schemes, _bases, _ports, _schemes, _hosts, _ports)
def test_a_wildcard_never_approves_outside_its_domain_scheme_or_port(
    scheme: str, base: str, port: str, o_scheme: str, o_host: str, o_port: str
) -> None:
    approval = normalise_approval(f"{scheme}://*.{base}{port}")
    try:
        origin = normalise_approval(f"{o_scheme}://{o_host}{o_port}")
    except PolicyError:
        return
    if approves([approval], origin):
        assert origin.split("://")[0] == approval.split("://")[0]  # the same scheme
        o_name, _, o_port_n = origin.split("://")[1].partition(":")
        assert o_port_n == approval.split("://")[1].partition(":")[2]  # the same port
        assert o_name == base or o_name.endswith("." + base)
        assert _registrable(o_name) == _registrable(base)


_entries = st.sampled_from(
    [
        "https://*.example.com",
        "https://*.shop.example.com",
        "https://shop.example.com",
        "https://example.com",
        "http://*.example.com",
        "https://*.example.com:8443",
        "https://evilexample.com",
        "https://*.example.org",
    ]
)
_policies = st.lists(_entries, max_size=4).map(lambda o: validate_values({"origins": o}))


@given(_policies, _policies)
def test_wildcard_policies_order_as_a_partial_order(a: Policy, b: Policy) -> None:
    assert not is_wider(a, a)
    if not is_wider(a, b) and not is_wider(b, a):
        assert a == b


@given(_policies, st.lists(_entries, max_size=4))
def test_a_restriction_of_wildcards_never_widens(base: Policy, value: list[Any]) -> None:
    assert not is_wider(restrict(base, [("origins", value)]), base)


# --- the list ----------------------------------------------------------------------------------


def test_the_list_is_vendored_with_its_licence_and_carried_by_the_wheel() -> None:
    dat = REPO / "trust" / "public_suffix_list.dat"
    head = dat.read_text("utf-8")[:2000]
    assert "Mozilla Public" in head and "MPL-2.0" in head
    pyproject = (REPO / "pyproject.toml").read_text("utf-8")
    assert '"tabwarden.trust" = ["py.typed", "public_suffix_list.dat"]' in pyproject
    assert len(suffixes.rules().plain) > 5000


def test_the_extensions_suffix_module_is_what_the_generator_writes() -> None:
    proc = subprocess.run(  # noqa: S603 (this interpreter and a module of this checkout)
        [sys.executable, "-m", "tabwarden.trust.suffixes", "--check", "--root", str(REPO)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr


def test_the_check_fails_on_a_stale_module(tmp_path: Path) -> None:
    target = tmp_path / suffixes.JS_PATH
    target.parent.mkdir(parents=True)
    target.write_text(suffixes.js_module().replace(" com ", " ", 1), "utf-8")
    assert suffixes.main(["--check", "--root", str(tmp_path)]) == 1
    assert suffixes.main(["--write", "--root", str(tmp_path)]) == 0
    assert suffixes.main(["--check", "--root", str(tmp_path)]) == 0


# --- the host's origin decision ------------------------------------------------------------------


def test_the_host_decides_a_subdomain_under_a_signed_wildcard_is_approved_and_writes_nothing(
    tmp_path: Path,
) -> None:
    from tabwarden.trust import operations
    from tabwarden.trust.operations import TerminalPhrase, WindowClick
    from tests.fixtures import trust_world

    world = trust_world(tmp_path)
    operations.widen(world.ctx, TerminalPhrase(action="test"), {"origins": [APPROVAL]}, 1)
    before = world.record_bytes()
    for inside in ("https://example.com", "https://shop.example.com"):
        assert operations.decide_origin(world.ctx, "chromium", inside).ask == "none", inside
    for outside in (
        "https://evilexample.com",
        "https://example.com.evil.test",
        "http://a.example.com",
    ):
        assert operations.decide_origin(world.ctx, "chromium", outside).ask == "click", outside
    assert world.record_bytes() == before
    # An approval the wildcard already covers signs nothing new; a wildcard is never "approved"
    # through the origin gate's path (that takes exact origins only).
    operations.approve_origin(
        world.ctx, WindowClick(browser="chromium"), "https://a.example.com", 2
    )
    assert operations.require_readable(world.ctx).policy["origins"] == (APPROVAL,)
    assert operations.decide_origin(world.ctx, "chromium", "https://b.example.com").ask == "none"
    with pytest.raises(PolicyError):
        operations.decide_origin(world.ctx, "chromium", "https://*.example.org")
