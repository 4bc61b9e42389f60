"""`tabwarden policy set origins=https://*.example.com`: a subdomain approval is signed like any
widening (the typed phrase) and shown in plain words before and after; a wildcard over a public
suffix, a bare `*` or a mid-label `*` is refused with `policy_invalid` and a hint before any
ceremony, and nothing is written; narrowing it is free (docs/adr/0019)."""

from __future__ import annotations

import sys

import pytest

from tabwarden.cli import ceremony
from tests.cli.world import World
from tests.pty_cli import PROMPT

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="pty/session semantics: Linux")

WORDS = "example.com and every subdomain (https)"


def test_a_subdomain_approval_is_signed_with_the_phrase_and_shown_in_plain_words(
    paired: World,
) -> None:
    child = paired.spawn("policy", "set", "origins=https://*.Example.com")
    child.expect(PROMPT)
    child.send(ceremony.phrase_for("policy set") + "\n")
    status, output = child.finish()
    assert status == 0, output
    assert f"https://*.example.com: {WORDS}".encode() in output  # shown before it is signed
    assert paired.json("policy", "show", "--json")["policy"]["origins"] == ["https://*.example.com"]
    shown = paired.run("policy", "show").stdout.decode()
    assert f"https://*.example.com: {WORDS}" in shown

    # Narrowing to one subdomain inside it is free; widening back is not.
    proc = paired.run("policy", "restrict", "origins=https://shop.example.com")
    assert proc.returncode == 0, proc.stderr.decode()
    assert paired.json("policy", "show", "--json")["policy"]["origins"] == [
        "https://shop.example.com"
    ]
    before = paired.trust_file.read_bytes()
    proc = paired.run("policy", "restrict", "origins=https://*.example.com")
    assert proc.returncode != 0 and b"widen" in proc.stderr
    assert paired.trust_file.read_bytes() == before


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("https://*.com", b"com is a public suffix"),
        ("https://*.co.uk", b"co.uk is a public suffix"),
        ("https://*.github.io", b"github.io is a public suffix"),
        ("*", b"leftmost label"),
        ("https://*.*.example.com", b"leftmost label"),
        ("https://a*.example.com", b"leftmost label"),
        ("https://*.bücher.de", b"punycode"),
    ],
)
@pytest.mark.promise("H4-85")
def test_a_bad_wildcard_is_refused_before_any_ceremony_and_nothing_is_written(
    paired: World, value: str, why: bytes
) -> None:
    before = paired.trust_file.read_bytes()
    child = paired.spawn("policy", "set", f"origins={value}")
    status, output = child.finish()
    assert status == 2, output
    assert b"policy_invalid" in output and why in output
    assert b"https://*.example.com" in output  # the hint names the right form
    assert PROMPT not in output  # refused before the phrase is asked
    assert paired.trust_file.read_bytes() == before
    proc = paired.run("policy", "restrict", f"origins={value}")
    assert proc.returncode != 0
    assert paired.trust_file.read_bytes() == before
