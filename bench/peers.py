"""The peers' npm packages, pinned in bench/package.json + package-lock.json, installed on first
run into bench/node_modules with npm's own progress on the terminal. It must never install
anything outside bench/ and never resolve a version the lock file does not pin."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

BENCH = Path(__file__).resolve().parent
NODE_MODULES = BENCH / "node_modules"


class PeersUnavailable(RuntimeError):
    """npm could not install the pinned peers."""


def pinned() -> dict[str, str]:
    package = json.loads((BENCH / "package.json").read_text(encoding="utf-8"))
    deps: dict[str, str] = package["dependencies"]
    return deps


def installed_version(name: str) -> str | None:
    try:
        meta = json.loads((NODE_MODULES / name / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    version = meta.get("version")
    return version if isinstance(version, str) else None


def ensure_peers() -> dict[str, str]:
    """The pinned versions, installed (``npm ci``) unless every one already is."""
    versions = pinned()
    if all(installed_version(name) == want for name, want in versions.items()):
        return versions
    npm = shutil.which("npm")
    if npm is None:
        raise PeersUnavailable("npm is not on PATH: run scripts/setup (it installs Node.js)")
    print(f"bench: installing the peers into {NODE_MODULES} (npm ci, first run only)", flush=True)
    # A fixed argv of npm's own client in bench/, against the committed lock file.
    done = subprocess.run(  # noqa: S603
        [npm, "ci", "--no-audit", "--no-fund", "--progress=true", "--loglevel=http"],
        cwd=BENCH,
        env={**os.environ, "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"},  # Debian's Chromium only
        check=False,
    )
    if done.returncode != 0:
        raise PeersUnavailable(f"npm ci exited {done.returncode} in {BENCH}")
    missing = [n for n, want in versions.items() if installed_version(n) != want]
    if missing:
        raise PeersUnavailable(f"npm ci did not install {', '.join(missing)} at the pinned version")
    return versions
