"""The capability task set: standard web-interaction tasks in the style of MiniWoB (click the
button with a given text among similar ones, fill a field, select an option, check boxes, a
button that appears late, one enabled late, a drag to reorder a list, an HTML5 drop, a value
read in a frame, a link followed, a button far below the fold), each a page and a reward.

Each page reports its own state to the bench site (``POST /state?ep=<episode>``) on load, after
every input event and every 200 ms, numbered; the reward is a pure function of the last state
reported after the episode ended (``reward(state) -> True`` when solved). So a reward reads the
page as it is, never what the agent says it did, and can be tested without a browser on a state
built by hand (``Task.untouched``: what the page reports before anyone acts; ``Task.solved``: a
state a correct episode leaves). The pages are generated from fixed inputs; they never fetch
anything but their own origin.
"""

from __future__ import annotations

import html
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

State = Mapping[str, Any]

#: After every page's own script: report ``state()`` to the site, numbered, on load, after each
#: event that may change it, and every 200 ms (so the state after the last action arrives even
#: when no event fires, e.g. a timer's change).
REPORTER: Final = """<script>
(() => {
  const ep = new URLSearchParams(location.search).get("ep") || "none";
  let seq = 0;
  const report = () => {
    let body;
    try { body = JSON.stringify({seq: ++seq, at: location.pathname, state: state()}); }
    catch (e) { body = JSON.stringify({seq: seq, at: location.pathname, error: String(e)}); }
    fetch("/state?ep=" + encodeURIComponent(ep), {method: "POST", body, keepalive: true})
      .catch(() => {});
  };
  for (const kind of ["click", "input", "change", "drop", "dragend", "mouseup", "keyup"]) {
    document.addEventListener(kind, () => setTimeout(report, 0), true);
  }
  window.addEventListener("load", report);
  setInterval(report, 200);
})();
</script>"""


@dataclass(frozen=True, kw_only=True)
class Task:
    """One task: its page body and ``state()`` script, the goal an agent is given, and its
    reward over the reported state. ``untouched`` and ``solved`` are states the page reports
    before anyone acted and after a correct episode (the unit tests judge them)."""

    name: str
    goal: str
    body: str
    script: str
    reward: Callable[[State], bool]
    untouched: State
    solved: State
    #: Other paths the task serves (a link's target, a frame's document): path → body + script.
    extra: Mapping[str, tuple[str, str]] | None = None

    def page(self, path: str = "") -> bytes:
        body, script = (self.body, self.script) if not path else (self.extra or {})[path]
        return (
            '<!doctype html><html><head><meta charset="utf-8">'
            f"<title>{html.escape(self.name)}</title></head><body>{body}"
            f"<script>{script}</script>{REPORTER}</body></html>"
        ).encode()


def _clicked_only(label: str) -> Callable[[State], bool]:
    return lambda s: list(s.get("clicked", [])) == [label]


_LOG_CLICKS = """const clicked = [];
document.querySelectorAll("button").forEach(b =>
  b.addEventListener("click", () => clicked.push(b.textContent.trim())));
function state() { return {clicked}; }"""

TASKS: Final[tuple[Task, ...]] = (
    Task(
        name="click-button",
        goal='click the button "Save" (others are named alike)',
        body="<h1>Document</h1>"
        + "".join(
            f'<button type="button">{t}</button> '
            for t in ("Save draft", "Autosave", "Save all", "Save", "Save as")
        ),
        script=_LOG_CLICKS,
        reward=_clicked_only("Save"),
        untouched={"clicked": []},
        solved={"clicked": ["Save"]},
    ),
    Task(
        name="enter-text",
        goal='type "Ada" into the field "First name"',
        body='<label>Last name <input id="last"></label><br>'
        '<label>First name <input id="first"></label><br>'
        '<label>First name (again) <input id="again"></label>',
        script="""function state() { return {first: first.value, last: last.value,
          again: again.value}; }""",
        reward=lambda s: s.get("first") == "Ada" and not s.get("last") and not s.get("again"),
        untouched={"first": "", "last": "", "again": ""},
        solved={"first": "Ada", "last": "", "again": ""},
    ),
    Task(
        name="select-option",
        goal='choose "Green" in the list "Colour"',
        body='<label>Size <select id="size"><option>Small</option><option>Green</option>'
        '</select></label> <label>Colour <select id="colour"><option value="r">Red</option>'
        '<option value="gy">Grey</option><option value="g">Green</option>'
        '<option value="gd">Green-gold</option></select></label>',
        script="function state() { return {colour: colour.value, size: size.value}; }",
        reward=lambda s: s.get("colour") == "g" and s.get("size") == "Small",
        untouched={"colour": "r", "size": "Small"},
        solved={"colour": "g", "size": "Small"},
    ),
    Task(
        name="check-boxes",
        goal='check "Apples" and "Pears", and leave "Pineapples" unchecked',
        body="<fieldset><legend>Fruit</legend>"
        + "".join(
            f'<label><input type="checkbox" name="f" value="{v}"> {v}</label><br>'
            for v in ("Pineapples", "Apples", "Plums", "Pears")
        )
        + "</fieldset>",
        script="""function state() { return {checked: [...document.querySelectorAll(
          "input:checked")].map(i => i.value).sort()}; }""",
        reward=lambda s: list(s.get("checked", [])) == ["Apples", "Pears"],
        untouched={"checked": []},
        solved={"checked": ["Apples", "Pears"]},
    ),
    Task(
        name="choose-radio",
        goal='choose "Medium" among the sizes',
        body="<fieldset><legend>Size</legend>"
        + "".join(
            f'<label><input type="radio" name="size" value="{v}"> {v}</label><br>'
            for v in ("Small", "Medium", "Medium-large", "Large")
        )
        + "</fieldset>",
        script="""function state() { const c = document.querySelector("input:checked");
          return {size: c ? c.value : null}; }""",
        reward=lambda s: s.get("size") == "Medium",
        untouched={"size": None},
        solved={"size": "Medium"},
    ),
    Task(
        name="late-button",
        goal='click the button "Continue", which appears after 1.5 s',
        body='<p>Loading…</p><div id="slot"></div>',
        script="""const clicked = [];
setTimeout(() => { const b = document.createElement("button"); b.type = "button";
  b.textContent = "Continue"; b.onclick = () => clicked.push("Continue");
  slot.append(b); }, 1500);
function state() { return {clicked}; }""",
        reward=_clicked_only("Continue"),
        untouched={"clicked": []},
        solved={"clicked": ["Continue"]},
    ),
    Task(
        name="enabled-later",
        goal='click the button "Continue", disabled for its first 1.5 s',
        body='<button type="button" id="go" disabled>Continue</button>',
        script="""const clicked = [];
go.onclick = () => clicked.push("Continue");
setTimeout(() => { go.disabled = false; }, 1500);
function state() { return {clicked, enabled: !go.disabled}; }""",
        reward=_clicked_only("Continue"),
        untouched={"clicked": [], "enabled": False},
        solved={"clicked": ["Continue"], "enabled": True},
    ),
    Task(
        name="drag-reorder",
        goal='drag "Delta" onto "Alpha" so that it comes first',
        body='<ul id="list" style="list-style:none;padding:0;width:240px">'
        + "".join(
            f'<li style="padding:12px;margin:4px;border:1px solid #888;cursor:grab">{n}</li>'
            for n in ("Alpha", "Bravo", "Charlie", "Delta")
        )
        + "</ul>",
        # A sortable list driven by mouse events (as most sortable-list libraries are).
        script="""let held = null;
list.addEventListener("mousedown", e => { held = e.target.closest("li"); e.preventDefault(); });
document.addEventListener("mouseup", e => {
  const over = document.elementFromPoint(e.clientX, e.clientY);
  const target = over && over.closest("#list li");
  if (held && target && target !== held) list.insertBefore(held, target);
  held = null; });
function state() { return {order: [...list.children].map(li => li.textContent)}; }""",
        reward=lambda s: list(s.get("order", [])) == ["Delta", "Alpha", "Bravo", "Charlie"],
        untouched={"order": ["Alpha", "Bravo", "Charlie", "Delta"]},
        solved={"order": ["Delta", "Alpha", "Bravo", "Charlie"]},
    ),
    Task(
        name="html5-drop",
        goal='drag "Parcel" into "Drop zone"',
        body='<div id="parcel" draggable="true" role="button" aria-label="Parcel" '
        'style="width:120px;padding:12px;border:1px solid #444">Parcel</div><br><br>'
        '<div id="zone" role="region" aria-label="Drop zone" '
        'style="width:240px;height:120px;border:2px dashed #444">Drop zone</div>',
        script="""let dropped = [];
parcel.addEventListener("dragstart", e => e.dataTransfer.setData("text/plain", "parcel"));
zone.addEventListener("dragover", e => e.preventDefault());
zone.addEventListener("drop", e => { e.preventDefault();
  dropped.push(e.dataTransfer.getData("text/plain")); });
function state() { return {dropped}; }""",
        reward=lambda s: list(s.get("dropped", [])) == ["parcel"],
        untouched={"dropped": []},
        solved={"dropped": ["parcel"]},
    ),
    Task(
        name="read-frame",
        goal='read the code shown in the frame and type it into the field "Code"',
        body='<iframe id="inner" title="Code panel" src="/task/read-frame/inner" '
        'style="width:300px;height:80px"></iframe><br><label>Code <input id="code"></label>',
        script="""function state() { return {code: code.value}; }""",
        reward=lambda s: s.get("code") == "K7-4Q2",
        untouched={"code": ""},
        solved={"code": "K7-4Q2"},
        extra={"inner": ("<p>Your code: <b>K7-4Q2</b></p>", "function state() { return {}; }")},
    ),
    Task(
        name="follow-link",
        goal='follow the link "Page two"',
        body="<nav>"
        + "".join(
            f'<a href="/task/follow-link/{p}">{t}</a> '
            for p, t in (("one", "Page one"), ("twenty", "Page twenty"), ("two", "Page two"))
        )
        + "</nav>",
        script="""document.querySelectorAll("a").forEach(a => { a.href += location.search; });
function state() { return {arrived: null}; }""",
        reward=lambda s: s.get("arrived") == "two",
        untouched={"arrived": None},
        solved={"arrived": "two"},
        extra={
            p: (f"<h1>{p}</h1>", f"function state() {{ return {{arrived: {p!r}}}; }}")
            for p in ("one", "two", "twenty")
        },
    ),
    Task(
        name="scroll-click",
        goal='click the button "Far away", 4000 px below the top',
        body='<div style="height:4000px">Scroll down</div>'
        '<button type="button">Far away</button><div style="height:400px"></div>',
        script=_LOG_CLICKS,
        reward=_clicked_only("Far away"),
        untouched={"clicked": []},
        solved={"clicked": ["Far away"]},
    ),
)

BY_NAME: Final = {t.name: t for t in TASKS}


def route(path: str) -> bytes | None:
    """The page for a site path ``/task/<name>[/<extra>]``, or ``None``."""
    parts = path.strip("/").split("/")
    if len(parts) < 2 or parts[0] != "task" or parts[1] not in BY_NAME:
        return None
    task = BY_NAME[parts[1]]
    extra = "/".join(parts[2:])
    if extra and extra not in (task.extra or {}):
        return None
    return task.page(extra)


class Reports:
    """The states the task pages reported, per episode: the latest one (highest ``seq`` of the
    page that reported last; a navigation starts a new page at 1) and how many arrived."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._latest: dict[str, dict[str, Any]] = {}
        self._count: dict[str, int] = {}

    def post(self, episode: str, report: dict[str, Any]) -> None:
        with self._lock:
            last = self._latest.get(episode)
            newer_page = last is None or last.get("at") != report.get("at")
            if newer_page or int(report.get("seq", 0)) > int(last.get("seq", 0)):  # type: ignore[union-attr]
                self._latest[episode] = report
            self._count[episode] = self._count.get(episode, 0) + 1

    def count(self, episode: str) -> int:
        with self._lock:
            return self._count.get(episode, 0)

    def latest(self, episode: str) -> dict[str, Any] | None:
        with self._lock:
            return self._latest.get(episode)


#: The bench site's one store (the site runs in this process, in a thread).
REPORTS: Final = Reports()
