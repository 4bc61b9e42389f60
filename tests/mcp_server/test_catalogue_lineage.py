"""Lineage by construction (a tool that forgets cannot load): every argument of every tool that can
carry text declares what it is for the provenance ledger (``catalogue.Lineage``), and a catalogue
with an argument that declares nothing does not load — so ``tabwarden mcp`` cannot start with a new
tool whose address, request or typed text the provenance gate would silently skip."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Annotated

import pytest
from pydantic import BaseModel, Field

from tabwarden.mcp_server import catalogue
from tabwarden.mcp_server.catalogue import (
    BY_NAME,
    CATALOGUE,
    Lineage,
    Relay,
    TabArgs,
    ToolSpec,
    declared_texts,
    undeclared_lineage,
)

ROOT = Path(__file__).resolve().parents[2]


def _spec(name: str, arguments: type[catalogue.Arguments]) -> ToolSpec:
    return ToolSpec(
        name=name,
        title="t",
        description="d",
        arguments=arguments,
        result=catalogue.Done,
        annotations=catalogue.ACT,
        gate=catalogue.Gate.ORIGIN,
        risk=catalogue.Risk.MEDIUM,
        frames=catalogue.FrameOutput.GATED,
        call=Relay(),
        docs=catalogue.Reference(does="d", args="a", result="r"),
    )


def test_every_tool_declares_the_lineage_of_every_text_argument() -> None:
    assert {spec.name: undeclared_lineage(spec.arguments) for spec in CATALOGUE} == {
        spec.name: [] for spec in CATALOGUE
    }


class _Upload(TabArgs):
    url: Annotated[str, Field(max_length=100)]  # declares nothing
    note: Annotated[str | None, Lineage.INERT] = None


class _Target(catalogue.Model):
    href: str  # declares nothing, one level down
    kind: Annotated[str, Lineage.INERT] = "x"


class _Nested(TabArgs):
    to: _Target | None = None
    tags: dict[str, list[str]] | None = None  # declares nothing, inside containers


def test_a_new_tool_with_an_undeclared_text_argument_does_not_load() -> None:
    with pytest.raises(TypeError, match=r"page_upload_somewhere: .*Lineage.*: url$"):
        catalogue._index((*CATALOGUE, _spec("page_upload_somewhere", _Upload)))
    with pytest.raises(TypeError, match=r"to\.href, tags$"):
        catalogue._index((_spec("page_nested", _Nested),))


def test_the_loaded_catalogue_went_through_the_check() -> None:
    """BY_NAME is what _index returns: the check ran on every tool served."""
    assert set(BY_NAME) == {spec.name for spec in CATALOGUE}


def test_what_each_gated_tool_declares() -> None:
    def gated(name: str) -> dict[str, Lineage]:
        fields = BY_NAME[name].arguments.model_fields
        return {
            field: lineage
            for field, info in fields.items()
            for lineage in info.metadata
            if isinstance(lineage, Lineage) and lineage is not Lineage.INERT
        }

    assert gated("tab_open") == {"url": Lineage.ADDRESS}
    assert gated("page_navigate") == {"url": Lineage.ADDRESS}
    assert gated("page_fetch") == {
        "url": Lineage.REQUEST_TARGET,
        "body": Lineage.REQUEST_BODY,
        "headers": Lineage.REQUEST_BODY,
    }
    assert gated("page_fill") == {"value": Lineage.TYPED}
    assert gated("page_type") == {"value": Lineage.TYPED}
    assert gated("page_select") == {
        "value": Lineage.TYPED,
        "values": Lineage.TYPED,
        "label": Lineage.TYPED,
    }
    assert gated("page_dialog") == {"promptText": Lineage.TYPED}
    assert gated("page_keys") == {"keys": Lineage.KEYS}
    assert gated("page_press") == {"key": Lineage.KEYS}


def test_declared_texts_reads_lists_mappings_and_leaves_inert_out() -> None:
    fetch = BY_NAME["page_fetch"].arguments.model_validate(
        {
            "tabId": 1,
            "url": "http://a.test/",
            "method": "POST",
            "body": "b",
            "headers": {"accept": "h"},
            "saveAs": "file.txt",
        }  # fmt: skip
    )
    assert list(declared_texts(fetch)) == [
        (Lineage.REQUEST_TARGET, "http://a.test/"),
        (Lineage.REQUEST_BODY, "b"),
        (Lineage.REQUEST_BODY, "h"),
    ]
    select = BY_NAME["page_select"].arguments.model_validate(
        {"tabId": 1, "selector": "#s", "values": ["x", "y"]}
    )
    assert list(declared_texts(select)) == [(Lineage.TYPED, "x"), (Lineage.TYPED, "y")]


#: Tools that declare gated lineage but never carry any: one key types at most one character,
#: shorter than any recorded item (provenance.MIN_VALUE). Were one ever to carry lineage, the
#: extension's gate refuses it (no rule: refused before the handler runs).
NEVER_CARRIES_LINEAGE = {"page_press"}


def _lineage_rules() -> dict[str, object]:
    """The extension gate's LINEAGE_RULES, as the service worker builds it (imported in Node)."""
    node = shutil.which("node")
    assert node, "Node.js is required (scripts/setup installs it)"
    script = (
        "import(process.argv[1]).then((m) => "
        "console.log(JSON.stringify(Object.fromEntries(m.LINEAGE_RULES))))"
    )
    gate = ROOT / "extension" / "worker" / "provenance-gate.js"
    proc = subprocess.run(  # noqa: S603 - Node from PATH, the repo's own module
        [node, "--input-type=module", "-e", script, gate.as_uri()],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    rules: dict[str, object] = json.loads(proc.stdout.splitlines()[-1])
    return rules


def test_the_gate_decides_each_address_on_the_argument_the_catalogue_declares() -> None:
    addressed = {
        "tab_open": {"address": "url"},
        "page_navigate": {"address": "url"},
        "page_fetch": {"address": "url", "request": True},
    }
    rules = _lineage_rules()
    assert {name: rule for name, rule in rules.items() if rule != "handler"} == addressed


@pytest.mark.promise("H4-53")
def test_every_tool_whose_arguments_carry_lineage_has_a_rule_in_the_extensions_gate() -> None:
    """The server attaches lineage to a call of every tool with a gated declaration; the
    extension's gate (one wrapper around every route) must know where to decide each, or it
    refuses the call: held here so a new gated tool cannot be refused by surprise, nor a rule be
    left for a tool that no longer carries lineage."""
    rules = set(_lineage_rules())

    def gated(spec: ToolSpec) -> bool:
        def walk(model: type[BaseModel]) -> bool:
            for info in model.model_fields.values():
                if any(isinstance(m, Lineage) and m is not Lineage.INERT for m in info.metadata):
                    return True
                if any(walk(n) for n in catalogue._nested_models(info.annotation)):
                    return True
            return False

        return walk(spec.arguments)

    carrying = {spec.name for spec in CATALOGUE if gated(spec)} - NEVER_CARRIES_LINEAGE
    assert rules == carrying
