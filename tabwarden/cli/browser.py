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

# -- How every Chromium we start is started (the demo, the bench, the real-browser tests) --
#
# A person's Chrome runs with none of the switches automation tools add by default
# (Playwright's own list turns off the popup blocker, timer throttling, backgrounding, hang and
# flooding protection, the back-forward cache, ...). Ours must behave as theirs does, so we pass
# only what this machine needs, plus switches that quiet the browser without changing anything
# a page can see or do; ``person_browser_faults`` is the check the tests run on the real
# process's command line.

#: Quiet the browser: no first-run UI, no traffic of its own, no keyring. Nothing a page sees.
QUIET_FLAGS: tuple[str, ...] = (
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-quic",
    "--password-store=basic",  # no desktop keyring on this machine
    "--use-mock-keychain",
)
HEADLESS_FLAG = "--headless=new"
#: Chrome's own address-bar popups, which every window preloads as hidden WebUI pages, each in a
#: renderer of its own (Chromium 156: four ``chrome://omnibox-popup.top-chrome/`` pages once an
#: agent tab has its window; ~0.75 of a launch's ~3.5 CPU-seconds). A headless browser has no
#: address bar to show them in, and no page or extension can see them. Headless only; a headful
#: browser keeps them (docs/adr/0009-a-persons-browser.md, amendment 2).
HEADLESS_QUIET_FEATURES: tuple[str, ...] = ("WebUIOmniboxPopup", "WebUIOmniboxAimPopup")
HEADLESS_QUIET_FLAG = "--disable-features=" + ",".join(HEADLESS_QUIET_FEATURES)
#: Chromium refuses to run as root without it.
ROOT_FLAG = "--no-sandbox"
#: How Playwright drives the browser it launched (our tests observe through it).
PIPE_FLAG = "--remote-debugging-pipe"

#: Switches that change what a page sees or does, which no person's Chrome runs with: none of
#: them may appear on a browser we start (``person_browser_faults``). The first group is
#: Playwright's default list; the rest are what it adds when headless.
BEHAVIOUR_CHANGING: tuple[str, ...] = (
    "--disable-popup-blocking",
    "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows",
    "--disable-renderer-backgrounding",
    "--enable-automation",
    "--disable-ipc-flooding-protection",
    "--disable-hang-monitor",
    "--disable-back-forward-cache",
    "--disable-features",
    "--enable-features",
    "--allow-pre-commit-input",
    "--disable-prompt-on-repost",
    "--disable-field-trial-config",
    "--disable-component-extensions-with-background-pages",
    "--force-color-profile",
    "--enable-unsafe-swiftshader",
    "--disable-extensions",
    "--blink-settings",
    "--hide-scrollbars",
    "--mute-audio",
)

#: Behaviour-changing switches we still pass, each with why (docs/adr/0009-a-persons-browser.md).
#: The goal is an empty table.
STILL_KEPT: dict[str, str] = {}


def _switch(arg: str) -> str:
    return arg.split("=", 1)[0]


def launch_flags(
    profile: Path | None, extension: Path, *, headless: bool, pipe: bool = False
) -> list[str]:
    """The switches every Chromium we start gets, in one place: the profile (``None`` when the
    launcher passes it itself), headless (with ``HEADLESS_QUIET_FLAG``) or not, a pipe for
    Playwright, ``ROOT_FLAG`` as root, ``QUIET_FLAGS``, the unpacked extension, and whatever
    ``STILL_KEPT`` still holds."""
    flags = [f"--user-data-dir={profile}"] if profile is not None else []
    if headless:
        flags += [HEADLESS_FLAG, HEADLESS_QUIET_FLAG]
    if pipe:
        flags.append(PIPE_FLAG)
    if os.getuid() == 0:
        flags.append(ROOT_FLAG)
    flags += [
        *QUIET_FLAGS,
        *STILL_KEPT,
        f"--disable-extensions-except={extension}",
        f"--load-extension={extension}",
    ]
    return flags


#: Every switch ``launch_flags`` may pass (a value after ``=`` aside).
ALLOWED: frozenset[str] = frozenset(
    _switch(f)
    for f in (
        *QUIET_FLAGS,
        *STILL_KEPT,
        HEADLESS_FLAG,
        ROOT_FLAG,
        PIPE_FLAG,
        "--user-data-dir",
        "--disable-extensions-except",
        "--load-extension",
    )
)


def person_browser_faults(argv: list[str], extra: tuple[str, ...] = ()) -> list[str]:
    """The switches on a browser's command line (``argv``, the program first) that a person's
    Chrome would not have: each of ``BEHAVIOUR_CHANGING`` not in ``STILL_KEPT`` (but exactly
    ``HEADLESS_QUIET_FLAG`` on a headless browser), and any switch ``launch_flags`` does not pass
    (or the test's own ``extra``). Empty: a person's browser."""
    allowed = ALLOWED | {_switch(f) for f in extra}
    headless = HEADLESS_FLAG in argv
    faults = []
    for arg in argv[1:]:
        if not arg.startswith("-"):
            continue  # the start-up URL
        if headless and arg == HEADLESS_QUIET_FLAG:
            continue  # exactly these features off, and only where no address bar is shown
        name = _switch(arg)
        if name in STILL_KEPT:
            continue
        if name in BEHAVIOUR_CHANGING or name not in allowed:
            faults.append(arg)
    return faults


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
    """The extension to load: ``TABWARDEN_EXTENSION_DIR`` when set, else this installation's
    (install/extension.py ``packaged_extension``, the one rule for where it lives)."""
    explicit = os.environ.get("TABWARDEN_EXTENSION_DIR")
    if explicit:
        if (Path(explicit) / "manifest.json").is_file():
            return Path(explicit).resolve()
        raise ExtensionNotFound(f"looked in {explicit}")
    from tabwarden.cli.install.errors import InstallError
    from tabwarden.cli.install.extension import packaged_extension

    try:
        return packaged_extension()[0].resolve()
    except InstallError as exc:
        raise ExtensionNotFound(str(exc)) from None


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
        return [self.chrome, *launch_flags(self.profile, self.extension, headless=True), url]

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
