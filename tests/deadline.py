"""The one way a test waits: on a condition, under a generous deadline, failing with what never
happened. Never a fixed sleep, never a timed assertion: a deadline here only stops a test that
would otherwise hang, so it is set for a busy 2-core machine, not for how fast things usually are.

- ``await until("the tab is listed", check)``: poll ``check`` (sync or async) until it returns
  something truthy; returns that value.
- ``await within("the tool answers", awaitable)``: await one thing under a deadline.
- ``until_sync(...)``: ``until`` for code with no event loop (threads, child processes).
- ``TEST_S``: the whole-test hang guard every async test runs under (tests/conftest.py); a module
  that needs longer says ``pytestmark = pytest.mark.deadline(seconds)``.

Every expiry raises ``NeverHappened`` (an ``AssertionError``) naming what never happened, how
long it was given, and the last value seen.

Helpers only (no tests)."""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, overload

import anyio

T = TypeVar("T")

WAIT_S = 60.0
"""The default deadline of one wait on a condition."""
TEST_S = 300.0
"""The default hang guard of a whole async test (its fixtures have their own waits)."""
POLL_S = 0.1
"""How often ``until`` looks again."""


class NeverHappened(AssertionError):
    """A condition a test waited for never held within its deadline."""

    def __init__(self, what: str, seconds: float, last: object = None) -> None:
        detail = "" if last is None else f" (last seen: {last!r})"
        super().__init__(f"never happened within {seconds:g} s: {what}{detail}")


@overload
async def until(
    what: str,
    check: Callable[[], Awaitable[T | None]],
    *,
    timeout_s: float = ...,
    interval_s: float = ...,
) -> T: ...
@overload
async def until(
    what: str,
    check: Callable[[], T | None],
    *,
    timeout_s: float = ...,
    interval_s: float = ...,
) -> T: ...
async def until(
    what: str,
    check: Callable[[], Any],
    *,
    timeout_s: float = WAIT_S,
    interval_s: float = POLL_S,
) -> Any:
    """Call ``check`` every ``interval_s`` until it returns something truthy; return it. Raise
    ``NeverHappened(what)`` when ``timeout_s`` passes first. ``check`` may be a plain function
    or a coroutine function; an exception it raises is not caught (it is the test's failure)."""
    end = anyio.current_time() + timeout_s
    last: object = None
    while True:
        value = check()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        last = value
        if anyio.current_time() >= end:
            raise NeverHappened(what, timeout_s, last)
        await anyio.sleep(interval_s)


async def within(what: str, awaitable: Awaitable[T], *, timeout_s: float = WAIT_S) -> T:
    """Await ``awaitable``; raise ``NeverHappened(what)`` if it has not finished in
    ``timeout_s`` (it is cancelled)."""
    with anyio.move_on_after(timeout_s) as scope:
        return await awaitable
    assert scope.cancelled_caught
    raise NeverHappened(what, timeout_s)


def until_sync(
    what: str,
    check: Callable[[], T],
    *,
    timeout_s: float = WAIT_S,
    interval_s: float = POLL_S,
) -> T:
    """``until`` for code with no event loop: call ``check`` until it returns something truthy."""
    end = time.monotonic() + timeout_s
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() >= end:
            raise NeverHappened(what, timeout_s, value)
        time.sleep(interval_s)
