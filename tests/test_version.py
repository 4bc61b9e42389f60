"""The version lives once (``tabwarden.__version__``): the installed metadata and the extension's
manifest must say the same."""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path

import tabwarden

ROOT = Path(__file__).resolve().parents[1]


def test_installed_metadata_carries_the_one_version() -> None:
    assert metadata.version("tabwarden") == tabwarden.__version__


def test_extension_manifest_matches_the_version() -> None:
    manifest = json.loads((ROOT / "extension" / "manifest.json").read_text("utf-8"))
    assert manifest["version"] == tabwarden.__version__
