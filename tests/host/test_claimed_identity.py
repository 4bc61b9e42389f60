"""The host measures the client itself (a claim can be copied): the executable that spawned the
connecting MCP server, never the hash the admission frame claims. Real processes: a real host, a
real socket, and a child process that connects claiming an identity."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.fakes import FakeBrowser, host_env
from tests.fixtures import (
    answer_one_tab_list,
    nothing_relayed,
    our_identity,
    our_interpreter,
    pair_record,
)
from tests.trust import SHA_A

#: A client that connects with the identity it is told to claim and asks for the tab list.
CLIENT = textwrap.dedent(
    """
    import asyncio, json, os, sys, time
    from tabwarden.mcp_server.bridge_client import BridgeClient, BridgeError

    async def main() -> None:
        client = BridgeClient(
            label="test", env={"TABWARDEN_RUNTIME_DIR": os.environ["TABWARDEN_RUNTIME_DIR"]},
            client_sha256=sys.argv[1],
        )
        try:
            deadline = time.monotonic() + 30
            while not (await client.status()).extension_connected:
                if time.monotonic() > deadline:
                    raise SystemExit("the extension never connected")
                await asyncio.sleep(0.02)
            result = await client.call("tab_list")
            print(json.dumps({"ok": result}))
        except BridgeError as exc:
            print(json.dumps({"code": exc.code}))
        finally:
            await client.close()

    asyncio.run(main())
    """
)


def _connect_claiming(browser: FakeBrowser, tmp_path: Path, claim: str) -> dict[str, object]:
    """Run the client as our child: its spawner, as the host measures it, is this process."""
    script = tmp_path / "client.py"
    script.write_text(CLIENT)
    done = subprocess.run(
        [sys.executable, str(script), claim],
        capture_output=True,
        text=True,
        env=host_env(browser.runtime),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    answer: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return answer


@pytest.mark.promise("H1-07", "H2-07")
def test_claiming_a_paired_clients_hash_is_refused_and_logged(
    fake_browser: FakeBrowser, tmp_path: Path
) -> None:
    """The paired client's hash is readable in trust.json; claiming it gets nothing."""
    config = fake_browser.runtime.parent / "config"
    pair_record(config)
    from tabwarden.trust import store
    from tabwarden.trust.keystore import FileStore

    key = FileStore(config / "host-key.pem").load()
    assert key is not None
    store.add_client(config / "trust.json", key, "claude", "/usr/bin/claude", SHA_A, 1_700_000_000)
    fake_browser.wait_socket()
    fake_browser.hello()
    answer = _connect_claiming(fake_browser, tmp_path, SHA_A)
    assert answer == {"code": "client_not_paired"}, answer
    fake_browser.wait_stderr("claims client")
    nothing_relayed(fake_browser)


@pytest.mark.promise("H1-07", "H2-07")
def test_the_measured_client_is_served_when_paired(
    fake_browser: FakeBrowser, tmp_path: Path
) -> None:
    config = fake_browser.runtime.parent / "config"
    pair_record(config, client_exe=our_interpreter())
    fake_browser.wait_socket()
    fake_browser.hello()
    import threading

    answering = threading.Thread(target=answer_one_tab_list, args=(fake_browser,), daemon=True)
    answering.start()
    honest = our_identity().sha256
    assert _connect_claiming(fake_browser, tmp_path, honest) == {"ok": {"tabs": []}}
    answering.join(10)
    # Claiming nothing is the same: the host's own measurement is what counts.
    answering = threading.Thread(target=answer_one_tab_list, args=(fake_browser,), daemon=True)
    answering.start()
    assert _connect_claiming(fake_browser, tmp_path, "") == {"ok": {"tabs": []}}
    answering.join(10)


def _answer_and_keep(browser: FakeBrowser, seen: list[dict[str, object]]) -> None:
    """Play the extension for one relayed ``tab_list`` and keep the request the host sent."""
    while (request := browser.receive())["type"] == "session_end":
        pass
    seen.append(request)
    browser.send({"type": "reply", "id": request["id"], "ok": True, "result": {"tabs": []}})


@pytest.mark.promise("H1-07", "H4-05")
def test_the_request_names_the_paired_label_the_host_measured(
    fake_browser: FakeBrowser, tmp_path: Path
) -> None:
    """The confirm window and the popup say which client asks: the host adds the label the person
    paired it under, from its own measurement — a claim in the admission frame changes nothing."""
    config = fake_browser.runtime.parent / "config"
    pair_record(config, client_exe=our_interpreter(), label="claude-code")
    fake_browser.wait_socket()
    fake_browser.hello()
    import threading

    seen: list[dict[str, object]] = []
    for claim in (our_identity().sha256, ""):
        answering = threading.Thread(
            target=_answer_and_keep, args=(fake_browser, seen), daemon=True
        )
        answering.start()
        assert _connect_claiming(fake_browser, tmp_path, claim) == {"ok": {"tabs": []}}
        answering.join(10)
    assert [r.get("client") for r in seen] == ["claude-code", "claude-code"], seen


@pytest.mark.promise("H1-04", "H4-05")
def test_no_label_while_nothing_is_paired(fake_browser: FakeBrowser, tmp_path: Path) -> None:
    """With no client paired there is no label to show because nothing is relayed: the host
    refuses the measured client ``client_not_paired`` itself (it does not lean on hop 1)."""
    config = fake_browser.runtime.parent / "config"
    pair_record(config)  # a host key, no client
    before = (config / "trust.json").read_bytes()
    fake_browser.wait_socket()
    fake_browser.hello()
    assert _connect_claiming(fake_browser, tmp_path, "") == {"code": "client_not_paired"}
    assert _connect_claiming(fake_browser, tmp_path, our_identity().sha256) == {
        "code": "client_not_paired"
    }
    nothing_relayed(fake_browser)
    assert (config / "trust.json").read_bytes() == before
