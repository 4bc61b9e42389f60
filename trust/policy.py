"""The policy lattice: what each policy key means and which way is "narrower".

| key | type | default | narrower means |
|---|---|---|---|
| ``origins`` | list of exact origins or ``scheme://*.domain[:port]`` | ``[]`` | covered |
| ``confirm`` | actions to confirm | submit, link_click, press, select, tab_close | superset |
| ``eval`` / ``upload`` / ``passwordFill`` | bool | ``false`` | ``false`` |
| ``clickGraceSeconds`` | int 0..600 | ``30`` | smaller |
| ``confirmTimeoutSeconds`` | int 5..600 | ``40`` (under clients' 60 s timeout) | smaller |
| ``presenceConfirm`` | bool | ``false`` | ``true`` |
| ``closeTabsOnSessionEnd`` | bool | ``false`` (ended sessions leave orphans) | ``true`` |
| ``maxAgentTabs`` | int 1..200 | ``20`` | smaller |
| ``dialogArming`` | bool | ``false`` (dialogs wait for ``page_dialog``) | ``false`` |
| ``pageFetch`` | bool | ``false`` (``page_fetch`` refused) | ``false`` |
| ``consoleCapture`` / ``networkCapture`` | bool | ``false`` (nothing recorded) | ``false`` |
| ``provenance`` | strict, confirm or off | ``confirm`` | towards ``strict`` |
| ``agentTabsAudible`` | bool | ``false`` (agents' tabs are muted) | ``false`` |
| ``toolFamilies`` | list of tool families | ``[]`` (the default tool list only) | subset |

A ``Policy`` is a frozen dataclass that also reads as a mapping keyed by the JSON names above.
``restrict`` can only narrow (a restriction that would widen, or is invalid, is ignored);
``apply_set`` may widen and is for the signed ``policy set`` path only.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from tabwarden.errors import TabwardenError
from tabwarden.protocol.codes import POLICY_INVALID

__all__ = [
    "DEFAULT_POLICY",
    "DENY_POLICY",
    "POLICY_KEYS",
    "TOOL_FAMILIES",
    "POLICY_MEANINGS",
    "KeySpec",
    "Policy",
    "PolicyError",
    "apply_set",
    "is_narrowing",
    "key_spec",
    "is_wider",
    "normalise_approval",
    "normalise_origin",
    "approves",
    "describe_approval",
    "is_wildcard",
    "restrict",
    "restrict_explained",
    "validate_value",
    "validate_values",
]


class PolicyError(TabwardenError):
    """The policy value is not valid."""

    code = POLICY_INVALID
    exit_status = 2
    hint = "Run `tabwarden policy show` to see the keys, their types and their ranges."


#: Policy keys in the order the record and ``status`` show them.
POLICY_KEYS: tuple[str, ...] = (
    "origins",
    "confirm",
    "eval",
    "upload",
    "passwordFill",
    "clickGraceSeconds",
    "confirmTimeoutSeconds",
    "presenceConfirm",
    "closeTabsOnSessionEnd",
    "maxAgentTabs",
    "dialogArming",
    "pageFetch",
    "consoleCapture",
    "networkCapture",
    "provenance",
    "agentTabsAudible",
    "toolFamilies",
)
_ATTR = {
    "origins": "origins",
    "confirm": "confirm",
    "eval": "eval",
    "upload": "upload",
    "passwordFill": "password_fill",
    "clickGraceSeconds": "click_grace_seconds",
    "confirmTimeoutSeconds": "confirm_timeout_seconds",
    "presenceConfirm": "presence_confirm",
    "closeTabsOnSessionEnd": "close_tabs_on_session_end",
    "maxAgentTabs": "max_agent_tabs",
    "dialogArming": "dialog_arming",
    "pageFetch": "page_fetch",
    "consoleCapture": "console_capture",
    "networkCapture": "network_capture",
    "provenance": "provenance",
    "agentTabsAudible": "agent_tabs_audible",
    "toolFamilies": "tool_families",
}
_RANGES = {
    "clickGraceSeconds": (0, 600),
    "confirmTimeoutSeconds": (5, 600),
    "maxAgentTabs": (1, 200),
}
#: Keys whose value is one word of a list, narrowest first. ``provenance``: what happens when an
#: address or typed value carries page content from another site (mcp_server/provenance.py):
#: refused, asked, or let through.
_CHOICES: dict[str, tuple[str, ...]] = {"provenance": ("strict", "confirm", "off")}
#: The opt-in tool families ``toolFamilies`` may name (mcp_server/catalogue/published.py
#: ``PROFILES`` says which tools each holds; tests hold the two to one set). Every session's
#: ``tools/list`` lists them beside the default list and beside what ``tabwarden mcp --caps``
#: names (docs/adr/0022): listing more tools is the wider way.
TOOL_FAMILIES: tuple[str, ...] = ("input", "layout", "read", "devtools", "files")

#: ``dialogArming`` true lets ``page_dialog`` answer a dialog before anyone saw it (a one-shot
#: accept armed on a document), so on is the wider way, as for eval.
#: ``pageFetch`` true lets ``page_fetch`` send requests with the page's cookies (each confirmed).
#: ``consoleCapture`` / ``networkCapture`` true has the extension record an owned tab's console
#: and XHR/fetch responses for page_console / page_network: on is wider; off clears what it kept.
#: ``agentTabsAudible`` true leaves agents' tabs unmuted: a page the agent opened may then be
#: heard by the person (and speak to them), so on is the wider way.
_BOOLS_FALSE_NARROW = frozenset(
    {
        "eval",
        "upload",
        "passwordFill",
        "dialogArming",
        "pageFetch",
        "consoleCapture",
        "networkCapture",
        "agentTabsAudible",
    }
)
#: What each key does, in a person's words: ``tabwarden policy show`` prints these next to the
#: type, range and default that ``key_spec`` derives from the declarations here.
POLICY_MEANINGS: dict[str, str] = {
    "origins": "sites agents may use without asking (exact origins, e.g. https://example.com, "
    "or a domain and every subdomain, e.g. https://*.example.com; never a public suffix such as "
    "*.com or *.github.io); any other site asks you in the confirm window first",
    "confirm": "kinds of action that wait for your yes in the confirm window before they run",
    "eval": "allow page_eval (an agent's JavaScript run in the page); every call is confirmed",
    "upload": "allow page_upload (a file from the upload sandbox put into a file input); every "
    "call is confirmed",
    "passwordFill": "allow page_fill to type into password fields",
    "clickGraceSeconds": "after you confirm a click, key press or choice on a tab, further ones "
    "on that tab and site within this many seconds are not asked again (page_eval, page_fetch, "
    "uploads, dialogs and closing a tab always ask; 0: always ask)",
    "confirmTimeoutSeconds": "how long the confirm window waits for your answer before the call "
    "is refused",
    "presenceConfirm": "answer confirmations of page_eval and page_upload with a tap on your "
    "security key instead of a click in the confirm window",
    "closeTabsOnSessionEnd": "close an agent's tabs when its MCP session ends (otherwise they "
    "stay open as orphans)",
    "dialogArming": "let agents arm a one-shot answer (accept or dismiss) for a page's next "
    "JavaScript dialog; while on, every dialog nothing armed is dismissed at once and logged",
    "maxAgentTabs": "most agent tabs open at once; tab_open then closes the oldest orphan never "
    "looked at, or answers tab_limit",
    "pageFetch": "allow page_fetch (an HTTP request sent from an agent's tab with the page's "
    "cookies, to an approved site); every call is confirmed showing its method and URL",
    "consoleCapture": "record the console errors, warnings and uncaught exceptions of agents' "
    "tabs for page_console (approved sites only, masked); off drops what was recorded at once",
    "networkCapture": "record the requests of agents' tabs for page_network (method, URL, "
    "status, type, size, timing, failure; XHR/fetch text bodies up to a cap; never headers or "
    "cookies); off drops what was recorded at once",
    "agentTabsAudible": "leave agents' tabs unmuted (otherwise each tab an agent opens is muted; "
    "the person's own tabs are never touched)",
    "provenance": "an address to open or a value to type that carries what a page on another "
    "site said (a link, a token it showed): strict refuses it, confirm asks you naming that "
    "page (a tap on your security key once this browser is enrolled), off lets it through",
    "toolFamilies": "tool families every agent's tool list shows beside the default tools, as "
    "if each client started `tabwarden mcp --caps` with them (a new session sees a change)",
}
_ACTION_RE = re.compile(r"^[a-z][a-z0-9_]{0,31}$")
_MAX_LIST = 1000
_MAX_ORIGIN = 300


@dataclass(frozen=True, kw_only=True, slots=True)
class Policy(Mapping[str, Any]):
    """One complete policy. Lists are sorted, de-duplicated tuples; origins are normalised."""

    origins: tuple[str, ...]
    confirm: tuple[str, ...]
    eval: bool
    upload: bool
    password_fill: bool
    click_grace_seconds: int
    confirm_timeout_seconds: int
    presence_confirm: bool
    close_tabs_on_session_end: bool
    max_agent_tabs: int
    dialog_arming: bool
    page_fetch: bool
    console_capture: bool
    network_capture: bool
    provenance: str
    agent_tabs_audible: bool
    tool_families: tuple[str, ...]

    def __getitem__(self, key: str) -> Any:
        try:
            attr = _ATTR[key]
        except KeyError:
            raise KeyError(key) from None
        return getattr(self, attr)

    def __iter__(self) -> Iterator[str]:
        return iter(POLICY_KEYS)

    def __len__(self) -> int:
        return len(POLICY_KEYS)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key in POLICY_KEYS:
            value = self[key]
            out[key] = list(value) if isinstance(value, tuple) else value
        return out


# --- origins ---------------------------------------------------------------------------------

_ORIGIN_RE = re.compile(
    r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)"
    r"(?::(?P<port>[0-9]{1,5}))?$"
)
_LABEL_RE = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def normalise_origin(origin: str) -> str:
    """``scheme://host[:port]`` with lower-case scheme/host and the default port dropped.

    Only http/https; no path (not even ``/``), query, fragment, userinfo or wildcard; host is an
    ASCII DNS name (punycode for IDN), a full dotted IPv4 address or a bracketed IPv6 address.
    Origins then compare as exact strings: ``http://127.0.0.1.evil.test`` is not
    ``http://127.0.0.1``.
    """
    if not isinstance(origin, str):
        raise PolicyError(f"an origin must be a string, not {type(origin).__name__}")
    if len(origin) > _MAX_ORIGIN:
        raise PolicyError("origin is too long")
    m = _ORIGIN_RE.match(origin)
    if not m:
        raise PolicyError(
            f"{origin!r} is not an exact origin (scheme://host[:port], no path, no wildcard)"
        )
    scheme = m.group("scheme").lower()
    if scheme not in _DEFAULT_PORTS:
        raise PolicyError(f"{origin!r}: only http and https origins can be approved")
    raw_host = m.group("host").lower()
    if raw_host.startswith("["):
        try:
            host = "[" + ipaddress.IPv6Address(raw_host[1:-1]).compressed + "]"
        except ValueError:
            raise PolicyError(f"{origin!r}: not a valid IPv6 address") from None
    else:
        labels = raw_host.split(".")
        if len(raw_host) > 253 or not all(_LABEL_RE.match(label) for label in labels):
            raise PolicyError(f"{origin!r}: not a valid host name")
        if labels[-1].isdigit() or all(label.isdigit() for label in labels):
            # A numeric last label means "IPv4" to browsers: require the one dotted-quad form.
            try:
                host = str(ipaddress.IPv4Address(raw_host))
            except ValueError:
                raise PolicyError(f"{origin!r}: not a valid IPv4 address") from None
            if host != raw_host:
                raise PolicyError(f"{origin!r}: write the IPv4 address in dotted-quad form")
        else:
            host = raw_host
    port_text = m.group("port")
    suffix = ""
    if port_text is not None:
        port = int(port_text)
        if not 1 <= port <= 65535:
            raise PolicyError(f"{origin!r}: port out of range")
        if port != _DEFAULT_PORTS[scheme]:
            suffix = f":{port}"
    return f"{scheme}://{host}{suffix}"


# --- subdomain approvals ----------------------------------------------------------------------

#: ``scheme://*.domain[:port]``: the wildcard is the whole leftmost label and nothing else.
_WILDCARD_RE = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://\*\.(?P<rest>[^/?#@\s*]+)$")
_WILDCARD_HINT = (
    "A subdomain approval is scheme://*.domain[:port] with the * as the whole leftmost label, "
    "over a domain someone owns (https://*.example.com), never a public suffix such as com, "
    "co.uk or github.io; write international names in punycode (xn--...), or approve exact "
    "origins (https://www.example.com). See docs/adr/0019."
)


def _wildcard_error(entry: str, why: str) -> PolicyError:
    return PolicyError(f"{entry!r}: {why}", hint=_WILDCARD_HINT)


def is_wildcard(entry: str) -> bool:
    """True for a normalised subdomain approval (``https://*.example.com``)."""
    return "://*." in entry


def _normalise_wildcard(entry: str) -> str:
    from tabwarden.trust.suffixes import holds_public_suffix, is_public_suffix

    m = _WILDCARD_RE.match(entry)
    if not m:
        raise _wildcard_error(
            entry,
            "a wildcard may only be the whole leftmost label (scheme://*.domain[:port], no path)",
        )
    rest = m.group("rest")
    if not rest.isascii():
        raise _wildcard_error(entry, "write an international domain name in punycode (xn--...)")
    plain = f"{m.group('scheme')}://{rest}"
    try:
        base = normalise_origin(plain)
    except PolicyError as exc:
        why = str(exc).removeprefix(f"{plain!r}: ")
        if "is not an exact origin" in why:
            why = "not a valid host name after *."
        raise _wildcard_error(entry, why) from None
    scheme, _, authority = base.partition("://")
    host, _, port = authority.partition(":")
    if host.startswith("[") or all(part.isdigit() for part in host.split(".")):
        raise _wildcard_error(entry, "an IP address has no subdomains")
    if is_public_suffix(host):
        raise _wildcard_error(entry, f"{host} is a public suffix: this would approve every site "
                              "registered under it")  # fmt: skip
    if holds_public_suffix(host):
        raise _wildcard_error(entry, f"{host} holds public suffixes (sites of other owners) "
                              "below it")  # fmt: skip
    return f"{scheme}://*.{host}" + (f":{port}" if port else "")


def normalise_approval(entry: str) -> str:
    """One ``origins`` entry normalised: an exact origin (``normalise_origin``) or a subdomain
    approval ``scheme://*.domain[:port]`` (lower-case, default port dropped).

    A subdomain approval covers the domain itself and every name below it, on that scheme and
    port only (as Chrome's match pattern ``https://*.example.com/*`` does). It is refused for a
    bare ``*``, a wildcard anywhere but as the whole leftmost label (``*.*.x``, ``a*.x``), an IP
    address, a non-ASCII name, and a domain that is a public suffix or holds one below it
    (``*.com``, ``*.co.uk``, ``*.github.io``, ``*.localhost``): trust/suffixes.py decides with the
    vendored Public Suffix List."""
    if not isinstance(entry, str):
        raise PolicyError(f"an origin must be a string, not {type(entry).__name__}")
    if len(entry) > _MAX_ORIGIN:
        raise PolicyError("origin is too long")
    if "*" in entry:
        return _normalise_wildcard(entry)
    return normalise_origin(entry)


def _parts(entry: str) -> tuple[str, str, str]:
    """(scheme, host, port or "") of a normalised entry (the host keeps a leading ``*.``)."""
    scheme, _, authority = entry.partition("://")
    if authority.startswith("["):
        host, _, rest = authority.partition("]")
        return scheme, host + "]", rest.removeprefix(":")
    host, _, port = authority.partition(":")
    return scheme, host, port


def _entry_approves(entry: str, origin: str) -> bool:
    if entry == origin:
        return True
    if not is_wildcard(entry):
        return False
    scheme, host, port = _parts(entry)
    o_scheme, o_host, o_port = _parts(origin)
    base = host[2:]
    return scheme == o_scheme and port == o_port and (o_host == base or o_host.endswith("." + base))


def approves(entries: Iterable[str], origin: str) -> bool:
    """True when one of the normalised ``entries`` approves the exact ``origin`` (normalised):
    the same string, or a subdomain approval on the same scheme and port whose domain is the
    origin's host or a parent of it by whole labels (``https://*.example.com`` approves
    ``https://example.com`` and ``https://a.b.example.com``, never ``https://evilexample.com``,
    ``https://example.com.evil.test``, ``http://a.example.com`` or ``https://a.example.com:8443``)."""
    if is_wildcard(origin):
        return False
    return any(_entry_approves(entry, origin) for entry in entries)


def _covered(entry: str, entries: Iterable[str]) -> bool:
    """``entry`` approves nothing ``entries`` do not."""
    if not is_wildcard(entry):
        return approves(entries, entry)
    scheme, host, port = _parts(entry)
    base_origin = f"{scheme}://{host[2:]}" + (f":{port}" if port else "")
    # A subdomain approval is covered only by one whose domain is the same or a parent of it.
    return any(is_wildcard(e) and _entry_approves(e, base_origin) for e in entries)


def describe_approval(entry: str) -> str:
    """An ``origins`` entry in a person's words: a subdomain approval as "example.com and every
    subdomain (https)"; an exact origin as itself."""
    if not is_wildcard(entry):
        return entry
    scheme, host, port = _parts(entry)
    where = f"{scheme}, port {port}" if port else scheme
    return f"{host[2:]} and every subdomain ({where})"


# --- validation ------------------------------------------------------------------------------


def _str_list(key: str, value: object) -> list[str]:
    if not isinstance(value, (list, tuple)):
        raise PolicyError(f"{key} must be a list of strings")
    if len(value) > _MAX_LIST:
        raise PolicyError(f"{key} has too many entries")
    for item in value:
        if not isinstance(item, str):
            raise PolicyError(f"{key} must be a list of strings")
    return list(value)


def validate_value(key: str, value: object) -> Any:
    """The normalised value for one key; ``PolicyError`` for an unknown key or a bad value."""
    if key not in _ATTR:
        raise PolicyError(f"unknown policy key {key!r}")
    if key == "origins":
        entries = {normalise_approval(o) for o in _str_list(key, value)}
        # Minimal: an entry another one covers is dropped (``https://a.example.com`` beside
        # ``https://*.example.com``), so two lists that approve the same origins are equal.
        wildcards = {e for e in entries if is_wildcard(e)}  # only a wildcard covers another entry
        return tuple(sorted(e for e in entries if not _covered(e, wildcards - {e})))
    if key == "confirm":
        actions = _str_list(key, value)
        for action in actions:
            if not _ACTION_RE.match(action):
                raise PolicyError(f"confirm: {action!r} is not an action name")
        return tuple(sorted(set(actions)))
    if key == "toolFamilies":
        families = _str_list(key, value)
        for family in families:
            if family not in TOOL_FAMILIES:
                raise PolicyError(
                    f"toolFamilies: {family!r} is not a tool family ({', '.join(TOOL_FAMILIES)})"
                )
        return tuple(sorted(set(families)))
    if key in _CHOICES:
        if not isinstance(value, str) or value not in _CHOICES[key]:
            raise PolicyError(f"{key} must be one of {', '.join(_CHOICES[key])}")
        return value
    if key in _RANGES:
        low, high = _RANGES[key]
        if type(value) is not int:
            raise PolicyError(f"{key} must be an integer")
        if not low <= value <= high:
            raise PolicyError(f"{key} must be between {low} and {high}")
        return value
    if type(value) is not bool:
        raise PolicyError(f"{key} must be true or false")
    return value


def validate_values(values: Mapping[str, object]) -> Policy:
    """A ``Policy`` from JSON values. Keys left out take ``DEFAULT_POLICY``'s value."""
    if not isinstance(values, Mapping):
        raise PolicyError("policy values must be an object")
    for key in values:
        if key not in _ATTR:
            raise PolicyError(f"unknown policy key {key!r}")
    kwargs = {
        _ATTR[key]: validate_value(key, values[key]) if key in values else DEFAULT_POLICY[key]
        for key in POLICY_KEYS
    }
    return Policy(**kwargs)


# --- the order -------------------------------------------------------------------------------


def _le(key: str, a: Any, b: Any) -> bool:
    """``a`` grants nothing that ``b`` does not, for one key."""
    if key == "origins":
        return all(_covered(entry, b) for entry in a)
    if key == "toolFamilies":
        return set(a) <= set(b)
    if key == "confirm":
        return set(a) >= set(b)
    if key in _CHOICES:
        return _CHOICES[key].index(a) <= _CHOICES[key].index(b)
    if key in _RANGES:
        return bool(a <= b)
    if key in _BOOLS_FALSE_NARROW:
        return (not a) or bool(b)
    # presenceConfirm, closeTabsOnSessionEnd: true is narrower
    return bool(a) or not b


@dataclass(frozen=True, kw_only=True, slots=True)
class KeySpec:
    """One key as a person reads it: its type and range, default, which way narrows, meaning."""

    key: str
    type: str
    default: Any
    narrower: str
    meaning: str


def key_spec(key: str) -> KeySpec:
    """A key's description, derived from the declarations the validator and ``_le`` use."""
    if key not in _ATTR:
        raise PolicyError(f"unknown policy key {key!r}")
    if key == "origins":
        kind = "list of origins (scheme://host[:port] or scheme://*.domain[:port])"
        narrower = "fewer origins"
    elif key == "confirm":
        kind, narrower = "list of action names ([a-z][a-z0-9_]*)", "more actions"
    elif key == "toolFamilies":
        kind, narrower = f"list of tool families ({', '.join(TOOL_FAMILIES)})", "fewer families"
    elif key in _CHOICES:
        kind, narrower = " | ".join(_CHOICES[key]), f"towards {_CHOICES[key][0]}"
    elif key in _RANGES:
        low, high = _RANGES[key]
        kind, narrower = f"integer {low}..{high}", "smaller"
    elif key in _BOOLS_FALSE_NARROW:
        kind, narrower = "true or false", "false"
    else:
        kind, narrower = "true or false", "true"
    default = DEFAULT_POLICY[key]
    return KeySpec(
        key=key,
        type=kind,
        default=list(default) if isinstance(default, tuple) else default,
        narrower=narrower,
        meaning=POLICY_MEANINGS[key],
    )


def is_wider(a: Policy, b: Policy) -> bool:
    """True when ``a`` grants anything ``b`` does not."""
    return any(not _le(key, a[key], b[key]) for key in POLICY_KEYS)


def is_narrowing(policy: Policy, key: str, value: object) -> bool:
    """True when ``value`` for ``key`` grants nothing ``policy`` does not (equal counts).

    An unknown key or invalid value is not narrowing (False); this never raises."""
    try:
        normalised = validate_value(key, value)
    except PolicyError:
        return False
    return _le(key, normalised, policy[key])


def apply_set(policy: Policy, changes: Mapping[str, object]) -> Policy:
    """``policy`` with ``changes`` applied — may widen (``policy set``, signed, with presence)."""
    if not isinstance(changes, Mapping):
        raise PolicyError("policy changes must be an object")
    updates = {_ATTR.get(k, k): validate_value(k, v) for k, v in changes.items()}
    return replace(policy, **updates)


def _key_value(item: object) -> tuple[object, object]:
    if isinstance(item, tuple) and len(item) == 2:
        return item[0], item[1]
    if isinstance(item, Mapping):
        return item.get("key"), item.get("value")
    return getattr(item, "key", None), getattr(item, "value", None)


def restrict_explained(
    policy: Policy, restrictions: Iterable[object]
) -> tuple[Policy, tuple[str, ...]]:
    """``restrict`` plus the reason each ignored restriction was ignored (in order)."""
    current = policy
    ignored: list[str] = []
    for index, item in enumerate(restrictions):
        key, value = _key_value(item)
        if not isinstance(key, str) or key not in _ATTR:
            ignored.append(f"restriction {index}: unknown policy key")
            continue
        try:
            normalised = validate_value(key, value)
        except PolicyError as exc:
            ignored.append(f"restriction {index} ({key}): invalid value: {exc}")
            continue
        if not _le(key, normalised, current[key]):
            ignored.append(f"restriction {index} ({key}): would widen the policy")
            continue
        current = replace(current, **{_ATTR[key]: normalised})
    return current, tuple(ignored)


def restrict(policy: Policy, restrictions: Iterable[object]) -> Policy:
    """Apply restrictions in order; each may only narrow. Widening or invalid ones are ignored.

    A restriction is a ``(key, value)`` pair, a mapping with ``key``/``value``, or an object with
    ``.key``/``.value`` (``record.Restriction``).
    """
    return restrict_explained(policy, restrictions)[0]


DEFAULT_POLICY: Policy = Policy(
    origins=(),
    confirm=("link_click", "press", "select", "submit", "tab_close"),
    eval=False,
    upload=False,
    password_fill=False,
    click_grace_seconds=30,
    confirm_timeout_seconds=40,
    presence_confirm=False,
    close_tabs_on_session_end=False,
    max_agent_tabs=20,
    dialog_arming=False,
    page_fetch=False,
    console_capture=False,
    network_capture=False,
    provenance="confirm",
    agent_tabs_audible=False,
    tool_families=(),
)

#: What a refused (unreadable, tampered) record enforces: the default, narrowed on every key.
DENY_POLICY: Policy = replace(
    DEFAULT_POLICY,
    click_grace_seconds=0,
    confirm_timeout_seconds=5,
    presence_confirm=True,
    provenance="strict",
)

assert [f.name for f in fields(Policy)] == [_ATTR[k] for k in POLICY_KEYS]
