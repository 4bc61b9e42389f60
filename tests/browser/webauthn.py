"""Chrome's CDP virtual authenticator for the real-browser tests (PLATFORM-FACTS: add it to the
page's session before any create()/get(), or the call hangs headless)."""

from __future__ import annotations

from typing import Any

AUTHENTICATOR = {
    "protocol": "ctap2",
    "transport": "internal",
    "hasResidentKey": True,
    "hasUserVerification": True,
    "isUserVerified": True,
    "automaticPresenceSimulation": True,
}


async def add_authenticator(context: Any, page: Any) -> tuple[Any, str]:
    """A CDP session on ``page`` with a fresh virtual authenticator: (session, authenticatorId)."""
    cdp = await context.new_cdp_session(page)
    await cdp.send("WebAuthn.enable")
    added = await cdp.send("WebAuthn.addVirtualAuthenticator", {"options": AUTHENTICATOR})
    return cdp, str(added["authenticatorId"])


async def copy_credentials(source: Any, source_id: str, context: Any, page: Any) -> tuple[Any, str]:
    """Give ``page`` an authenticator holding the source's credentials (with their current
    counters): virtual authenticators are per page. Returns the new (session, authenticatorId)."""
    creds = await source.send("WebAuthn.getCredentials", {"authenticatorId": source_id})
    target, target_id = await add_authenticator(context, page)
    for cred in creds["credentials"]:
        await target.send(
            "WebAuthn.addCredential", {"authenticatorId": target_id, "credential": cred}
        )
    return target, target_id
