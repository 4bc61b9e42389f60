"""Answer Chrome's own extension-permission dialog from a test, at the X11 level.

When the confirm page (extension/ui/confirm-page.js) calls
``chrome.permissions.request({origins: [pattern]})`` for an *optional* host permission, Chrome
shows a native Views dialog ("<ext> has requested additional permissions. It could: Read and
change your data on <host>", buttons **Deny** (default, focused) and **Allow**). CDP input cannot
reach it, and in headless Chromium the request simply never resolves (measured: still pending
15 s after the click; the confirm window would then time out as a denial). So a test runs
Chromium headful under Xvfb and clicks the dialog with ``xdotool`` (XTEST input).

Usage (the extension must NOT already hold the origin at install, e.g. ``ThrowawayBrowser(
grant_loopback=False)``, or no dialog appears and the helper returns with no clicks)::

    async with chromium(browser, x_display) as context, mcp(browser) as agent:
        ...
        opening = asyncio.create_task(agent.call_tool("tab_open", {"url": url}))
        window = await confirm_page(context)
        await press(window, "#allow")            # raises Chrome's dialog (the click is the gesture)
        answer = await answer_permission_dialog(x_display, True, when_done(opening), 30)
        assert answer.clicks                     # the dialog was really shown and answered
        result = await opening

What was measured (Debian chromium 156, Xvfb 1600x1000x24, no window manager, popup opened by
confirm-window.js at 460x360; see the report that came with this file):

* The dialog is **tab-modal inside our confirm popup**: no new X window appears. It is drawn at
  the top of the popup's content area (about 448 px wide, ~6 px from the popup's left edge,
  buttons ~150 px below the popup's top for a one-line host) over a grey scrim covering our page.
  Its Deny/Allow buttons sit almost exactly where our page's own Deny/Allow buttons are, so
  blind coordinates are a bad idea: this module clicks only points it *found* in a screenshot of
  the popup as the dialog's buttons.
* The popup X window (WM_CLASS ``crx_<extension id>``, name = page title "tabwarden — confirm")
  is at (20, 20) without a window manager and holds the X input focus.
* The dialog ignores input for its first ~0.5 s (Chrome's InputEventActivationProtector:
  ui/views/input_event_activation_protector.cc rejects a mouse event within the double-click
  interval, 500 ms, of the dialog being shown, AND any mouse event within 500 ms of the previous
  one, so clicking "every 0.25 s" can keep getting rejected). Hence the first click waits
  ``settle_s`` (0.6 s) after the dialog is first seen and repeats are ``interval_s`` (0.7 s) apart.
  In practice the dialog is fully painted (both buttons detectable) ~0.5 s after the ``#allow``
  click and the first click was always accepted (34/34 with the defaults, 3/3 with settle 0).
* Measured outcome: two series of 10/10 Allow + 5/5 Deny through the real chain (fresh
  ThrowawayBrowser and Xvfb each, extension with ``optional_host_permissions``, origin
  http://127.0.0.1:P; also http://localhost:P 1/1 + 1/1), each answered by ONE click: after the
  ``#allow`` click the dialog was seen at ~0.5 s (once 0.75 s), clicked at ~1.25-1.5 s, and the
  tool result was back at ~1.5 s (max 1.75 s); ~4.3 s per whole run including the browser start.
* Buttons are located by colour, not by fixed offsets: both are Material "blue" buttons (Deny is
  the filled prominent one, ~#0b57d0; Allow the tonal one, ~#d3e3fd), while our page's buttons are
  grey (#efefef) and its focus ring is a 2 px outline, which the fill-ratio test rejects. Allow is
  the trailing (rightmost) button on Linux.

Needs ``Xvfb``, ``xdotool`` and ImageMagick's ``import`` (Debian: ``apt-get install -y xvfb
xdotool imagemagick``). Launch Chromium with ``headless=False``, ``no_viewport=True`` and
``env=dict(browser.env, DISPLAY=display)``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

TOOLS = ("Xvfb", "xdotool", "import")
# xdotool regex for the confirm popup's title, "tabwarden — confirm" (the dash is not ASCII).
CONFIRM_WINDOW_NAME = "^tabwarden .* confirm$"
X11_SOCKETS = Path("/tmp/.X11-unix")  # noqa: S108 - where every X server puts its socket
X11_LOCKS = Path("/tmp")  # noqa: S108 - and its .X<n>-lock file

Point = tuple[int, int]


def missing_tools() -> list[str]:
    """The external programs this module needs that are missing from PATH."""
    return [t for t in TOOLS if shutil.which(t) is None]


@contextlib.contextmanager
def xvfb(
    displays: range = range(90, 100), screen: str = "1600x1000x24", ready_s: float = 10.0
) -> Iterator[str]:
    """Start ``Xvfb :N -nolisten tcp`` on the first free N in ``displays``; yield ``":N"``; kill it.

    A display is free when neither /tmp/.X{N}-lock nor /tmp/.X11-unix/X{N} exists; if Xvfb still
    exits (a race with another starter) the next number is tried.
    """
    xvfb_bin = shutil.which("Xvfb")
    if xvfb_bin is None:
        raise RuntimeError("Xvfb is not installed (apt-get install -y xvfb)")
    for n in displays:
        socket = X11_SOCKETS / f"X{n}"
        if (X11_LOCKS / f".X{n}-lock").exists() or socket.exists():
            continue
        proc = subprocess.Popen(  # noqa: S603 - Xvfb from PATH, our own arguments
            [xvfb_bin, f":{n}", "-nolisten", "tcp", "-screen", "0", screen],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        end = time.monotonic() + ready_s
        while proc.poll() is None and not socket.exists() and time.monotonic() < end:
            time.sleep(0.05)
        if proc.poll() is not None or not socket.exists():
            _kill(proc)
            continue
        try:
            yield f":{n}"
        finally:
            _kill(proc)
        return
    raise RuntimeError(f"no free X display in :{displays.start}..:{displays.stop - 1}")


@pytest.fixture
def x_display() -> Iterator[str]:
    """A private Xvfb display for one test (fails, never skips, when the tools are missing: the
    browser tests must not pass without having driven a real browser)."""
    missing = missing_tools()
    if missing:
        pytest.fail(f"missing {', '.join(missing)}: apt-get install -y xvfb xdotool imagemagick")
    with xvfb() as display:
        yield display


def _kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# -- finding the dialog ---------------------------------------------------------------------------


def _bluish(r: int, g: int, b: int) -> bool:
    """Material blue buttons: the filled #0b57d0 (also hovered/pressed shades) and the tonal
    #d3e3fd. Greys (our page, the scrim) and white are not."""
    return b >= 150 and b - r >= 35 and b - g >= 20


def parse_ppm(data: bytes) -> tuple[int, int, bytes]:
    """(width, height, RGB bytes) of an 8-bit binary PPM (``import -depth 8 ppm:-``)."""
    fields: list[bytes] = []
    i = 0
    while len(fields) < 4:
        while data[i : i + 1].isspace():
            i += 1
        if data[i : i + 1] == b"#":
            i = data.index(b"\n", i) + 1
            continue
        j = i
        while not data[j : j + 1].isspace():
            j += 1
        fields.append(data[i:j])
        i = j
    if fields[0] != b"P6" or fields[3] != b"255":
        raise ValueError("expected an 8-bit P6 PPM")
    w, h = int(fields[1]), int(fields[2])
    return w, h, data[i + 1 : i + 1 + w * h * 3]


@dataclass(frozen=True)
class Blob:
    x0: int
    y0: int
    x1: int
    y1: int
    pixels: int

    @property
    def centre(self) -> Point:
        return ((self.x0 + self.x1) // 2, (self.y0 + self.y1) // 2)

    @property
    def fill(self) -> float:
        return self.pixels / ((self.x1 - self.x0 + 1) * (self.y1 - self.y0 + 1))


def _blobs(w: int, h: int, rgb: bytes) -> list[Blob]:
    """Connected (row-run based) regions of bluish pixels."""
    # Runs of bluish pixels per row, merged into blobs when they overlap the previous row's runs.
    parent: list[int] = []
    boxes: list[list[int]] = []  # x0, y0, x1, y1, pixels

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    prev: list[tuple[int, int, int]] = []
    for y in range(h):
        row = rgb[y * w * 3 : (y + 1) * w * 3]
        runs: list[tuple[int, int, int]] = []
        x = 0
        while x < w:
            if _bluish(row[3 * x], row[3 * x + 1], row[3 * x + 2]):
                s = x
                while x < w and _bluish(row[3 * x], row[3 * x + 1], row[3 * x + 2]):
                    x += 1
                label = len(parent)
                parent.append(label)
                boxes.append([s, y, x - 1, y, x - s])
                for ps, pe, pl in prev:
                    if ps <= x - 1 and pe >= s:
                        a, b = find(pl), find(label)
                        if a != b:
                            parent[b] = a
                runs.append((s, x - 1, label))
            else:
                x += 1
        prev = runs
    merged: dict[int, list[int]] = {}
    for label, (x0, y0, x1, y1, n) in enumerate(boxes):
        root = find(label)
        m = merged.setdefault(root, [x0, y0, x1, y1, 0])
        m[0], m[1], m[2], m[3] = min(m[0], x0), min(m[1], y0), max(m[2], x1), max(m[3], y1)
        m[4] += n
    return [Blob(*m) for m in merged.values()]


def find_dialog_buttons(w: int, h: int, rgb: bytes) -> tuple[Point, Point] | None:
    """(deny, allow) centres, in the image's coordinates, of the permission dialog's two buttons,
    or None when the dialog is not showing. Buttons: solidly filled bluish blobs 40..220 x 20..60
    px; the dialog shows exactly two side by side on one row (Deny leading, Allow trailing)."""
    buttons = [
        b
        for b in _blobs(w, h, rgb)
        if 40 <= b.x1 - b.x0 + 1 <= 220 and 20 <= b.y1 - b.y0 + 1 <= 60 and b.fill >= 0.6
    ]
    for i, a in enumerate(buttons):
        for b in buttons[i + 1 :]:
            if abs(a.centre[1] - b.centre[1]) <= 4 and (a.x1 < b.x0 or b.x1 < a.x0):
                left, right = (a, b) if a.x0 < b.x0 else (b, a)
                if 0 < right.x0 - left.x1 <= 40:  # buttons of one dialog row sit close together
                    return left.centre, right.centre
    return None


# -- talking to the X server ----------------------------------------------------------------------


async def _run(display: str, *argv: str, timeout: float = 10.0) -> tuple[int, bytes]:
    proc = await asyncio.create_subprocess_exec(
        *argv,
        env=dict(os.environ, DISPLAY=display),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    except asyncio.TimeoutError:
        proc.kill()
        await proc.wait()
        return -1, b""
    return proc.returncode or 0, out


async def find_windows(display: str, name_regex: str = CONFIRM_WINDOW_NAME) -> list[int]:
    """Visible X windows whose title matches ``name_regex`` (xdotool's regex)."""
    rc, out = await _run(display, "xdotool", "search", "--onlyvisible", "--name", name_regex)
    return [int(w) for w in out.split()] if rc == 0 else []


async def screenshot(display: str, window: int) -> tuple[int, int, bytes] | None:
    """(width, height, RGB) of one X window, or None when it is gone."""
    rc, out = await _run(display, "import", "-window", str(window), "-depth", "8", "ppm:-")
    if rc != 0 or not out:
        return None
    try:
        return parse_ppm(out)
    except (ValueError, IndexError):
        return None


async def click(display: str, window: int, at: Point) -> bool:
    """Left-click at ``at`` relative to ``window`` (XTEST: real OS-level input)."""
    x, y = at
    argv = ("xdotool", "mousemove", "--window", str(window), str(x), str(y), "click", "1")
    rc, _ = await _run(display, *argv)
    return rc == 0


def when_done(task: asyncio.Future[Any]) -> Callable[[], Awaitable[bool]]:
    """A ``done`` for ``answer_permission_dialog``: the tool call's task has finished (the page's
    ``#status`` is set just before, but the extension closes the window right after, so the task
    is the signal that never races)."""

    async def done() -> bool:
        return task.done()

    return done


# -- the helper tests call ------------------------------------------------------------------------


@dataclass
class DialogAnswer:
    """What ``answer_permission_dialog`` did (seconds are from its start)."""

    seen_after_s: float | None = None
    clicks: list[float] = field(default_factory=list)
    done_after_s: float = 0.0
    window: int | None = None
    button: Point | None = None


async def answer_permission_dialog(
    display: str,
    allow: bool,
    done: Callable[[], Awaitable[bool]],
    deadline_s: float = 30.0,
    *,
    window_name: str = CONFIRM_WINDOW_NAME,
    settle_s: float = 0.6,
    interval_s: float = 0.7,
    poll_s: float = 0.2,
    evidence: Path | None = None,
) -> DialogAnswer:
    """Click Chrome's permission dialog's Allow (or Deny) in our confirm popup until ``done()``.

    Call it right after the test clicked the confirm page's ``#allow`` (which raised the dialog).
    Every ``poll_s`` it screenshots each visible window titled ``window_name`` and looks for the
    dialog's two buttons (``find_dialog_buttons``); once seen it waits ``settle_s`` (Chrome ignores
    input to a fresh dialog), clicks the chosen button, and clicks again every ``interval_s`` while
    the dialog is still there and ``done()`` is false. It never clicks anywhere it did not find one
    of the dialog's buttons, so it cannot press our own page's Deny/Allow (which are, moreover,
    disabled once ``#allow`` was clicked).

    ``done`` should become true once the outcome is known, e.g. the tool call's task is done or the
    confirm page's ``#status`` is non-empty (count a closed page as done). Raises ``TimeoutError``
    after ``deadline_s``, first saving a screenshot of the whole screen to ``evidence`` if given.
    Returns what it did: ``clicks`` is empty when no dialog was ever seen (e.g. the extension
    already held the host permission), so tests should assert on it.
    """
    loop = asyncio.get_running_loop()
    start = loop.time()
    report = DialogAnswer()
    next_click = 0.0
    while not await done():
        now = loop.time()
        if now - start > deadline_s:
            if evidence is not None:
                await _run(display, "import", "-window", "root", str(evidence))
            raise TimeoutError(
                f"Chrome's permission dialog was not answered within {deadline_s:.0f} s ({report})"
            )
        target: tuple[int, Point] | None = None
        for window in await find_windows(display, window_name):
            shot = await screenshot(display, window)
            found = find_dialog_buttons(*shot) if shot else None
            if found:
                target = (window, found[1] if allow else found[0])
                break
        if target is None:
            await asyncio.sleep(poll_s)
            continue
        if report.seen_after_s is None:
            report.seen_after_s = now - start
            next_click = now + settle_s
        if now >= next_click:
            report.window, report.button = target
            await click(display, *target)
            report.clicks.append(loop.time() - start)
            next_click = loop.time() + interval_s
        await asyncio.sleep(min(poll_s, max(0.0, next_click - loop.time())) or poll_s)
    report.done_after_s = loop.time() - start
    return report
