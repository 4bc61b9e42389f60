"""The host calls that need no tap: read-only views for the options page and popup, and the
narrowings anyone at the browser may make for free.

* ``policy_get {}`` — the effective policy, the kill state and how this browser is paired;
* ``origin_decide {origin}`` — what approving a site takes (``trust.operations.decide_origin``);
* ``clients_recent {}`` — paired MCP clients and recently seen spawners;
* ``audit_tail {limit?}`` — the newest audit entries, newest last, re-redacted;
* ``sessions_alive {sessions}`` — which of the sessions the extension holds tabs for have ended
  (their MCP process is gone: ``host.sessions``), and whether the policy closes their tabs;
* ``policy_restrict {key, value}``, ``kill {}``, ``client_revoke {label}`` — narrowing: no tap
  and no key; the trust operations refuse anything that would widen.
"""

from __future__ import annotations

import json
from typing import Any

from tabwarden.host import calls
from tabwarden.host.calls import BadHostCall, HostCallContext, log
from tabwarden.host.sessions import MAX_SESSIONS_ASKED, closes_tabs, gone_sessions
from tabwarden.paths import LABEL_RE
from tabwarden.trust import operations
from tabwarden.trust.policy import PolicyError
from tabwarden.trust.record import TrustUnreadable

MAX_ORIGIN_CHARS = 2048


KILL_REASON = "engaged from the browser"


#: ``audit_tail``: how many entries by default, at most, and a bound on the reply's JSON size (a
#: native message to the browser must stay under 1 MiB; the oldest entries are dropped first).
AUDIT_TAIL_DEFAULT = 200


AUDIT_TAIL_MAX = 1000


AUDIT_TAIL_MAX_BYTES = 512 * 1024


def policy_get(ctx: HostCallContext, args: dict[str, Any]) -> dict[str, Any]:
    """Read-only: the effective policy, the kill state and which browsers are paired."""
    eff = calls.view(ctx, "policy_get")
    return {
        "policy": eff.policy.to_json(),
        "killed": eff.killed,
        "epoch": eff.epoch,
        "browsers": [b.label for b in eff.browsers],
        "enrolled": operations.enrolled(eff, ctx.browser_label),
        "windowOnly": any(b.label == ctx.browser_label and b.window_only for b in eff.browsers),
        "credentials": [
            {"credentialId": c.credential_id, "enrolledAt": c.enrolled_at, "uv": c.uv}
            for c in calls.own_credentials(ctx, eff)
        ],
    }


def origin_decide(ctx: HostCallContext, args: dict[str, Any]) -> dict[str, Any]:
    """Read-only: what approving ``origin`` takes for this browser (``trust.operations
    .decide_origin``): ``none``, a ``tap`` over the returned ``policy.widen`` detail, or a
    ``click``. Refused while killed, unpaired or unreadable."""
    origin = calls.string_arg(args, "origin", MAX_ORIGIN_CHARS)
    try:
        return operations.decide_origin(ctx.trust, ctx.browser_label, origin).to_json()
    except PolicyError:
        raise BadHostCall("origin must be an http(s) origin") from None


def clients_recent(ctx: HostCallContext, args: dict[str, Any]) -> dict[str, Any]:
    """Read-only: the paired MCP clients and the recently seen spawners (for pairing by tap)."""
    from tabwarden.bridge.spawner import recent_spawners

    eff = calls.view(ctx, "clients_recent")
    recent = recent_spawners(ctx.config_dir) if ctx.config_dir is not None else []
    return {
        "clients": [
            {"label": c.label, "exe": c.exe, "sha256": c.sha256, "pairedAt": c.paired_at}
            for c in eff.paired_clients
        ],
        "recent": [s.as_dict() for s in recent],
    }


def client_revoke(ctx: HostCallContext, args: dict[str, Any], now: int) -> dict[str, Any]:
    """Forget a paired MCP client (free: removing power needs no tap). Its live connection is cut
    by the host's trust watch as the epoch moves; a label nobody holds is ``bad_request``."""
    label = args.get("label")
    if not isinstance(label, str) or not LABEL_RE.match(label):
        raise BadHostCall("label must be a client label (a-z, 0-9, _ and -; at most 32)")
    eff = operations.require_readable(ctx.trust)
    if not any(c.label == label for c in eff.paired_clients):
        raise BadHostCall(f"no paired client is labelled {label!r}")
    epoch = operations.revoke(ctx.trust, "client", label, now, browser=ctx.browser_label)
    log.warning("client %r revoked from browser %r", label, ctx.browser_label)
    return {"done": True, "epoch": epoch}


def policy_restrict(ctx: HostCallContext, args: dict[str, Any], now: int) -> dict[str, Any]:
    """Narrow one key (free). A value that would widen is refused ``policy_invalid``."""
    key_name = args.get("key")
    if not isinstance(key_name, str) or not key_name or len(key_name) > 64:
        raise BadHostCall("key must be a policy key")
    if "value" not in args:
        raise BadHostCall("value is required")
    epoch = operations.restrict(
        ctx.trust, {key_name: args["value"]}, now, browser=ctx.browser_label
    )
    return {"done": True, "epoch": epoch}


def kill(ctx: HostCallContext, args: dict[str, Any], now: int) -> dict[str, Any]:
    """Engage the kill switch (free). Before pairing, the latch file is the record."""
    epoch = operations.kill(ctx.trust, KILL_REASON, now, browser=ctx.browser_label)
    log.warning("kill switch engaged from browser %r", ctx.browser_label)
    return {"done": True, "epoch": epoch}


def audit_tail(ctx: HostCallContext, args: dict[str, Any]) -> dict[str, Any]:
    """Read-only: the last ``limit`` audit entries, newest last (``truncated`` when the size bound
    dropped older ones). Entries were redacted when written; they are redacted again here."""
    from tabwarden.trust.audit import UnsafeAuditLog, redact_fields

    limit = args.get("limit")
    if limit is None:
        limit = AUDIT_TAIL_DEFAULT
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= AUDIT_TAIL_MAX:
        raise BadHostCall(f"limit must be an integer from 1 to {AUDIT_TAIL_MAX}")
    try:
        records = ctx.trust.audit().read(limit)
    except (UnsafeAuditLog, OSError) as exc:
        log.warning("audit_tail: the audit log is unreadable (%s)", type(exc).__name__)
        raise TrustUnreadable("the audit log is unreadable; see `tabwarden status`") from None
    entries: list[dict[str, Any]] = []
    size = 0
    truncated = False
    for record in reversed(records):
        entry = redact_fields(record)
        size += len(json.dumps(entry, ensure_ascii=True, default=str)) + 1
        if size > AUDIT_TAIL_MAX_BYTES:
            truncated = True
            break
        entries.append(entry)
    entries.reverse()
    return {"entries": entries, "truncated": truncated}


def sessions_alive(ctx: HostCallContext, args: dict[str, Any]) -> dict[str, Any]:
    """Read-only: ``gone`` lists the asked sessions whose MCP process no longer runs (lost while
    no host was there to see it exit); ``closeTabs`` is the policy's ``closeTabsOnSessionEnd``
    (False while the record is refused: keeping tabs open is the side that decides nothing)."""
    names = args.get("sessions")
    if (
        not isinstance(names, list)
        or len(names) > MAX_SESSIONS_ASKED
        or not all(isinstance(n, str) and 0 < len(n) <= 64 for n in names)
    ):
        raise BadHostCall(f"sessions must be a list of at most {MAX_SESSIONS_ASKED} names")
    return {"gone": gone_sessions(names), "closeTabs": closes_tabs(ctx.trust.effective())}
