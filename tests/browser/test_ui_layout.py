"""The pages a person looks at, laid out in real Chromium at the sizes Chrome gives them, with a
geometry check that fails on overlap or overflow: the options page (a tab, wide and narrow), the
toolbar popup (360 px wide, Chrome caps a popup at 800×600), and the confirm window, opened for
real by an agent's submit click, at shared/confirm-window.js's size less the window's own frame. On
the way, the options page left open shows an agent's new tab and the kill switch engaged from
the popup without a reload (shared/live-refresh.js).

For every visible labelled element (buttons, links, labels, inputs, headings, list items,
paragraphs, terms and their values...), after clipping by its scrolling ancestors: no two boxes
intersect unless one is nested in the other; nothing lies outside the viewport horizontally; no
element's text overflows its own box (``scrollWidth > clientWidth`` on a box that does not
scroll by design). Each page is also saved as a PNG under pytest's tmp dir (the path is printed)
for a person to look at."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from tabwarden.cli.browser import ThrowawayBrowser
from tabwarden.manifests import EXTENSION_ID
from tests.browser.harness import chromium, confirm_page, ok, press, shows
from tests.browser.paired import paired_options_page, provision_for_pairing
from tests.fakes import tool_error

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

BASE = f"chrome-extension://{EXTENSION_ID}/"
EXTENSION = Path(__file__).resolve().parents[2] / "extension"
#: Chrome's popup window frame (its title bar and the popup's own location bar) takes this much
#: of the height windows.create is given; the page gets the rest.
WINDOW_FRAME_PX = 64
POPUP_WIDTH = 360  # popup.css body width; Chrome caps a popup at 800×600
POPUP_MAX_HEIGHT = 600

# Geometry of every visible labelled element, and what is wrong with it (see the docstring).
LAYOUT_JS = """() => {
  const SELECTOR = 'button, a[href], label, input, select, textarea, summary, h1, h2, h3, h4, '
    + 'p, li, dt, dd, th, td, strong, code, img, span, em, nav, table';
  const vw = document.documentElement.clientWidth;
  const problems = [];
  const describe = (e) => {
    const text = (e.innerText || e.value || e.getAttribute('aria-label') || '')
      .trim().replace(/\\s+/g, ' ');
    const id = e.id ? '#' + e.id : '';
    return `${e.tagName.toLowerCase()}${id}${text ? ' "' + text.slice(0, 40) + '"' : ''}`;
  };
  const scrolls = (style) => ['auto', 'scroll'].includes(style.overflowX)
    || ['auto', 'scroll'].includes(style.overflowY);
  // The part of a rect its clipping ancestors let show (null: none of it).
  const clip = (e, r) => {
    let { left, top, right, bottom } = r;
    for (let a = e.parentElement; a; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (s.overflowX === 'visible' && s.overflowY === 'visible') continue;
      const c = a.getBoundingClientRect();
      left = Math.max(left, c.left); right = Math.min(right, c.right);
      top = Math.max(top, c.top); bottom = Math.min(bottom, c.bottom);
      if (right - left < 1 || bottom - top < 1) return null;
    }
    return { left, top, right, bottom };
  };
  const boxes = [];
  for (const e of document.querySelectorAll(SELECTOR)) {
    if (!e.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) continue;
    const style = getComputedStyle(e);
    // Inline boxes wrap: check each line's fragment, not their union.
    const rects = style.display === 'inline'
      ? [...e.getClientRects()] : [e.getBoundingClientRect()];
    for (const r of rects) {
      if (r.width < 1 || r.height < 1) continue;
      const shown = clip(e, r);
      if (shown === null) continue;
      boxes.push({ e, r: shown });
      if (shown.left < -0.5 || shown.right > vw + 0.5) {
        problems.push(`${describe(e)} is outside the viewport horizontally `
          + `(${Math.round(shown.left)}..${Math.round(shown.right)} of ${vw})`);
      }
    }
    if (style.display !== 'inline' && !scrolls(style) && e.clientWidth > 0
        && e.scrollWidth > e.clientWidth + 1 && e.tagName !== 'TABLE') {
      problems.push(`${describe(e)}: its text overflows its box `
        + `(${e.scrollWidth} > ${e.clientWidth})`);
    }
  }
  const overlap = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1
    && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
  for (let i = 0; i < boxes.length; i += 1) {
    for (let j = i + 1; j < boxes.length; j += 1) {
      const a = boxes[i]; const b = boxes[j];
      if (a.e === b.e || a.e.contains(b.e) || b.e.contains(a.e)) continue;
      // A label and the control it labels may share a box only when one holds the other.
      if (overlap(a.r, b.r)) problems.push(`${describe(a.e)} overlaps ${describe(b.e)}`);
    }
  }
  const page = document.documentElement;
  if (page.scrollWidth > page.clientWidth + 1) {
    problems.push(`the page scrolls sideways (${page.scrollWidth} > ${page.clientWidth})`);
  }
  return { problems, checked: boxes.length };
}"""


# Visible text that leads with a raw snake_case code (``host_not_installed``, ``tool_call``...):
# a person reads words first; a code may follow them, or stand as code (<code>, small
# ``.code`` secondary text, a monospace value in a labelled field) or in a closed disclosure,
# never lead a sentence.
RAW_CODE_JS = """() => {
  const CODE = /^[a-z][a-z0-9]*_[a-z0-9_]+/;
  const found = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const text = n.textContent.trim();
    const e = n.parentElement;
    if (!CODE.test(text) || !e) continue;
    if (e.closest('code, .code, script, style, details:not([open]) > :not(summary)')) continue;
    // Shown as code (a monospace name in a labelled field), not as the start of a sentence.
    if (getComputedStyle(e).fontFamily.includes('monospace')) continue;
    if (!e.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) continue;
    found.push(`${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''}: "${text.slice(0, 60)}"`);
  }
  return found;
}"""

# How much of the window the options page's content uses, and whether its cards sit side by side.
WIDTH_JS = """() => {
  const box = (sel) => document.querySelector(sel).getBoundingClientRect();
  const status = box('#status-section'); const sites = box('#sites-section');
  return { window: document.documentElement.clientWidth, main: box('main').width,
    cards: box('.cards').width,
    sideBySide: Math.abs(status.top - sites.top) < 2 && sites.left >= status.right };
}"""


def confirm_window_size() -> tuple[int, int]:
    """CONFIRM_WINDOW's width and height, as shared/confirm-window.js declares them."""
    text = (EXTENSION / "shared" / "confirm-window.js").read_text()
    found = re.search(r"CONFIRM_WINDOW = Object\.freeze\(\{[^}]*width: (\d+), height: (\d+)", text)
    assert found, "CONFIRM_WINDOW's size not found in shared/confirm-window.js"
    return int(found.group(1)), int(found.group(2))


async def check_layout(page: Any, name: str, shots: Path) -> list[str]:
    """Save a PNG of the whole of ``page`` and return its layout problems, each named."""
    await page.evaluate("() => document.fonts.ready")
    # A full-page capture of a page shorter than its viewport repeats it (headless Chromium).
    tall = await page.evaluate("() => document.documentElement.scrollHeight > innerHeight")
    await page.screenshot(path=str(shots / f"{name}.png"), full_page=tall)
    found = await page.evaluate(LAYOUT_JS)
    problems = [f"{name}: {p}" for p in found["problems"]]
    problems += [
        f"{name}: visible text leads with a raw code: {t}" for t in await page.evaluate(RAW_CODE_JS)
    ]
    if found["checked"] < 5:
        problems.append(f"{name}: only {found['checked']} elements laid out (did it render?)")
    return problems


@pytest.mark.promise("H4-08")
async def test_options_popup_and_confirm_window_lay_out_without_overlap_or_overflow(
    browser: ThrowawayBrowser, site: str, tmp_path: Path
) -> None:
    provision_for_pairing(browser, origins=[site])
    shots = tmp_path / "ui-screenshots"
    shots.mkdir()
    print(f"\nUI screenshots: {shots}")
    problems: list[str] = []
    width, height = confirm_window_size()

    async with paired_options_page(browser) as paired:
        context, agent, options = paired.context, paired.agent, paired.page
        # The options page as a person sees it once paired: every section rendered.
        await options.reload()
        await options.wait_for_function(
            """() => {
            const t = (id) => document.getElementById(id)?.textContent || '';
            return t('policy-summary').startsWith('Trust record version')
              && t('audit-status').endsWith('entries')
              && document.querySelectorAll('#sites-list button[data-origin]').length === 1
              && !t('pairing').startsWith('Loading'); }""",
            timeout=60_000,
        )
        assert await options.evaluate("() => document.getElementById('pair-block').open") is False
        # The audit log reads as words: a decision badge, labelled fields, never key=value.
        audit = await options.evaluate(
            """() => [...document.querySelectorAll('#audit tbody tr')].map((tr) => ({
              cells: tr.cells.length, badge: tr.querySelector('.badge')?.dataset.kind || '',
              fields: tr.querySelectorAll('dl.fields dt').length, text: tr.innerText }))"""
        )
        assert audit and all(r["cells"] == 4 and r["badge"] for r in audit), audit
        assert any(r["fields"] > 0 for r in audit), audit
        assert not any(re.search(r"\b[a-z_]+=", r["text"]) for r in audit), audit
        # The state at a glance: connected, this browser paired, the switch off, one site.
        glance = await options.evaluate(
            """() => Object.fromEntries(['connection', 'browser', 'kill', 'sites', 'clients']
              .map((n) => [n, [document.getElementById('glance-' + n).dataset.state,
               document.getElementById('glance-' + n + '-value').textContent]]))"""
        )
        assert glance == {
            "connection": ["good", "Connected"],
            "browser": ["good", "Paired as chromium"],
            "kill": ["good", "Off"],
            "sites": ["good", "1 allowed"],
            "clients": ["good", "1 paired"],
        }, glance
        for label, size in (("options-wide", (1280, 800)), ("options-narrow", (560, 800))):
            await options.set_viewport_size({"width": size[0], "height": size[1]})
            problems.extend(await check_layout(options, label, shots))
            used = await options.evaluate(WIDTH_JS)
            if label == "options-wide":
                # The content uses the window: a wide main column, the cards two to a row.
                assert used["main"] > 700 and used["cards"] > 700, used
                assert used["sideBySide"], used
            else:
                assert not used["sideBySide"], used

        # An agent's tab and a refused call, so the popup has rows to show.
        tab = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]
        await ok(agent, "page_snapshot", {"format": "json", "tabId": tab})
        # Live: the open options page shows the agent's tab without a reload.
        await options.wait_for_function(
            "() => (document.getElementById('agent-tabs')?.textContent || '').includes('demo')",
            timeout=60_000,
        )

        # The confirm window, for real: a submit click asks, the window names who asks,
        # counts down and lists the form's field names (never a value).
        asking = asyncio.create_task(confirm_page(context))
        click = asyncio.create_task(
            agent.call_tool("page_click", {"tabId": tab, "selector": "#go"})
        )
        window = await asking
        await shows(window, "Denies itself in")
        await shows(window, "user = •••")
        body = await window.text_content("body") or ""
        assert "demo" in (await window.text_content("#client") or ""), body
        assert "pw (password) = •••" in body and "hunter2" not in body, body
        await window.set_viewport_size({"width": width, "height": height - WINDOW_FRAME_PX})
        problems.extend(await check_layout(window, "confirm", shots))
        # Deny and Allow fit without scrolling.
        for button in ("#deny", "#allow"):
            box = await window.locator(button).bounding_box()
            assert box is not None and box["y"] + box["height"] <= height - WINDOW_FRAME_PX, (
                button,
                box,
            )
        await press(window, "#deny")
        assert (tool_error(await click) or {}).get("code") == "confirm_denied"

        popup = await context.new_page()
        await popup.set_viewport_size({"width": POPUP_WIDTH, "height": POPUP_MAX_HEIGHT})
        await popup.goto(BASE + "popup.html")
        await popup.wait_for_function(
            """() => document.getElementById('indicator')?.dataset.state === 'connected'
              && document.querySelectorAll('#recent li').length > 1
              && (document.getElementById('agent-tabs')?.textContent || '').includes('demo')""",
            timeout=60_000,
        )
        recent = await popup.text_content("#recent") or ""
        assert "demo · page_click — error: confirm_denied" in recent, recent
        problems.extend(await check_layout(popup, "popup", shots))
        # Engaged: no Engage offer, but how to release it.
        await popup.click("#kill")
        await popup.wait_for_function(
            "() => document.getElementById('indicator')?.dataset.state === 'killed'",
            timeout=60_000,
        )
        assert await popup.is_hidden("#kill")
        assert "tabwarden unkill" in (await popup.text_content("#kill-engaged") or "")
        # ...and the options page, open all along, says so without a reload.
        await options.wait_for_function(
            "() => document.getElementById('killed')?.textContent === 'engaged'",
            timeout=60_000,
        )
        problems.extend(await check_layout(popup, "popup-killed", shots))
    assert problems == [], "\n".join(problems)


#: Each fault the check must catch, alone on an otherwise clean page.
FAULTS = {
    "overlaps": '<button style="position:relative;left:-30px">Second</button>',
    "outside the viewport": '<p style="margin-left:600px;width:200px">Far right</p>',
    "overflows its box": '<p style="width:40px;white-space:nowrap">A line far too long for it</p>',
    "scrolls sideways": '<div style="width:1200px;height:1px"></div>',
}


@pytest.mark.promise("H4-08")
async def test_the_layout_check_catches_overlap_and_overflow(browser: ThrowawayBrowser) -> None:
    """The check above is only worth something if it fails: each fault alone makes it say so, and
    the same page without the fault is clean."""

    async with chromium(browser) as context:
        page = await context.new_page()
        await page.set_viewport_size({"width": 640, "height": 480})
        clean = "<!doctype html><body style='margin:8px'><h1>Title</h1><button>First</button>"
        await page.set_content(clean)
        assert (await page.evaluate(LAYOUT_JS))["problems"] == []
        for fault, html in FAULTS.items():
            await page.set_content(clean + html)
            found = (await page.evaluate(LAYOUT_JS))["problems"]
            assert any(fault in p for p in found), (fault, found)
