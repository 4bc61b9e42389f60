"""Tool families chosen by the signed policy (``toolFamilies``, docs/adr/0022): every session lists
the families the policy names beside the default list and beside what its ``--caps`` names (the
union); a tool outside them still answers ``tool_not_enabled``; naming a family is a widening
(a signed ``policy set``), dropping one a free narrowing; and a value the record cannot give (a
family this version does not know, as a newer tabwarden might sign) fails closed: the default
list only, and the server's log says why and what to run."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from pathlib import Path

import pytest
from mcp import Client

from tabwarden.mcp_server.bridge_client import BridgeClient
from tabwarden.mcp_server.catalogue import BY_NAME
from tabwarden.mcp_server.catalogue.published import PROFILES, enabled_tools
from tabwarden.mcp_server.server import build_server, listed_families
from tabwarden.trust import store
from tabwarden.trust.policy import (
    DEFAULT_POLICY,
    TOOL_FAMILIES,
    PolicyError,
    apply_set,
    is_narrowing,
    is_wider,
    validate_value,
)
from tabwarden.trust.record_file import update
from tabwarden.trust.verify import Effective
from tests.fakes import tool_error
from tests.fixtures import pair_record, paired_guard
from tests.mcp_server.stdio_session import dirs, listed_names, tools_list_line

DEFAULT_LIST = enabled_tools(BY_NAME)


def _sign(tmp_path: Path, families: list[str]) -> None:
    """What `tabwarden policy set toolFamilies=…` signs (after the person's phrase or tap)."""
    _, config = dirs(tmp_path)
    key = pair_record(config)
    wide = apply_set(DEFAULT_POLICY, {"toolFamilies": families}).to_json()
    store.set_baseline(
        config / "trust.json", key, wide, int(time.time()), set_keys=["toolFamilies"]
    )


def test_the_policy_names_the_same_families_the_catalogue_has() -> None:
    assert set(TOOL_FAMILIES) == set(PROFILES)


@pytest.mark.promise("H4-84")
def test_a_family_the_policy_names_is_listed_beside_the_default_and_the_caps(
    tmp_path: Path,
) -> None:
    _sign(tmp_path, ["input"])
    listed = listed_names(tools_list_line(tmp_path))
    assert listed == DEFAULT_LIST | set(PROFILES["input"])
    both = listed_names(tools_list_line(tmp_path, "--caps", "files"))
    assert both == DEFAULT_LIST | set(PROFILES["input"]) | set(PROFILES["files"])


@pytest.mark.promise("H4-84")
def test_a_tool_outside_the_policys_families_answers_tool_not_enabled(runtime_dir: Path) -> None:
    policy = apply_set(DEFAULT_POLICY, {"toolFamilies": ["files"]})
    eff = dataclasses.replace(Effective.unpaired(), policy=policy)
    caps = listed_families((), eff)
    assert caps == ("files",)
    bridge = BridgeClient(label="families", env={"TABWARDEN_RUNTIME_DIR": str(runtime_dir)})
    server = build_server(bridge, paired_guard(), caps=caps)

    async def scenario() -> None:
        async with Client(server, raise_exceptions=True) as client:
            listed = {t.name for t in (await client.list_tools()).tools}
            assert set(PROFILES["files"]) <= listed and "page_drag" not in listed
            result = await client.call_tool("page_drag", {"tabId": 1, "to": {"x": 1, "y": 1}})
            error = tool_error(result)
            assert error is not None and error["code"] == "tool_not_enabled", result
            assert error["retry"] == "safe"

    asyncio.run(scenario())


@pytest.mark.promise("H4-84")
def test_naming_a_family_widens_and_dropping_one_narrows() -> None:
    some = apply_set(DEFAULT_POLICY, {"toolFamilies": ["input", "files"]})
    assert is_wider(some, DEFAULT_POLICY) and not is_wider(DEFAULT_POLICY, some)
    assert is_narrowing(some, "toolFamilies", ["files"])
    assert not is_narrowing(some, "toolFamilies", ["files", "read"])
    assert validate_value("toolFamilies", ["input", "input", "files"]) == ("files", "input")
    for bad in (["bogus"], "input", [3], ["all"]):
        with pytest.raises(PolicyError):
            validate_value("toolFamilies", bad)


@pytest.mark.promise("H4-84")
def test_a_corrupt_value_fails_closed_to_the_default_list_and_says_so(tmp_path: Path) -> None:
    """A validly signed record whose toolFamilies this version cannot read (a family it does
    not know): the reader falls back to the default policy, the session lists the default tools
    only, and the log names the key and the command that fixes it."""
    _, config = dirs(tmp_path)
    key = pair_record(config)
    # Signed as a newer tabwarden would sign a family this one does not have.
    unknown = dataclasses.replace(DEFAULT_POLICY, tool_families=("input", "robots"))
    update(
        config / "trust.json",
        lambda doc: store._with_baseline(doc, key, unknown, int(time.time()), frozenset()),
    )
    log = tmp_path / "mcp.err"
    assert listed_names(tools_list_line(tmp_path, stderr=log)) == DEFAULT_LIST
    said = log.read_text()
    assert "toolFamilies was not read" in said and "'robots' is not a tool family" in said
    assert "tabwarden policy set toolFamilies=" in said
