"""``bench/report.py``: memory is reported as RSS, PSS and USS side by side, per extra session
from the growth between one session and eight, and a saved run from before PSS and USS were
measured still renders."""

from __future__ import annotations

from bench.report import MB, summarize, table
from bench.run import EIGHT, ONE, Results, Settings

SETTINGS = Settings(iterations=1, servers=("tabwarden",), figures=("sessions",), chrome="/x")


def _results() -> Results:
    results = Results()
    results.memory = {
        "tabwarden": {
            ONE: {"rss": 100 * MB, "pss": 80 * MB, "uss": 60 * MB},
            EIGHT: {"rss": 100 * MB + 7 * 70 * MB, "pss": 80 * MB + 7 * 45 * MB, "uss": 300 * MB},
        }
    }
    return results


def test_each_memory_figure_is_reported_and_the_target_judged_on_rss_and_pss() -> None:
    doc = summarize(SETTINGS, _results(), machine={})
    memory = doc["memory"]["tabwarden"]
    assert memory["per_extra_session_mb"] == 70  # RSS, under the key earlier runs used
    assert memory["per_extra_session_pss_mb"] == 45
    assert round(memory["per_extra_session_uss_mb"], 3) == round(240 / 7, 3)
    assert memory["one_session_uss_mb"] == 60
    judged = {t["target"]: (t["value"], t["met"]) for t in doc["targets"]}
    assert judged["memory per extra session ≤ 30 MB (RSS)"] == (70, False)
    assert judged["memory per extra session ≤ 30 MB (PSS)"] == (45, False)
    shown = table(doc)
    assert "| peak RSS per extra session (8 sessions) | 70 MB |" in shown
    assert "| peak PSS per extra session (8 sessions) | 45 MB |" in shown
    assert "| peak USS of the server's own processes, one session | 60 MB |" in shown


def test_a_run_saved_before_pss_and_uss_still_renders_its_rss() -> None:
    doc = summarize(SETTINGS, _results(), machine={})
    doc["memory"] = {"tabwarden": {"one_session_mb": 114.0, "per_extra_session_mb": None}}
    shown = table(doc)
    assert "| peak RSS of the server's own processes, one session | 114 MB |" in shown
    assert "PSS" not in shown.split("Targets")[0]
