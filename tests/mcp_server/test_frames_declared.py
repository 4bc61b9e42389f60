"""Every tool declares what its output can include of the page's frames (``ToolSpec.frames``,
docs/adr/0007-frames-in-rendered-output.md), and the extension enforces it from one table.

The extension's table (``handlers/actions.js`` ``FRAME_OUTPUT``, read by importing the real
module under Node) must list exactly the tools the catalogue declares RENDERS or SAVES, and every
handler that captures pixels, prints a PDF or hands out a download must serve an action of that
table: a new handler that renders the page but whose tool is declared GATED (or not declared in
the table) fails here, before it can ship without the frame check.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tabwarden.mcp_server.catalogue import BY_NAME, CATALOGUE, FrameOutput, ToolSpec

EXTENSION = Path(__file__).resolve().parents[2] / "extension"

#: What a handler calls when its output is the whole page's pixels / PDF, or a file a page made.
RENDERING_CALLS = {
    r"\.capturePage\(": FrameOutput.RENDERS,
    r'"Page\.printToPDF"': FrameOutput.RENDERS,
    r'"Page\.captureScreenshot"': FrameOutput.RENDERS,
    r'"Page\.captureSnapshot"': FrameOutput.RENDERS,
    r"downloads\.wait\(": FrameOutput.SAVES,
}


def _frame_output_table() -> dict[str, str]:
    node = shutil.which("node")
    assert node, "Node.js is required (scripts/setup installs it)"
    script = (
        "import(process.argv[1]).then((m) => "
        "console.log(JSON.stringify(Object.fromEntries(m.FRAME_OUTPUT))))"
    )
    proc = subprocess.run(  # noqa: S603 - Node from PATH, the repo's own module
        [node, "--input-type=module", "-e", script, (EXTENSION / "handlers/actions.js").as_uri()],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    table: dict[str, str] = json.loads(proc.stdout.splitlines()[-1])
    return table


def test_every_tool_declares_its_frames_and_a_spec_without_it_cannot_be_made() -> None:
    assert all(isinstance(spec.frames, FrameOutput) for spec in CATALOGUE)
    field = {f.name: f for f in dataclasses.fields(ToolSpec)}["frames"]
    assert field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
    kwargs = {f.name: getattr(BY_NAME["page_text"], f.name) for f in dataclasses.fields(ToolSpec)}
    del kwargs["frames"]
    with pytest.raises(TypeError, match="frames"):
        ToolSpec(**kwargs)


def test_the_extension_wraps_exactly_the_declared_renders_and_saves_tools() -> None:
    declared = {
        spec.name: spec.frames.value
        for spec in CATALOGUE
        if spec.frames in (FrameOutput.RENDERS, FrameOutput.SAVES)
    }
    assert declared  # the screenshot, the PDF and the download at least
    assert _frame_output_table() == declared


def test_every_handler_that_renders_or_saves_serves_a_tool_declared_so() -> None:
    found: dict[str, FrameOutput] = {}
    for source in sorted((EXTENSION / "handlers").glob("*.js")):
        text = source.read_text("utf-8")
        starts = [(m.start(), m.group(1)) for m in re.finditer(r"function (\w+)\(", text)]
        for pattern, kind in RENDERING_CALLS.items():
            for call in re.finditer(pattern, text):
                enclosing = [name for at, name in starts if at < call.start()]
                assert enclosing, f"{source.name}: {pattern} outside a function"
                routes = re.findall(rf'\["([a-z_]+)", {enclosing[-1]}\]', text)
                assert routes, f"{source.name}: {enclosing[-1]} renders but serves no action"
                for action in routes:
                    found[action] = kind
    assert found, "the scan found no rendering handler: its patterns are stale"
    for action, kind in found.items():
        assert BY_NAME[action].frames is kind, (action, BY_NAME[action].frames, kind)
