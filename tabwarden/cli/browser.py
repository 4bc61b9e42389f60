"""A throwaway headless Chromium with the tabwarden extension loaded and our host installed.

Headless Chrome cannot show its permission dialog, and the shipped extension asks for every
site's host access at run time (``optional_host_permissions``: approving an origin in the confirm
window requests it). So by default the throwaway profile loads a copy of the extension whose
manifest also grants the loopback hosts (``http://127.0.0.1/*``, ``http://localhost/*``) at
install — the only difference, and only for these local fixture sites; ``grant_loopback=False``
loads the shipped extension untouched (the tests that answer Chrome's dialog do that).

Used by ``tabwarden demo`` and by the real-browser tests, so both drive exactly the same setup:
a temp directory holding the profile (with ``NativeMessagingHosts/`` written by our own
``install``), a private runtime directory, a config directory and a fake ``HOME`` (Chromium writes
crash reports and dconf caches under ``HOME`` whatever the profile). Closing it terminates the
browser (and with it the host Chrome launched) and removes the directory. It must never touch
the person's real profile, real HOME or real runtime directory.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tabwarden.errors import TabwardenError
from tabwarden.protocol.codes import BROWSER_NOT_FOUND, EXTENSION_NOT_FOUND

DEFAULT_CHROME = "/usr/lib/chromium/chromium"
QUIET_FLAGS = (
    "--headless=new",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--password-store=basic",
    "--use-mock-keychain",
)


class BrowserNotFound(TabwardenError):
    """No Chromium binary was found."""

    code = BROWSER_NOT_FOUND
    hint = "Install Debian's chromium (`apt-get install -y chromium`) or set CHROME_BIN."


class ExtensionNotFound(TabwardenError):
    """The unpacked extension directory was not found."""

    code = EXTENSION_NOT_FOUND
    hint = (
        "Reinstall tabwarden (the package carries the extension), run from a checkout "
        "(extension/ beside pyproject.toml), or set TABWARDEN_EXTENSION_DIR."
    )


def chrome_binary(explicit: str | None = None) -> str:
    candidates = [explicit, os.environ.get("CHROME_BIN"), DEFAULT_CHROME]
    for candidate in candidates:
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    raise BrowserNotFound(f"no Chromium at {DEFAULT_CHROME} or on PATH")


def extension_dir() -> Path:
    explicit = os.environ.get("TABWARDEN_EXTENSION_DIR")
    candidates = [Path(explicit)] if explicit else []
    import tabwarden

    package = Path(tabwarden.__file__).resolve().parent
    # A checkout's extension/, else the installed package's copy (tabwarden/extension).
    candidates += [package.parent / "extension", package / "extension"]
    for candidate in candidates:
        if (candidate / "manifest.json").is_file():
            return candidate.resolve()
    raise ExtensionNotFound(f"looked in {', '.join(str(c) for c in candidates)}")


LOOPBACK_HOSTS = ("http://127.0.0.1/*", "http://localhost/*")


def loopback_copy(extension: Path, target: Path) -> Path:
    """Copy ``extension`` to ``target`` with ``LOOPBACK_HOSTS`` granted at install; the manifest's
    ``key`` (so the extension ID) and every other file stay as they are."""
    import json

    shutil.copytree(extension, target, ignore=shutil.ignore_patterns("node_modules", "__pycache__"))
    manifest_path = target / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["host_permissions"] = list(LOOPBACK_HOSTS)
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return target


@dataclass
class ThrowawayBrowser:
    """Call ``start(url)``; use ``env`` for anything that must find this browser's host."""

    chrome: str = field(default_factory=chrome_binary)
    extension: Path = field(default_factory=extension_dir)
    keep: bool = False
    label: str = "chromium"
    """The browser label the host is installed under (a second browser of the same person
    uses another one, e.g. ``chrome``)."""
    shared_config: Path | None = None
    """Use this config dir (trust record, host key) instead of a private one: two browsers of
    one person share a trust record."""
    grant_loopback: bool = True
    """Load a copy of the extension that also holds loopback host access at install (see the
    module docstring); ``False`` loads the shipped extension as it is."""
    root: Path = field(init=False)
    process: subprocess.Popen[bytes] | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="tabwarden-browser-"))
        for name in ("profile", "home", "config", "run"):
            (self.root / name).mkdir(mode=0o700)
        if self.grant_loopback:
            self.extension = loopback_copy(self.extension, self.root / "extension")

    @property
    def profile(self) -> Path:
        return self.root / "profile"

    @property
    def config(self) -> Path:
        """The config dir this browser's host and MCP servers use."""
        return self.shared_config if self.shared_config is not None else self.root / "config"

    @property
    def log_path(self) -> Path:
        return self.root / "chromium.log"

    @property
    def env(self) -> dict[str, str]:
        """The environment Chromium runs with; the host inherits it, and so should MCP servers."""
        env = dict(os.environ)
        for key in ("XDG_RUNTIME_DIR", "TABWARDEN_BROWSER", "PYTHONPATH", "PYTHONHOME"):
            env.pop(key, None)
        home = self.root / "home"
        env.update(
            HOME=str(home),
            XDG_CONFIG_HOME=str(home / ".config"),
            XDG_CACHE_HOME=str(home / ".cache"),
            XDG_DATA_HOME=str(home / ".local/share"),
            TABWARDEN_RUNTIME_DIR=str(self.root / "run"),
            TABWARDEN_CONFIG_DIR=str(self.config),
        )
        return env

    def install_host(self) -> Path:
        from tabwarden.cli.install import install

        report = install(self.label, self.profile / "NativeMessagingHosts")
        return report.manifest_path

    def argv(self, url: str) -> list[str]:
        args = [self.chrome, *QUIET_FLAGS, f"--user-data-dir={self.profile}"]
        if os.getuid() == 0:
            args.append("--no-sandbox")  # Chromium refuses to run as root otherwise
        args += [
            f"--disable-extensions-except={self.extension}",
            f"--load-extension={self.extension}",
        ]
        return [*args, url]

    def start(self, url: str) -> None:
        with open(self.log_path, "ab") as log:
            # argv() is a list we build (no shell): the Chromium binary the invoking user chose
            # (--chrome, CHROME_BIN, Debian's default or PATH), our flags and paths, and the URL.
            self.process = subprocess.Popen(  # noqa: S603
                self.argv(url),
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,  # one process group: closing takes every child with it
            )

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text("utf-8", "replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, timeout: float = 15.0) -> None:
        """Terminate Chromium and everything it started (the host included)."""
        proc = self.process
        if proc is None or proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()

    def close(self) -> None:
        self.stop()
        if self.process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)  # stragglers (renderers, the host)
        if not self.keep:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> ThrowawayBrowser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
