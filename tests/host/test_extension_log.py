"""The extension's own errors in the host's log (host_call ``extension_error``): one line each,
no control character and every field capped, so a crafted report cannot start a line of its own;
a flood is capped and the dropped ones counted; through the real host, its stderr read back."""

from __future__ import annotations

import logging

import pytest

from tabwarden.host.calls import BadHostCall
from tabwarden.host.extension_log import BURST, MAX_MESSAGE, MAX_STACK, WINDOW_S, ExtensionErrorLog
from tests.fakes import FakeBrowser
from tests.fixtures import host_call, paired_host, refused


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def _lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "tabwarden.host.extension"]


@pytest.mark.promise("H4-82")
def test_a_report_is_one_capped_line_that_cannot_forge_another(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, "tabwarden.host.extension")
    intake = ExtensionErrorLog()
    forged = "boom\ntabwarden-host[1] ERROR: the kill switch is released\r\x1b[2J\u202e"
    assert intake.record(
        {"kind": "error", "where": "worker\n", "message": forged, "stack": "s" * 5000}
    ) == {"logged": True}
    [line] = _lines(caplog)
    assert "\n" not in line and "\r" not in line and "\x1b" not in line and "\u202e" not in line
    assert line.startswith("extension error in worker: boom tabwarden-host[1] ERROR")
    assert line.endswith("s" * MAX_STACK)
    intake.record({"kind": "rejection", "message": "m" * 5000})
    assert _lines(caplog)[-1] == "extension rejection in extension: " + "m" * MAX_MESSAGE


def test_a_report_of_another_kind_is_refused() -> None:
    with pytest.raises(BadHostCall):
        ExtensionErrorLog().record({"kind": "console", "message": "page output"})


@pytest.mark.promise("H4-82")
def test_a_flood_is_capped_and_the_dropped_counted(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "tabwarden.host.extension")
    clock = Clock()
    intake = ExtensionErrorLog(clock=clock)
    logged = [intake.record({"kind": "error", "message": f"e{i}"})["logged"] for i in range(1000)]
    assert logged.count(True) == BURST
    assert len(_lines(caplog)) == BURST
    clock.t += WINDOW_S
    intake.record({"kind": "error", "message": "later", "dropped": 5})
    assert (
        _lines(caplog)[-1]
        == f"extension error in extension: later ({1000 - BURST + 5} more dropped)"
    )


@pytest.mark.promise("H4-82")
def test_through_the_real_host_the_line_reaches_its_log(fake_browser: FakeBrowser) -> None:
    paired_host(fake_browser)
    reply = host_call(
        fake_browser,
        "extension_error",
        {"kind": "error", "where": "worker", "message": "TypeError: x is [masked]\nforged line"},
    )
    assert reply["ok"] is True and reply["result"] == {"logged": True}, reply
    log = fake_browser.wait_stderr(
        "extension error in worker: TypeError: x is [masked] forged line"
    )
    assert "\nforged line" not in log
    refused(
        host_call(fake_browser, "extension_error", {"kind": "log", "message": "x"}), "bad_request"
    )
