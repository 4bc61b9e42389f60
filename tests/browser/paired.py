"""The setup most presence tests share: a throwaway trust record with a pairing code, the real
browser and an MCP client connected, and the options page paired with the code and a tap of
Chrome's virtual authenticator."""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

from tabwarden.cli.browser import ThrowawayBrowser
from tabwarden.manifests import EXTENSION_ID
from tabwarden.trust import store
from tabwarden.trust.gate import TrustGate, host_key_store
from tests.browser.harness import (
    CODE,
    launched,
    options_status,
    pair_options_page,
    trust_this_process,
)
from tests.browser.webauthn import add_authenticator

OPTIONS = f"chrome-extension://{EXTENSION_ID}/options.html"


def provision_for_pairing(browser: ThrowawayBrowser, origins: Sequence[str] = ()) -> TrustGate:
    """A record with this process's interpreter paired as the MCP client, ``origins`` approved
    and the pairing code ``CODE`` set; the gate that reads it."""
    config = browser.config
    trust_this_process(browser, origins)
    store.set_pairing_code(
        config / "trust.json", hashlib.sha256(CODE.encode()).hexdigest(), int(time.time()) + 600
    )
    return TrustGate({"TABWARDEN_CONFIG_DIR": str(config)})


def host_fingerprint(browser: ThrowawayBrowser) -> str:
    """The fingerprint of the host key ``browser``'s record pins (what the options page shows)."""
    key = host_key_store(browser.config, "file").load()
    assert key is not None
    return str(key.public.fingerprint)


@dataclass
class Paired:
    context: Any  # the Playwright BrowserContext
    agent: Any  # a connected MCP client
    page: Any  # the options page, paired
    cdp: Any  # the CDP session holding the page's virtual authenticator
    authenticator: str  # its id


async def options_page(context: Any) -> tuple[Any, Any, str]:
    """The options page opened in a new tab, with a fresh virtual authenticator on it, not yet
    paired: (page, its CDP session, the authenticator's id)."""
    page = await context.new_page()
    await page.goto(OPTIONS)
    cdp, authenticator = await add_authenticator(context, page)
    return page, cdp, authenticator


@contextlib.asynccontextmanager
async def paired_options_page(browser: ThrowawayBrowser) -> AsyncIterator[Paired]:
    """Launch the browser and an MCP client, pair the options page with ``CODE`` and a tap."""
    async with launched(browser) as (context, agent):
        page, cdp, authenticator = await options_page(context)
        await pair_options_page(page, CODE)
        assert (await options_status(page, "paired")).startswith("paired")
        yield Paired(context, agent, page, cdp, authenticator)
