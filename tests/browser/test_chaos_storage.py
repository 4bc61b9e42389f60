"""Chaos, the trust record's half: a trust write on a full disk and two trust writers
at once, while an agent drives a real page through the real chain (MCP client, `tabwarden mcp`,
the host Chrome launched, the extension in Debian's Chromium).

The config directory (trust record, seal, host key, audit log) lives on a tmpfs of its own that
the test fills to the last byte, as a full home partition would be. For each case: a code from the
table (`storage_full`), nothing lost or half-written (the record and its seal are byte-for-byte
what they were, and a fresh reader finds no tampering), no side effect counted twice (the page's
own click counter), a kill still takes (its latch needs no space), and the next write and the next
call work once space is back.

Needs root (mount) — CI runs as root on this kind of machine; without it the test fails with the
reason rather than skipping, so CI can never pass without having run it."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from playwright.async_api import BrowserContext

from tabwarden.cli.browser import ThrowawayBrowser
from tabwarden.trust.gate import TrustGate
from tabwarden.trust.ratchet import SEAL_FILE_NAME
from tests.browser.harness import code, ok

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

#: Room for the record, seal, key, audit log and their temp files; the rest is filled.
TMPFS_BYTES = 512 * 1024


@contextlib.contextmanager
def _tmpfs() -> Iterator[Path]:
    where = Path(tempfile.mkdtemp(prefix="tabwarden-tmpfs-"))
    mounted = subprocess.run(  # noqa: S603 (a fixed argv)
        ["mount", "-t", "tmpfs", "-o", f"size={TMPFS_BYTES},mode=0700", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        os.rmdir(where)
        pytest.fail(f"this test needs to mount a tmpfs (run as root): {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)  # noqa: S603, S607
        os.rmdir(where)


def _fill(where: Path) -> Path:
    """Fill the file system holding ``where`` to the last byte; the filler's path."""
    filler = where / "filler"
    with open(filler, "wb", buffering=0) as out:
        block = b"\0" * 4096
        while True:
            try:
                out.write(block)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
                block = block[: len(block) // 2]
                if not block:
                    break
    return filler


def _cli(browser: ThrowawayBrowser, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 (our interpreter and our CLI)
        [sys.executable, "-m", "tabwarden", *argv],
        capture_output=True,
        text=True,
        env=browser.env,
        timeout=120,
        check=False,
    )


def _files(config: Path) -> tuple[bytes, bytes]:
    return (config / "trust.json").read_bytes(), (config / SEAL_FILE_NAME).read_bytes()


def _sound(config: Path) -> Any:
    """The record as a process starting now reads it: never tampered."""
    reading = TrustGate({"TABWARDEN_CONFIG_DIR": str(config)}).read()
    assert reading.tamper is None, reading.tamper
    return reading.effective


async def _clicks(agent: Any, tab: int) -> str:
    state = await ok(agent, "page_get_state", {"tabId": tab, "selector": "#out"})
    text: str = state["text"]
    return text


@pytest.fixture
def disk() -> Iterator[Path]:
    """A tmpfs of its own, ``TMPFS_BYTES`` large, for the config directory."""
    with _tmpfs() as where:
        yield where


@pytest.fixture
def browser(disk: Path) -> Iterator[ThrowawayBrowser]:
    """The throwaway browser with its config directory (record, seal, key, audit log) on
    ``disk``; the conftest's ``trusted``, ``context`` and ``agent`` build on it."""
    config = disk / "config"
    config.mkdir(mode=0o700)
    with ThrowawayBrowser(shared_config=config) as on_disk:
        on_disk.install_host()
        yield on_disk


async def _page_counter(context: Any, site: str) -> str:
    """The click counter as the page itself shows it (read outside tabwarden)."""
    for page in context.pages:
        if page.url.startswith(site):
            text: str = await page.evaluate("document.getElementById('out').textContent")
            return text
    raise AssertionError(f"no page of {site} open")


@pytest.mark.promise("TR-09")
async def test_a_trust_write_on_a_full_disk_loses_nothing_and_a_kill_still_takes(
    trusted: ThrowawayBrowser, context: BrowserContext, agent: Client, disk: Path, site: str
) -> None:
    browser, config = trusted, trusted.config
    tab = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]
    await ok(agent, "page_click", {"tabId": tab, "selector": "#plain"})
    assert await _clicks(agent, tab) == "clicked:1"

    filler = _fill(disk)
    before = _files(config)
    narrowed = _cli(browser, "policy", "restrict", "clickGraceSeconds=5")
    assert narrowed.returncode == 3, narrowed.stderr
    assert "storage_full" in narrowed.stderr and "free some space" in narrowed.stderr
    assert "Traceback" not in narrowed.stderr
    assert _files(config) == before  # nothing half-written
    assert not [p.name for p in config.iterdir() if p.name.endswith(".tmp")]
    assert _sound(config).policy.click_grace_seconds != 5

    # The agent is not broken by the full disk (its audit lines are lost, and logged), and
    # its click happens once.
    await ok(agent, "page_click", {"tabId": tab, "selector": "#plain"})
    assert await _clicks(agent, tab) == "clicked:2"

    # Space back: the same write lands, and the next call works.
    filler.unlink()
    narrowed = _cli(browser, "policy", "restrict", "clickGraceSeconds=5")
    assert narrowed.returncode == 0, narrowed.stderr
    assert _sound(config).policy.click_grace_seconds == 5
    await ok(agent, "page_click", {"tabId": tab, "selector": "#plain"})
    assert await _clicks(agent, tab) == "clicked:3"

    # Full again: a kill cannot be written into the record, and still takes (its latch).
    filler = _fill(disk)
    killed = _cli(browser, "kill")
    assert killed.returncode == 0, killed.stderr
    assert (config / "kill-latch").exists()
    assert await code(agent, "page_click", {"tabId": tab, "selector": "#plain"}) == "killed"
    assert await _page_counter(context, site) == "clicked:3"  # the refused click never ran
    filler.unlink()
    status = _cli(browser, "status")
    assert status.returncode != 0 and "kill" in status.stdout.lower()


@pytest.mark.promise("TR-09")
async def test_two_trust_writers_at_once_lose_neither_write(
    trusted: ThrowawayBrowser, context: BrowserContext, agent: Client, site: str
) -> None:
    """A person narrows the policy in one terminal and engages the kill switch in another while
    the agent works: both land (the record's lock orders them), the record stays sealed, and the
    agent's next click is refused and never runs."""
    browser, config = trusted, trusted.config
    tab = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]
    await ok(agent, "page_click", {"tabId": tab, "selector": "#plain"})
    epoch = _sound(config).epoch
    argvs = [
        ["policy", "restrict", "clickGraceSeconds=7"],
        ["kill"],
        ["policy", "restrict", "confirmTimeoutSeconds=20"],
    ]
    writers = [
        subprocess.Popen(  # noqa: S603 (our interpreter and our CLI)
            [sys.executable, "-m", "tabwarden", *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=browser.env,
        )
        for argv in argvs
    ]
    clicked = asyncio.create_task(
        agent.call_tool("page_click", {"tabId": tab, "selector": "#plain"})
    )
    for writer in writers:
        _out, err = await asyncio.to_thread(writer.communicate, timeout=120)
        assert writer.returncode == 0, err
    await clicked  # landed before or after the kill: either is fine, never twice
    eff = _sound(config)
    assert eff.killed and eff.epoch >= epoch + 3  # three writes, none lost
    assert eff.policy.click_grace_seconds == 7 and eff.policy.confirm_timeout_seconds == 20
    assert await code(agent, "page_click", {"tabId": tab, "selector": "#plain"}) == "killed"
    counted = await _page_counter(context, site)
    assert counted in {"clicked:1", "clicked:2"}, counted
