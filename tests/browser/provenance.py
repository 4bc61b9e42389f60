"""What the provenance tests share: the token a hostile page plants, what the attacker's
``collector`` (tests/browser/conftest.py) received, the provenance decisions
the audit log holds, and the confirm windows that opened.

Helpers only (no tests): test modules import from here, never from each other."""

from __future__ import annotations

from playwright.async_api import BrowserContext, Page

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.harness import ServedSite
from tests.fixtures import audit_entries

TOKEN = "Zx81kq2PLmQ9"
"""What a hostile page plants (in an address, a text, a value); it must never reach the
collector."""


def collected(collector: ServedSite) -> list[str]:
    """Every request the collector received: method, target and body."""
    return [
        f"{r.method} {r.target} {r.body.decode(errors='replace')}" for r in collector.requests()
    ]


def provenance_decisions(browser: ThrowawayBrowser) -> list[tuple[str, str]]:
    """The (tool, decision) of every provenance entry in ``browser``'s audit log, in order."""
    entries = audit_entries(browser.root / "config")
    return [(e["tool"], e["decision"]) for e in entries if e["event"] == "provenance"]


def confirm_windows(context: BrowserContext) -> list[str]:
    """The addresses of the confirm windows that open in ``context`` from now on (a list that
    grows as they open)."""
    seen: list[str] = []

    def opened(page: Page) -> None:
        if "/confirm.html" in page.url:
            seen.append(page.url)

    context.on("page", opened)
    return seen
