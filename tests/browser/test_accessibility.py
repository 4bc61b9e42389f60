"""The extension's own pages (options, popup, confirm) are accessible and fetch nothing from the
network, checked in real headless Chromium with the extension loaded and the host connected, so
the dynamically rendered controls (an approved origin's "remove", a recent client's "Pair") are
there too.

For each page this proves:
  1. every rendered control (button, input, select, textarea, a[href], ARIA widgets) has a
     non-empty accessible name in Chromium's own accessibility tree, computed from a label, its
     text or ARIA (never a placeholder or title alone); a button's visible text is part of its
     name, and no two controls share a name;
  2. Tab from the top visits every enabled control exactly once, in DOM order; no positive
     tabindex anywhere; each focused control shows the page's own focus indicator (an outline of
     at least 2px or a box-shadow, absent when unfocused);
  3. <html lang> and a <title> are set, there is exactly one h1 and heading levels never skip;
     status messages are role=status / aria-live regions; tables have a name and scoped headers;
  4. nothing outside the extension is referenced (script/link/img/... and CSS url()/@import) or
     requested while the page loads and renders.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from tabwarden.bridge.spawner import Spawner, remember_spawner
from tabwarden.cli.browser import ThrowawayBrowser
from tabwarden.cli.demo import provision_throwaway_trust
from tabwarden.manifests import EXTENSION_ID
from tabwarden.trust.audit import AuditLog
from tests.browser.harness import launched

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

BASE = f"chrome-extension://{EXTENSION_ID}/"
ORIGIN = "https://example.com"
# Two recently seen, unpaired MCP clients: two "Pair" buttons that must not share a name.
SPAWNERS = [("/opt/agents/alpha", "aa" * 32), ("/opt/agents/beta", "bb" * 32)]

# Status messages on each page: each must be a live region.
STATUS_IDS = {
    "options.html": ["pairing", "status", "policy-status", "clients-status", "audit-status"],
    "popup.html": ["state", "popup-status"],
    "confirm.html": ["status"],
}

# Roles Chromium gives interactive controls; any such node needs a name.
INTERACTIVE_ROLES = {
    "button",
    "link",
    "textbox",
    "searchbox",
    "combobox",
    "listbox",
    "checkbox",
    "radio",
    "switch",
    "slider",
    "spinbutton",
    "menuitem",
    "tab",
    "ComboBoxSelect",
    "ComboBoxMenuButton",
}

# Everything a person could operate, rendered or not (the page filters out the unrendered).
CONTROLS = (
    'a[href], button, input:not([type="hidden"]), select, textarea, summary, '
    '[contenteditable]:not([contenteditable="false"]), [tabindex], [role="button"], '
    '[role="link"], [role="checkbox"], [role="textbox"]'
)

# Facts about the page that need no CDP: landmarks of structure, live regions, tables, tabindex,
# and every URL the document or its stylesheets point at.
FACTS_JS = """(statusIds) => {
  const shown = (e) => e.checkVisibility({ visibilityProperty: true });
  const headings = [...document.querySelectorAll('h1, h2, h3, h4, h5, h6, [role="heading"]')]
    .filter(shown)
    .map((h) => ({ level: Number(h.getAttribute('aria-level') || h.tagName.slice(1)),
                   text: h.textContent.trim() }));
  const live = (e) => e.getAttribute('role') === 'status' || e.getAttribute('role') === 'alert'
    || ['polite', 'assertive'].includes(e.getAttribute('aria-live'));
  const byName = [...document.querySelectorAll('[id$="status"]')].map((e) => e.id);
  const ids = new Set([...statusIds, ...byName]);
  const status = [...ids].map((id) => {
    const e = document.getElementById(id);
    return { id, exists: e !== null, live: e !== null && live(e) };
  });
  const tables = [...document.querySelectorAll('table')].map((t) => ({
    id: t.id,
    name: (t.getAttribute('aria-label') || t.getAttribute('aria-labelledby')
           || t.caption?.textContent || '').trim(),
    headers: [...t.querySelectorAll('th')]
      .map((th) => ({ text: th.textContent.trim(), scope: th.getAttribute('scope') || '' })),
    headRows: t.tHead ? t.tHead.rows.length : 0,
    bodyCells: [...t.tBodies].flatMap((b) => [...b.rows].map((r) => r.cells.length)),
  }));
  const positive = [...document.querySelectorAll('[tabindex]')]
    .filter((e) => Number(e.getAttribute('tabindex')) > 0)
    .map((e) => e.outerHTML.slice(0, 120));
  // Every URL-valued attribute in the DOM, resolved against the document.
  const refs = [];
  const abs = (v, base = document.baseURI) => new URL(v, base).href;
  const attrs = ['src', 'href', 'poster', 'data', 'action', 'formaction', 'background'];
  for (const e of document.querySelectorAll(attrs.map((a) => `[${a}]`).join(', ') + ', [srcset]')) {
    for (const a of attrs) {
      const v = e.getAttribute(a);
      if (v !== null) refs.push({ where: `<${e.tagName.toLowerCase()} ${a}>`, url: abs(v) });
    }
    for (const part of (e.getAttribute('srcset') || '').split(',').filter((p) => p.trim())) {
      refs.push({ where: 'srcset', url: abs(part.trim().split(/\\s+/)[0]) });
    }
  }
  // ...and every url() / @import in the stylesheets (inline style attributes included).
  const cssUrls = (text, base) =>
    [...text.matchAll(/url\\(\\s*(['"]?)([^'")]*)\\1\\s*\\)/g)].map((m) => abs(m[2], base));
  const walk = (rules, base) => {
    for (const r of rules) {
      if (r instanceof CSSImportRule) {
        refs.push({ where: '@import', url: abs(r.href, base) });
        if (r.styleSheet) walk(r.styleSheet.cssRules, r.styleSheet.href || base);
      } else {
        for (const url of cssUrls(r.cssText, base)) refs.push({ where: 'css url()', url });
      }
    }
  };
  for (const sheet of document.styleSheets) walk(sheet.cssRules, sheet.href || document.baseURI);
  for (const e of document.querySelectorAll('[style]')) {
    for (const url of cssUrls(e.getAttribute('style'), document.baseURI)) {
      refs.push({ where: 'style=', url });
    }
  }
  const resources = performance.getEntriesByType('resource').map((r) => r.name);
  return { lang: document.documentElement.lang, title: document.title.trim(),
           headings, status, tables, positive, refs, resources };
}"""

# A control as the report names it: tag#id, or tag "aria-label or text" when it has no id.
DESCRIBE = """(e) => e.id ? `${e.tagName.toLowerCase()}#${e.id}`
  : `${e.tagName.toLowerCase()} "${(e.getAttribute('aria-label') || e.textContent).trim()}"`"""

# Mark the controls Tab should reach, in DOM order, and record how each looks unfocused.
MARK_JS = """(selector) => {
  const describe = DESCRIBE;
  document.activeElement?.blur?.();
  const style = (e) => {
    const s = getComputedStyle(e);
    return { outline: s.outlineStyle, width: s.outlineWidth, shadow: s.boxShadow };
  };
  const reachable = [...document.querySelectorAll(selector)]
    .filter((e) => !e.disabled && e.tabIndex >= 0 && !e.closest('[inert]')
                   && e.checkVisibility({ visibilityProperty: true }));
  return reachable.map((e, i) => {
    e.dataset.a11ySeq = String(i);
    return { seq: String(i), what: describe(e), ...style(e) };
  });
}""".replace("DESCRIBE", DESCRIBE)

# Where focus is now, and how the focused element looks.
FOCUS_JS = """() => {
  const describe = DESCRIBE;
  const e = document.activeElement;
  if (!e || e === document.body || e === document.documentElement) return null;
  const s = getComputedStyle(e);
  return { seq: e.dataset.a11ySeq ?? null, what: describe(e),
           focusVisible: e.matches(':focus-visible'),
           outline: s.outlineStyle, width: s.outlineWidth, shadow: s.boxShadow };
}""".replace("DESCRIBE", DESCRIBE)


def _px(width: str) -> float:
    return float(width[:-2]) if width.endswith("px") else 0.0


def _indicator(style: dict[str, Any]) -> bool:
    """The page's own focus indicator: an outline of at least 2px (not the UA's thin default ring)
    or a box-shadow."""
    outline = style["outline"] not in ("none", "hidden") and _px(style["width"]) >= 2
    return outline or style["shadow"] != "none"


def _look(style: dict[str, Any]) -> tuple[str, str, str]:
    return style["outline"], style["width"], style["shadow"]


def _winning_source(name: dict[str, Any]) -> dict[str, Any] | None:
    """The name source Chromium used: the first one with a value that was not superseded."""
    sources: list[dict[str, Any]] = name.get("sources", [])
    for source in sources:
        if "value" in source and not source.get("superseded"):
            return source
    return None


async def check_names(context: Any, page: Any) -> list[str]:
    """Every rendered control has a name from a label, text or ARIA; button text is in its name;
    names are unique. Also: no nameless interactive node anywhere in the full AX tree."""
    problems: list[str] = []
    cdp = await context.new_cdp_session(page)
    try:
        await cdp.send("DOM.enable")
        await cdp.send("Accessibility.enable")
        root = (await cdp.send("DOM.getDocument", {"depth": -1}))["root"]["nodeId"]
        found = await cdp.send("DOM.querySelectorAll", {"nodeId": root, "selector": CONTROLS})
        seen: dict[str, str] = {}
        checked = 0
        for node_id in found["nodeIds"]:
            described = (await cdp.send("DOM.describeNode", {"nodeId": node_id}))["node"]
            flat = described.get("attributes", [])
            attrs = dict(zip(flat[::2], flat[1::2], strict=True))
            what = f"<{described['localName']} id={attrs.get('id', '')!r}>"
            backend = described["backendNodeId"]
            tree = await cdp.send(
                "Accessibility.getPartialAXTree",
                {"backendNodeId": backend, "fetchRelatives": False},
            )
            [ax] = [n for n in tree["nodes"] if n.get("backendDOMNodeId") == backend]
            if ax.get("ignored"):
                continue  # not rendered (e.g. the confirm page's hidden #tap): nobody can reach it
            checked += 1
            name = ax.get("name", {})
            text = str(name.get("value", "")).strip()
            if not text:
                problems.append(f"{what}: no accessible name")
                continue
            source = _winning_source(name) or {}
            if source.get("type") == "placeholder" or source.get("attribute") == "title":
                problems.append(f"{what}: name {text!r} comes only from {source.get('attribute')}")
            if text.lower() in seen:
                problems.append(f"{what}: name {text!r} is also {seen[text.lower()]}'s")
            seen[text.lower()] = what
        if checked == 0:
            problems.append("no rendered controls found (the page did not render?)")
        full = await cdp.send("Accessibility.getFullAXTree")
        for n in full["nodes"]:
            role = (n.get("role") or {}).get("value")
            named = str((n.get("name") or {}).get("value", "")).strip()
            if not n.get("ignored") and role in INTERACTIVE_ROLES and not named:
                problems.append(
                    f"AX node role={role} (DOM node {n.get('backendDOMNodeId')}): "
                    "no accessible name"
                )
    finally:
        await cdp.detach()
    # Label in name: a button's or link's visible text must be part of its accessible name.
    mismatches = await page.evaluate("""() => [...document.querySelectorAll('button, a[href]')]
      .filter((e) => e.checkVisibility() && e.getAttribute('aria-label') !== null)
      .map((e) => [e, e.getAttribute('aria-label'), e.innerText.trim()])
      .filter(([, label, text]) => !label.toLowerCase().includes(text.toLowerCase()))
      .map(([e, label, text]) => `<${e.tagName.toLowerCase()} id=${e.id}>: `
        + `aria-label ${JSON.stringify(label)} lacks its visible text ${JSON.stringify(text)}`)""")
    problems += mismatches
    return problems


async def check_keyboard(page: Any) -> tuple[list[str], list[str]]:
    """Tab from the top: every enabled control once, in DOM order, each with a focus indicator.
    Returns (problems, the visited controls) so the caller can check coverage."""
    problems: list[str] = []
    expected = await page.evaluate(MARK_JS, CONTROLS)
    visited: list[dict[str, Any]] = []
    for _ in range(len(expected)):
        await page.keyboard.press("Tab")
        visited.append(await page.evaluate(FOCUS_JS) or {"seq": None, "what": "(nothing)"})
    order = [v["seq"] for v in visited]
    want = [e["seq"] for e in expected]
    if order != want:
        names = {e["seq"]: e["what"] for e in expected}
        problems.append(
            f"Tab order {[v['what'] for v in visited]} is not DOM order {[names[s] for s in want]}"
        )
    # One more Tab leaves the page or wraps to the first control: nothing was left unvisited.
    await page.keyboard.press("Tab")
    after = await page.evaluate(FOCUS_JS)
    if after is not None and expected and after["seq"] != expected[0]["seq"]:
        problems.append(f"after the last control, Tab reached {after['what']}")
    before = {e["seq"]: e for e in expected}
    for v in visited:
        if v.get("seq") is None:
            continue
        unfocused = before[v["seq"]]
        if not v["focusVisible"]:
            problems.append(f"{v['what']}: keyboard focus does not match :focus-visible")
        if not _indicator(v):
            problems.append(
                f"{v['what']}: no visible focus indicator "
                f"(outline {v['outline']} {v['width']}, box-shadow {v['shadow']})"
            )
        elif _indicator(unfocused) and _look(unfocused) == _look(v):
            problems.append(f"{v['what']}: looks the same focused and unfocused")
    return problems, [v["what"] for v in visited]


def check_facts(page_name: str, facts: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    if not facts["lang"]:
        problems.append("<html> has no lang")
    if not facts["title"]:
        problems.append("no <title>")
    levels = [h["level"] for h in facts["headings"]]
    if levels.count(1) != 1:
        problems.append(f"{levels.count(1)} h1 elements, want exactly one")
    if levels and levels[0] != 1:
        problems.append(f"the first heading is h{levels[0]}, not h1")
    for prev, cur, h in zip(levels, levels[1:], facts["headings"][1:], strict=False):
        if cur > prev + 1:
            problems.append(f"heading {h['text']!r} skips from h{prev} to h{cur}")
    for s in facts["status"]:
        if not s["exists"]:
            problems.append(f"#{s['id']} (a status message) is missing")
        elif not s["live"]:
            problems.append(f"#{s['id']} (a status message) is not role=status or aria-live")
    for t in facts["tables"]:
        if not t["name"]:
            problems.append(f"table#{t['id']} has no caption or aria-label")
        if t["headRows"] == 0 or not t["headers"]:
            problems.append(f"table#{t['id']} has no header row")
        for th in t["headers"]:
            if th["scope"] not in ("col", "row", "colgroup", "rowgroup"):
                problems.append(f"table#{t['id']} header {th['text']!r} has no scope")
        for cells in t["bodyCells"]:
            if cells != len(t["headers"]):
                problems.append(
                    f"table#{t['id']} has a row of {cells} cells under {len(t['headers'])} headers"
                )
    problems += [f"positive tabindex: {p}" for p in facts["positive"]]
    for ref in facts["refs"]:
        if not ref["url"].startswith(BASE):
            problems.append(f"{ref['where']} points outside the extension: {ref['url']}")
    for url in facts["resources"]:
        if not url.startswith(BASE):
            problems.append(f"the page loaded {url}")
    return [f"{page_name}: {p}" for p in problems]


def _seed(config: Path) -> None:
    """Trust with one approved origin, two unpaired recent clients and a few audit entries."""
    exe = os.path.realpath("/proc/self/exe")  # the MCP client this test runs is paired
    provision_throwaway_trust(config, client_exe=exe, origins=[ORIGIN])
    now = time.time()
    for n, (path, sha) in enumerate(SPAWNERS):
        remember_spawner(config, Spawner(pid=1, exe=path, sha256=sha, create_time=now), now + n)
    audit = AuditLog(config / "audit.jsonl")
    audit.append("policy_restrict", decision="narrowed", changed=["eval"])
    audit.append("browser_pair", decision="granted", path="webauthn")


async def test_options_popup_and_confirm_pages_are_accessible_and_offline(
    browser: ThrowawayBrowser,
) -> None:
    _seed(browser.root / "config")
    problems: list[str] = []
    tabbed: dict[str, list[str]] = {}

    async def visit(context: Any, path: str, ready: str, prepare: str | None = None) -> None:
        page = await context.new_page()
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        await page.goto(BASE + path)
        await page.wait_for_function(ready, timeout=60_000)
        if prepare:
            await page.evaluate(prepare)
        name = path.split("?")[0]
        facts = await page.evaluate(FACTS_JS, STATUS_IDS[name])
        problems.extend(check_facts(name, facts))
        problems.extend(f"{name}: {p}" for p in await check_names(context, page))
        keyboard, visited = await check_keyboard(page)
        problems.extend(f"{name}: {p}" for p in keyboard)
        tabbed[name] = visited
        problems.extend(f"{name}: requested {u}" for u in requests if not u.startswith(BASE))
        await page.close()

    async with launched(browser) as (context, agent):
        # Options: wait until every section has rendered from the host's answers.
        await visit(
            context,
            "options.html",
            """() => {
            const t = (id) => document.getElementById(id)?.textContent || '';
            const n = (sel) => document.querySelectorAll(sel).length;
            return t('policy-summary').startsWith('Trust record version')
              && t('audit-status').endsWith('entries') && n('#audit tbody tr') > 0
              && n('#clients-recent button') === 2
              && n('#sites-list button[data-origin]') === 1; }""",
        )
        await visit(
            context,
            "popup.html",
            """() => {
            const s = document.getElementById('state')?.textContent || '';
            return s !== '' && !s.startsWith('Loading')
              && document.querySelectorAll('#recent li').length > 0; }""",
        )
        # Confirm: an unknown id shows "expired" with Deny/Allow disabled; enable them as a real
        # request would, so their focus order and indicator are checked too.
        await visit(
            context,
            "confirm.html?id=x",
            "() => (document.getElementById('status')?.textContent || '').includes('expired')",
            "() => { for (const b of document.querySelectorAll('#deny, #allow')) "
            "b.disabled = false; }",
        )
    assert problems == [], "\n".join(problems)
    # The walk covered the dynamic controls and the ones that matter most.
    must = {
        "input#code",
        "button#pair",
        f'button "Remove {ORIGIN}"',
        "button#pair-client-0",
        "button#pair-client-1",
        "button#kill",
        "input#audit-filter",
        "button#audit-export",
    }
    assert must <= set(tabbed["options.html"]), tabbed
    assert tabbed["popup.html"] == ["a#open-options", "button#kill"], tabbed
    assert tabbed["confirm.html"] == ["button#deny", "button#allow"], tabbed
