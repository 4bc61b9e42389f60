"""Where each browser reads per-user native-messaging host manifests, from the location table.

Pure lookups over ``manifests/locations.json`` and the given platform, home and environment: this
module must never touch the filesystem beyond ``os.path`` string handling, and never name a
directory that is not in the table (or the one ``manifest_dir`` a person passed).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from tabwarden import osapi
from tabwarden.cli.install.errors import UnknownBrowser, UnsupportedPlatform
from tabwarden.manifests import browser_locations, windows_note

__all__ = [
    "WINDOWS_PLATFORMS",
    "check_browser",
    "manifest_directory",
    "supported_browsers",
    "target_dir",
    "windows_error",
]

WINDOWS_PLATFORMS = ("win32", "cygwin", "msys")
_XDG_PREFIX = "$XDG_CONFIG_HOME/"
_HOME_PREFIX = "~/"


def supported_browsers() -> tuple[str, ...]:
    """Browser labels from the location table, in table order."""
    return tuple(browser_locations())


def check_browser(browser: str) -> str:
    known = supported_browsers()
    if browser not in known:
        raise UnknownBrowser(
            f"Unknown browser {browser!r}.", hint=f"Choose one of: {', '.join(known)}."
        )
    return browser


def windows_error(platform: str) -> UnsupportedPlatform:
    key = windows_note().get("registry_key", "")
    return UnsupportedPlatform(
        f"Registering the native-messaging host on Windows ({platform}) is not implemented.",
        hint=f"Chrome on Windows reads the registry key {key}; tabwarden supports Linux and macOS.",
    )


def _os_key(platform: str) -> str:
    if platform.startswith("linux"):
        return "linux"
    if platform == "darwin":
        return "darwin"
    if platform in WINDOWS_PLATFORMS:
        raise windows_error(platform)
    raise UnsupportedPlatform(
        f"No known NativeMessagingHosts location for platform {platform!r}.",
        hint="Pass --manifest-dir with the directory your browser reads host manifests from.",
    )


def _home(home: Path | None, env: Mapping[str, str]) -> Path:
    if home is None:
        env_home = env.get("HOME", "")
        home = Path(env_home) if os.path.isabs(env_home) else Path.home()
    return Path(os.path.abspath(home))


def manifest_directory(
    browser: str,
    *,
    platform: str = osapi.PLATFORM,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Path:
    """The per-user NativeMessagingHosts directory for ``browser`` on ``platform``."""
    os_key = _os_key(platform)
    check_browser(browser)
    env = os.environ if env is None else env
    where = browser_locations()[browser].get(os_key)
    if where is None:
        raise UnsupportedPlatform(
            f"No known NativeMessagingHosts location for {browser} on {os_key}.",
            hint="Pass --manifest-dir with the directory your browser reads host manifests from.",
        )
    if where.startswith(_XDG_PREFIX):
        # Chrome on Linux honours $XDG_CONFIG_HOME; a relative value is invalid per the XDG spec.
        xdg = env.get("XDG_CONFIG_HOME", "")
        base = Path(xdg) if os.path.isabs(xdg) else _home(home, env) / ".config"
        return base / where[len(_XDG_PREFIX) :]
    return _home(home, env) / where[len(_HOME_PREFIX) :]


def target_dir(
    browser: str,
    manifest_dir: Path | None,
    platform: str,
    home: Path | None,
    env: Mapping[str, str] | None,
) -> Path:
    """The directory ``install`` writes to: ``manifest_dir`` if given, else the table's."""
    if manifest_dir is not None:
        if platform in WINDOWS_PLATFORMS:
            raise windows_error(platform)
        check_browser(browser)
        return Path(os.path.abspath(manifest_dir))
    return manifest_directory(browser, platform=platform, home=home, env=env)
