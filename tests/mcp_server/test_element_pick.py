"""Every element tool picks its element the same way and says what it acted on, by construction:
its arguments (ElementNamed) carry ``match`` and ``ignoreCase`` (and ``index`` with no default),
and its result model carries ``target`` (catalogue/target.py). Generated over the whole catalogue,
so a new element tool without them fails here."""

from __future__ import annotations

import pytest

from tabwarden.mcp_server.catalogue import CATALOGUE, ElementNamed
from tabwarden.mcp_server.catalogue.target import Target
from tabwarden.mcp_server.catalogue.vocabulary import ToolSpec

ELEMENT_TOOLS = [spec for spec in CATALOGUE if issubclass(spec.arguments, ElementNamed)]


def test_the_catalogue_has_element_tools() -> None:
    names = {spec.name for spec in ELEMENT_TOOLS}
    assert {"page_click", "page_fill", "page_select", "page_type", "page_hover"} <= names


@pytest.mark.parametrize("spec", ELEMENT_TOOLS, ids=lambda s: s.name)
def test_every_element_tool_takes_match_and_ignore_case(spec: ToolSpec) -> None:
    props = spec.arguments.model_json_schema()["properties"]
    assert props["match"]["enum"] == ["exact", "substring"]
    assert props["match"]["default"] == "exact"
    assert props["match"]["description"]
    assert props["ignoreCase"]["type"] == "boolean"
    assert props["ignoreCase"]["default"] is False
    assert props["ignoreCase"]["description"]
    assert props["index"].get("default") is None, "index must not default to a match"


@pytest.mark.parametrize("spec", ELEMENT_TOOLS, ids=lambda s: s.name)
def test_every_element_tool_result_names_its_target(spec: ToolSpec) -> None:
    field = spec.result.model_fields.get("target")
    assert field is not None, f"{spec.name}'s result model has no target"
    assert Target in getattr(field.annotation, "__args__", (field.annotation,))


@pytest.mark.parametrize("spec", ELEMENT_TOOLS, ids=lambda s: s.name)
def test_the_wire_sends_match_and_ignore_case_only_when_asked(spec: ToolSpec) -> None:
    # Only the element part of the arguments is looked at (the tool's own fields are its tests').
    model = spec.arguments
    assert issubclass(model, ElementNamed)
    sent = model.model_construct(tabId=1, text="Save").element()
    assert "match" not in sent and "ignoreCase" not in sent and "index" not in sent
    asked = model.model_construct(tabId=1, text="Save", match="substring", ignoreCase=True, index=2)
    assert {k: asked.element()[k] for k in ("match", "ignoreCase", "index")} == {
        "match": "substring",
        "ignoreCase": True,
        "index": 2,
    }


def test_a_result_with_a_target_serialises_it_and_leaves_it_out_when_unset() -> None:
    from tabwarden.mcp_server.catalogue.target import ElementDone

    done = ElementDone.model_validate(
        {"clicked": True, "target": {"ref": "@e3", "role": "button", "name": "Save"}}
    )
    assert done.model_dump(mode="json", exclude_none=True)["target"] == {
        "ref": "@e3",
        "role": "button",
        "name": "Save",
    }
    framed = ElementDone.model_validate(
        {"clicked": True, "target": {"ref": "@e9", "role": "link", "name": "x", "frame": 7}}
    )
    assert framed.model_dump(mode="json")["target"]["frame"] == 7
    assert "target" not in ElementDone.model_validate({"pressed": True}).model_dump(mode="json")
