"""page_drag's fixture site (tests/browser/test_drag.py, test_drag_guard.py): a board with a
pointer-event sortable list, an HTML5 draggable card and its drop zone, a pad that records where
the button went down and up, a submit button and a covered card; the top page carries the board
and, below it, the same board in a cross-origin iframe (127.0.0.1 embeds localhost: another site,
run out of process). Each board counts what it saw, trusted events only, so a test reads back
what moved. Holds no tests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.browser.harness import Request, ok, served_pages
from tests.deadline import until

#: The board: everything at fixed places inside a 520 x 200 box, so it all shows without scrolling.
_BOARD = """
<div id=board style='position:relative;width:520px;height:200px'>
<ul id=list style='list-style:none;margin:0;padding:0;position:absolute;left:10px;top:10px;
 width:140px'>
<li data-id=A style='height:30px;background:#fdd'>Alpha</li>
<li data-id=B style='height:30px;background:#dfd'>Beta</li>
<li data-id=C style='height:30px;background:#ddf'>Gamma</li></ul>
<p id=order style='position:absolute;left:10px;top:110px;margin:0'>A,B,C</p>
<div id=card draggable=true style='position:absolute;left:170px;top:10px;width:90px;height:30px;
 background:#ccc'>Card</div>
<div id=zone style='position:absolute;left:170px;top:60px;width:120px;height:60px;
 background:#eef'>Zone</div>
<p id=dropped style='position:absolute;left:170px;top:130px;margin:0'>nothing dropped</p>
<div id=pad style='position:absolute;left:310px;top:10px;width:100px;height:100px;
 background:#efe'>Pad</div>
<p id=padlog style='position:absolute;left:310px;top:130px;margin:0'>pad idle</p>
<form id=f action=/sent style='position:absolute;left:430px;top:10px;margin:0'>
<button type=submit id=send style='width:70px;height:30px'>Send</button></form>
<div id=hidden-card draggable=true style='position:absolute;left:430px;top:60px;width:70px;
 height:30px;background:#ccc'>Hidden card</div>
<div id=veil style='position:absolute;left:425px;top:55px;width:80px;height:40px;
 background:rgba(0,0,0,.5)'>veil</div>
<p id=downs style='position:absolute;left:430px;top:130px;margin:0'>0</p>
</div>
<script>
const $ = (id) => document.getElementById(id);
let downs = 0;
document.addEventListener('pointerdown', (e) => {
  if (e.isTrusted) $('downs').textContent = String(++downs);
}, true);
// The sortable list: pointerdown on an item, pointermoves with the button held, pointerup over
// another item's place puts it there.
let held = null, moves = 0;
$('list').addEventListener('pointerdown', (e) => {
  const li = e.target.closest('li');
  if (!li || !e.isTrusted) return;
  held = li; moves = 0; li.setPointerCapture(e.pointerId);
});
$('list').addEventListener('pointermove', (e) => { if (held && e.buttons === 1) moves++; });
$('list').addEventListener('pointerup', (e) => {
  if (!held) return;
  const li = held; held = null;
  if (moves < 2) return;
  const items = [...$('list').children];
  const over = items.find((o) => {
    const r = o.getBoundingClientRect();
    return e.clientY >= r.top && e.clientY < r.bottom;
  });
  if (!over || over === li) return;
  if (items.indexOf(over) > items.indexOf(li)) over.after(li); else over.before(li);
  $('order').textContent = [...$('list').children].map((o) => o.dataset.id).join(',');
});
// The HTML5 drop zone.
for (const id of ['card', 'hidden-card']) {
  $(id).addEventListener('dragstart', (e) => e.dataTransfer.setData('text/plain', id));
}
$('zone').addEventListener('dragover', (e) => e.preventDefault());
$('zone').addEventListener('drop', (e) => {
  e.preventDefault();
  const got = e.dataTransfer.getData('text/plain');
  $('dropped').textContent = 'dropped ' + got + (e.isTrusted ? '' : ' untrusted');
});
// The pad: where the button went down and up (viewport CSS pixels of this document).
let padDown = null;
$('pad').addEventListener('pointerdown', (e) => {
  if (!e.isTrusted) return;
  padDown = [e.clientX, e.clientY];
  $('pad').setPointerCapture(e.pointerId);
});
$('pad').addEventListener('pointerup', (e) => {
  const up = [e.clientX, e.clientY];
  if (padDown) $('padlog').textContent = 'down ' + padDown.map(Math.round).join(',')
    + ' up ' + up.map(Math.round).join(',');
  padDown = null;
});
</script>"""


def _top(port: int) -> bytes:
    return (
        "<!doctype html><html><head><title>drag top</title></head><body style='margin:0'>"
        + _BOARD
        + f"<iframe id=cross src='http://localhost:{port}/board' width=540 height=220"
        " style='border:9px solid #333;padding:6px;margin-left:37px'></iframe>"
        "</body></html>"
    ).encode()


def _board() -> bytes:
    return (
        "<!doctype html><html><head><title>board</title></head><body style='margin:0'>"
        + _BOARD
        + "</body></html>"
    ).encode()


def _page(request: Request) -> bytes:
    if request.path == "/board":
        return _board()
    if request.path == "/sent":
        return b"<!doctype html><title>sent</title><p>sent</p>"
    return _top(request.port or 80)


@contextmanager
def board_site() -> Iterator[int]:
    """The board site's port: 127.0.0.1 is the top page, localhost the cross-origin frame."""
    with served_pages(hook=_page) as served:
        yield served.port


async def cross_frame(agent: Any, tab: int) -> int:
    """The cross-origin iframe's frameId once it has committed /board."""

    async def committed() -> int | None:
        frames = (await ok(agent, "page_frames", {"tabId": tab}))["frames"]
        subs = [f for f in frames if f["frameId"] != 0 and "localhost" in (f["origin"] or "")]
        return subs[0]["frameId"] if subs else None

    found: int = await until("the cross-origin iframe committed /board", committed)
    return found
