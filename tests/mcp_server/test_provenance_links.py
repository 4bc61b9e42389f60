"""A snapshot row's link address in the provenance ledger (docs/adr/0011-link-hrefs-as-lineage.md):
recorded under the page's origin as the whole URL only. Going there from another origin's page is
lineage from that page (asked, as an address the page wrote); following it on the page's own
origin is the page's own navigation (no lineage, nothing audited); the same path, host or query
on another origin of the host is not what the link said. Its text around it (the row's name) is
recorded as before."""

from __future__ import annotations

from tabwarden.mcp_server.provenance import Ledger

ONE = "http://127.0.0.1:3000"
TWO = "http://127.0.0.1:8080"
EVIL = "http://evil.test"


def _snapshot(*rows: tuple[str, str]) -> dict[str, object]:
    # As ToolCalls records a reply: without its url (the bridge's report, not page content).
    return {
        "title": "Local build",
        "snapshot": [
            {"ref": f"@e{i}", "role": "link", "name": name, "tag": "a", "href": href}
            for i, (name, href) in enumerate(rows, 1)
        ],
        "truncated": False,
    }


def test_the_same_path_on_another_origin_of_the_host_carries_no_link_lineage() -> None:
    ledger = Ledger()
    ledger.record(ONE, _snapshot(("Sign in", f"{ONE}/app/login?next=%2Fhome")), 1.0)
    assert ledger.lineage(f"{TWO}/app/login?next=%2Fhome") == []
    assert ledger.lineage(f"{TWO}/app/login") == []
    assert ledger.lineage("/app/login") == []


def test_following_a_link_on_its_pages_own_origin_is_not_lineage() -> None:
    ledger = Ledger()
    ledger.record(ONE, _snapshot(("Guide", f"{ONE}/docs/v2/guide.html")), 1.0)
    assert ledger.lineage(f"{ONE}/docs/v2/guide.html") == []


def test_a_link_to_another_origin_is_lineage_from_the_page_that_showed_it() -> None:
    ledger = Ledger()
    href = f"{EVIL}/collect?to=mallory-account-77"
    ledger.record(ONE, _snapshot(("Continue", href)), 1.0)
    for argument in (href, f"{href}&amount=1000", href.upper().replace("HTTP://", "http://")):
        found = ledger.lineage(argument)
        assert [(e.item.kind, e.source_origin) for e in found] == [("link", ONE)], argument
    # Typed elsewhere (not an address on the page's origin), the whole link is lineage too.
    assert [e.item.kind for e in ledger.lineage(f"see {href}")] == ["link"]


def test_a_rows_other_strings_are_recorded_as_before() -> None:
    ledger = Ledger()
    ledger.record(ONE, _snapshot(("Token Zx81kq2PLmQ9 here", f"{ONE}/a")), 1.0)
    assert [e.item.kind for e in ledger.lineage(f"{TWO}/x?t=Zx81kq2PLmQ9")] == ["token"]


def test_an_href_outside_a_row_is_read_as_any_page_text() -> None:
    # page_scrape's attributes are not snapshot rows (no ref): their href is page text.
    ledger = Ledger()
    ledger.record(ONE, {"items": [{"text": "x", "attrs": {"href": f"{ONE}/app/login"}}]}, 1.0)
    assert "path" in [e.item.kind for e in ledger.lineage(f"{TWO}/app/login")]
