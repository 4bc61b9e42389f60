"""The CLI tests' fixtures: a private tabwarden world, unpaired or paired (tests/cli/world.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.world import World


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


@pytest.fixture
def paired(world: World) -> World:
    world.pair()
    return world
