"""Rollback after a host restart, for real (an old record put back must not be served): a paired
browser (code + a tap of Chrome's virtual authenticator), an agent driving the fixture site at the
record's epoch; then a same-user attacker stops the host, puts the older trust.json **and its seal**
back (the seal beside the host key is as private as the key: an attacker who can write one can write
the other) and kills the host so Chrome starts a fresh one. From the files alone that host could not
tell; the extension is the witness: its `hello` says the highest epoch this browser has seen, the
host finds the record older, latches the kill switch and refuses everything, and the popup and
options page show "Trust record rolled back" — until the person confirms the record at the terminal
(`tabwarden unkill`), which writes a newer epoch than any seen."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import psutil
import pytest

from tabwarden.cli import ceremony
from tabwarden.cli.browser import ThrowawayBrowser
from tabwarden.manifests import EXTENSION_ID
from tabwarden.trust.gate import TrustGate
from tabwarden.trust.ratchet import SEAL_FILE_NAME
from tabwarden.trust.verify import Effective
from tests.browser.harness import confirm_page_presence, mcp_client, ok, page_at, press
from tests.browser.paired import paired_options_page, provision_for_pairing
from tests.browser.webauthn import copy_credentials
from tests.fakes import tool_error
from tests.pty_cli import PROMPT, spawn_cli

pytestmark = [pytest.mark.browser, pytest.mark.pooled, pytest.mark.deadline(600)]

WAIT_S = 60.0  # deadline of each wait on a condition; generous for a busy 2-core machine
POPUP = f"chrome-extension://{EXTENSION_ID}/popup.html"
SHOTS = Path("/tmp/shots-d")


def _hosts(browser: ThrowawayBrowser) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline", "environ"]):
        cmd = proc.info.get("cmdline") or []
        env = proc.info.get("environ") or {}
        if "tabwarden" in cmd and "host" in cmd:
            if env.get("TABWARDEN_RUNTIME_DIR") == str(browser.root / "run"):
                found.append(proc)
    return found


def _fresh_read(browser: ThrowawayBrowser) -> Effective:
    """The record as a process starting now reads it (a long-lived reader would call the older
    epoch tampering: it saw the newer one)."""
    return TrustGate({"TABWARDEN_CONFIG_DIR": str(browser.config)}).current()


def _put_back(record: Path, old: bytes) -> None:
    """What the attacker does: an atomic replace with the older bytes, mode 0600 as before."""
    fd, tmp = tempfile.mkstemp(dir=record.parent)
    with os.fdopen(fd, "wb") as f:
        f.write(old)
    os.chmod(tmp, 0o600)
    os.replace(tmp, record)


def _restrict(browser: ThrowawayBrowser, setting: str) -> None:
    """`tabwarden policy restrict` at the terminal (free: narrowing needs no person)."""
    done = subprocess.run(  # noqa: S603 (a fixed argv: our interpreter and our CLI)
        [sys.executable, "-m", "tabwarden", "policy", "restrict", setting],
        capture_output=True,
        text=True,
        env=browser.env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


async def _code_becomes(agent: Any, tool: str, args: dict[str, Any], want: str | None) -> None:
    """Poll a read-only tool until its error code is ``want`` (None: it succeeds)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_S
    got: str | None = "never called"
    while loop.time() < deadline:
        got = (tool_error(await agent.call_tool(tool, args)) or {}).get("code")
        if got == want:
            return
        await asyncio.sleep(0.25)
    raise AssertionError(f"{tool} answered {got!r}, never {want!r}")


async def _banner(page: Any, shown: bool) -> str:
    await page.wait_for_function(
        "(shown) => { const b = document.getElementById('rollback');"
        " return !!b && b.hidden === !shown && (!shown || b.textContent.length > 0); }",
        arg=shown,
        timeout=WAIT_S * 1000,
    )
    return str(await page.text_content("#rollback") or "")


def _site_pages(context: Any, site: str) -> list[Any]:
    return [p for p in context.pages if p.url.startswith(site)]


@pytest.mark.promise("PR-02", "BP-06", "BP-07")
async def test_a_record_and_seal_rolled_back_together_are_caught_by_the_extensions_witness(
    browser: ThrowawayBrowser, site: str
) -> None:
    gate = provision_for_pairing(browser, [site])
    record = gate.path
    seal = browser.config / SEAL_FILE_NAME
    SHOTS.mkdir(exist_ok=True)

    async with paired_options_page(browser) as paired:
        context, agent = paired.context, paired.agent
        # The record as the person paired it, and its seal: what the attacker keeps a copy of.
        older, older_seal = record.read_bytes(), seal.read_bytes()
        older_epoch = gate.current().epoch
        tab = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]
        await ok(agent, "page_click", {"tabId": tab, "selector": "#plain"})

        # The person narrows something: a newer record, and the agent works at its epoch.
        _restrict(browser, "clickGraceSeconds=10")
        seen_epoch = gate.current().epoch
        assert seen_epoch > older_epoch
        await ok(agent, "page_click", {"tabId": tab, "selector": "#plain"})
        state = await ok(agent, "page_get_state", {"tabId": tab, "selector": "#out"})
        assert state["text"] == "clicked:2"
        page = await page_at(context, "the agent's tab", lambda url: url.startswith(site))

        # The attack: stop the host, put the older record and its seal back, kill the host.
        [host] = _hosts(browser)
        host.send_signal(signal.SIGSTOP)
        _put_back(seal, older_seal)
        _put_back(record, older)
        host.send_signal(signal.SIGKILL)
        host.wait(WAIT_S)

        # A fresh host starts when the extension reconnects; the extension's hello says it
        # has seen a later epoch, so the host refuses the older record.
        async with mcp_client(browser) as agent2:
            # Until the fresh host has heard the extension, nothing vouches for the newer
            # epoch; every call is refused from then on (bridge_status too: the gate is
            # first), at hop 1 already.
            loop = asyncio.get_running_loop()
            deadline = loop.time() + WAIT_S
            while True:
                refused = tool_error(await agent2.call_tool("tab_open", {"url": f"{site}/page2"}))
                # Refused by the gate (the reason is in the log and in `status`), or, had a
                # call beaten the extension's hello to the fresh host, by the extension.
                if refused is not None and refused["code"] in {
                    "trust_unreadable",
                    "trust_rolled_back",
                }:
                    break
                assert loop.time() < deadline, f"never refused as rolled back: {refused}"
                await asyncio.sleep(0.25)
            assert len(_hosts(browser)) == 1
            # Nothing happened in the browser: no tab opened, the page is as it was.
            assert len(_site_pages(context, site)) == 1
            assert await page.text_content("#out") == "clicked:2"
            # ...and a process started now is refused too: the kill switch is latched.
            fresh = _fresh_read(browser)
            assert fresh.refused is not None and "rolled back" in fresh.refused, fresh
            assert fresh.killed
            assert gate.kill_latch.exists()

            # The popup and the options page say so, with the two ways on.
            popup = await context.new_page()
            await popup.set_viewport_size({"width": 380, "height": 420})
            await popup.goto(POPUP)
            banner = await _banner(popup, shown=True)
            assert banner.startswith("Trust record rolled back"), banner
            commands = await popup.eval_on_selector_all(
                "#rollback code", "(els) => els.map((e) => e.textContent)"
            )
            assert commands == ["tabwarden unkill", "tabwarden pair --reset"], commands
            assert f"epoch {older_epoch}, older than epoch {seen_epoch}" in banner, banner
            await popup.screenshot(path=str(SHOTS / "popup-rolled-back.png"))
            options = paired.page
            await options.reload()
            banner = await _banner(options, shown=True)
            assert banner.startswith("Trust record rolled back"), banner
            await options.screenshot(path=str(SHOTS / "options-rolled-back.png"))

            # The person confirms the record as it is at the terminal (`tabwarden unkill`:
            # the typed phrase, and a tap in the window, since this browser holds an
            # enrolled key): a newer epoch than any seen, the latch released.
            child = spawn_cli(browser.env, "unkill")
            await asyncio.to_thread(child.expect, PROMPT)
            child.send(ceremony.phrase_for("unkill") + "\n")
            window = await confirm_page_presence(context)
            await copy_credentials(paired.cdp, paired.authenticator, context, window)
            await press(window, "#tap")
            status, output = await asyncio.to_thread(child.finish)
            assert status == 0 and b"accepted as it is now" in output, output
            assert _fresh_read(browser).refused is None
            assert _fresh_read(browser).epoch > seen_epoch
            await _code_becomes(agent2, "tab_list", {}, None)
            opened = await ok(agent2, "tab_open", {"url": f"{site}/page2"})
            assert opened["tab"]["url"].startswith(site)
            await popup.reload()
            await _banner(popup, shown=False)
            await options.reload()
            await _banner(options, shown=False)
            await popup.screenshot(path=str(SHOTS / "popup-cleared.png"))


def _kill_at_the_terminal(browser: ThrowawayBrowser) -> None:
    """`tabwarden kill` typed in a terminal (free: removing power never needs the person)."""
    done = subprocess.run(  # noqa: S603 (a fixed argv: our interpreter and our CLI)
        [sys.executable, "-m", "tabwarden", "kill"],
        capture_output=True,
        text=True,
        env=browser.env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


async def _witnessed(context: Any, epoch: int) -> None:
    """Until the extension's own ratchet (chrome.storage.local, worker/epoch-ratchet.js) records
    `epoch` for the pinned key: read from its service worker, a condition with a deadline."""
    [worker] = context.service_workers or [await context.wait_for_event("serviceworker")]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_S
    seen: Any = None
    while loop.time() < deadline:
        seen = await worker.evaluate(
            "async () => Object.values((await chrome.storage.local.get('epochSeen')).epochSeen"
            " ?? {}).map((e) => e.epoch)"
        )
        if epoch in seen:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"the extension never witnessed epoch {epoch}: it holds {seen}")


@pytest.mark.promise("BP-07")
async def test_a_kill_typed_while_the_agent_is_idle_is_witnessed_and_a_rollback_after_it_is_caught(
    browser: ThrowawayBrowser, site: str
) -> None:
    """A kill while idle: the person types `tabwarden kill` while no agent is calling. The host's
    change notice states the killed record's epoch, so the extension witnesses it with no request at
    all. A same-user attacker then stops the host, puts the record and its seal from before the kill
    back and kills the host: the fresh host hears from the extension that it has seen the kill's
    epoch, and the agent's next call is refused; nothing happens in the page."""
    gate = provision_for_pairing(browser, [site])
    record = gate.path
    seal = browser.config / SEAL_FILE_NAME

    async with paired_options_page(browser) as paired:
        context, agent = paired.context, paired.agent
        tab = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]
        await ok(agent, "page_click", {"tabId": tab, "selector": "#plain"})
        page = await page_at(context, "the agent's tab", lambda url: url.startswith(site))
        # What the attacker keeps: the record and seal as they were before the kill.
        before_kill, before_kill_seal = record.read_bytes(), seal.read_bytes()
        before_epoch = gate.current().epoch

        # The agent is idle; the person kills. No request follows.
        _kill_at_the_terminal(browser)
        killed = _fresh_read(browser)
        assert killed.killed and killed.epoch > before_epoch
        await _witnessed(context, killed.epoch)

        # The attack: stop the host, put the pre-kill record and its seal back, kill it.
        [host] = _hosts(browser)
        host.send_signal(signal.SIGSTOP)
        _put_back(seal, before_kill_seal)
        _put_back(record, before_kill)
        host.send_signal(signal.SIGKILL)
        host.wait(WAIT_S)
        # From the files alone the kill is gone: a process starting now reads no kill.
        assert not _fresh_read(browser).killed

        async with mcp_client(browser) as agent2:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + WAIT_S
            while True:
                result = await agent2.call_tool("tab_open", {"url": f"{site}/page2"})
                refused = tool_error(result)
                assert refused is not None, ("the rolled-back record was served", result)
                # Refused at the extension (an older epoch than it has seen) or, once the
                # fresh host heard its hello, by the host's latch and every reader.
                if refused["code"] in {"trust_unreadable", "trust_rolled_back", "killed"}:
                    break
                assert loop.time() < deadline, f"never refused as rolled back: {refused}"
                await asyncio.sleep(0.25)
            # Nothing happened in the browser: no tab opened, the page is as it was.
            assert len(_site_pages(context, site)) == 1
            assert await page.text_content("#out") == "clicked:1"
            fresh = _fresh_read(browser)
            assert fresh.refused is not None and fresh.killed, fresh
