"""The pinned identity of tabwarden's native-messaging host, and the packaged tables behind it.

This module is the one source of the host name and the single extension allowed to launch the
host (``ALLOWED_ORIGIN``); the host, ``tabwarden install`` and ``tabwarden status`` all import it
from here. It must never widen that pin: no wildcard origins, no second extension ID, no origin
taken from the environment or the command line. The JSON files beside it are read through
``importlib.resources`` so they work from a wheel or zip, not only an editable checkout.
"""

from __future__ import annotations

import base64
import binascii
import copy
import hashlib
import json
from functools import lru_cache
from importlib import resources
from typing import Any

HOST_NAME = "dev.tabwarden.host"
"""Chrome's name for the host; also the manifest's file stem."""

EXTENSION_ID = "jlmldlloenidkbhnlcdhogbbeefcjhmf"
"""Derived from the public ``key`` in ``extension/manifest.json`` (``extension_id_from_key``)."""

ALLOWED_ORIGIN = f"chrome-extension://{EXTENSION_ID}/"
"""The only origin the host manifest lists in ``allowed_origins``."""

TEMPLATE_RESOURCE = "host-manifest.template.json"
LOCATIONS_RESOURCE = "locations.json"
PATH_PLACEHOLDER = "@WRAPPER_PATH@"

_HEX_TO_CHROME = str.maketrans("0123456789abcdef", "abcdefghijklmnop")


class PackagedDataError(Exception):
    """A packaged table disagrees with the pinned identity (a broken or tampered install)."""


def extension_id_from_key(key_b64: str) -> str:
    """Chrome's extension ID for a manifest ``key``: sha256 of the DER key, 32 hex digits as a-p."""
    try:
        der = base64.b64decode(key_b64, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError("extension key is not valid base64") from exc
    return hashlib.sha256(der).hexdigest()[:32].translate(_HEX_TO_CHROME)


def _read_resource(name: str) -> Any:
    raw = resources.files(__name__).joinpath(name).read_text("utf-8")
    return json.loads(raw)


@lru_cache(maxsize=1)
def _template() -> dict[str, Any]:
    tpl = _read_resource(TEMPLATE_RESOURCE)
    if not isinstance(tpl, dict):
        raise PackagedDataError(f"{TEMPLATE_RESOURCE} is not a JSON object")
    expected = {"name", "description", "path", "type", "allowed_origins"}
    if set(tpl) != expected:
        raise PackagedDataError(f"{TEMPLATE_RESOURCE} keys {sorted(tpl)} != {sorted(expected)}")
    if tpl["name"] != HOST_NAME:
        raise PackagedDataError(f"{TEMPLATE_RESOURCE} name is not {HOST_NAME!r}")
    if tpl["allowed_origins"] != [ALLOWED_ORIGIN]:
        raise PackagedDataError(f"{TEMPLATE_RESOURCE} allowed_origins is not the pinned origin")
    if tpl["type"] != "stdio" or tpl["path"] != PATH_PLACEHOLDER:
        raise PackagedDataError(f"{TEMPLATE_RESOURCE} type/path placeholder is wrong")
    return tpl


def load_template() -> dict[str, Any]:
    """The host-manifest template (``path`` still the placeholder), checked against the pin."""
    return copy.deepcopy(_template())


def render_manifest(wrapper_path: str) -> dict[str, Any]:
    """The complete host manifest whose ``path`` is ``wrapper_path`` (must be absolute)."""
    if not wrapper_path.startswith("/"):
        raise ValueError("the host manifest path must be absolute")
    manifest = load_template()
    manifest["path"] = wrapper_path
    return manifest


@lru_cache(maxsize=1)
def _locations() -> dict[str, Any]:
    table = _read_resource(LOCATIONS_RESOURCE)
    browsers = table.get("browsers") if isinstance(table, dict) else None
    if not isinstance(browsers, dict) or not browsers:
        raise PackagedDataError(f"{LOCATIONS_RESOURCE} has no browsers table")
    for browser, per_os in browsers.items():
        if not isinstance(per_os, dict):
            raise PackagedDataError(f"{LOCATIONS_RESOURCE}: {browser!r} is not an object")
        for os_name, where in per_os.items():
            if not isinstance(where, str) or not where.startswith(("~/", "$XDG_CONFIG_HOME/")):
                raise PackagedDataError(f"{LOCATIONS_RESOURCE}: bad path for {browser}/{os_name}")
            if ".." in where.split("/"):
                raise PackagedDataError(f"{LOCATIONS_RESOURCE}: '..' in {browser}/{os_name}")
    checked: dict[str, Any] = table
    return checked


def load_locations() -> dict[str, Any]:
    """The whole location table: ``browsers`` -> OS -> unexpanded directory, plus ``windows``."""
    return copy.deepcopy(_locations())


def browser_locations() -> dict[str, dict[str, str]]:
    """``browser -> {os: unexpanded directory}``, in table order."""
    return copy.deepcopy(_locations()["browsers"])


def windows_note() -> dict[str, Any]:
    """The documented-but-unimplemented Windows registry entry."""
    return copy.deepcopy(_locations().get("windows", {}))


__all__ = [
    "ALLOWED_ORIGIN",
    "EXTENSION_ID",
    "HOST_NAME",
    "PackagedDataError",
    "browser_locations",
    "extension_id_from_key",
    "load_locations",
    "load_template",
    "render_manifest",
    "windows_note",
]
