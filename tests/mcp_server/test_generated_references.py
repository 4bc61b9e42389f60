"""Every file derived from the tool catalogue is what its one generator writes from it: the
tools snapshot (tools_list.json), the README's Tools table, docs/protocol.md's action catalogue
and the extension's worker/catalogue.js. A tool declared, changed or removed in
mcp_server/catalogue/ without regenerating fails here, naming the command that fixes it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tabwarden.mcp_server.catalogue import generate

REPO = Path(__file__).resolve().parents[2]


def test_every_generated_file_is_what_the_generator_writes() -> None:
    stale = [rel for rel, (now, fresh) in generate.generated(REPO).items() if now != fresh]
    assert stale == [], f"stale: {', '.join(stale)}; run `{generate.COMMAND}`"


def test_the_check_fails_on_a_hand_edit_and_write_repairs_it(tmp_path: Path) -> None:
    for rel in generate.TARGETS:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text((REPO / rel).read_text("utf-8"), "utf-8")
    edited = tmp_path / "extension/worker/catalogue.js"
    edited.write_text(edited.read_text("utf-8").replace('"page_pdf", "renders"', ""), "utf-8")
    table = tmp_path / "README.md"
    table.write_text(table.read_text("utf-8").replace("| `tab_list` |", "| `tab_lost` |"), "utf-8")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "tabwarden.mcp_server.catalogue.generate", *args]
        argv += ["--root", str(tmp_path)]
        return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)  # noqa: S603

    checked = run()
    assert checked.returncode == 1
    assert "extension/worker/catalogue.js is stale" in checked.stderr
    assert "README.md is stale" in checked.stderr
    assert generate.COMMAND in checked.stderr
    assert run("--write").returncode == 0
    assert run().returncode == 0
    for rel in generate.TARGETS:
        assert (tmp_path / rel).read_text("utf-8") == (REPO / rel).read_text("utf-8"), rel
