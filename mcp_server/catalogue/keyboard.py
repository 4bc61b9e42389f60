"""The keyboard family: the tools whose extension half is ``extension/handlers/keyboard.js``,
each with its arguments, result and declaration side by side. Pure declarations: no I/O."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from .arguments import Acting, ElementArgs
from .results import NewTab, Observation, _blocked, _new_tab, _observation
from .target import Targeted, Waited
from .vocabulary import ACT, RELAY, Asks, FrameOutput, Gate, Lineage, Reference, Risk, ToolSpec


class TypeArgs(Acting, ElementArgs):
    """Text typed into the focused node, or into the element named (focused first)."""

    TARGET_OPTIONAL = True
    value: Annotated[
        str, Field(min_length=1, max_length=100_000, description="the text to type"), Lineage.TYPED
    ]


class Typed(Targeted, Waited):
    typed: bool
    applied: str = Field(description="yes, no or unclear: whether the field holds the text after")
    length: int = Field(description="characters typed")
    focused: str = Field(description="the element that had the focus (role and name)")
    ref: str | None = Field(default=None, description="its ref, usable with every element tool")
    observation: Observation | None = _observation()


PAGE_TYPE = ToolSpec(
    name="page_type",
    title="Type text",
    description="Type text as trusted input into the focused element, or the element named.",
    arguments=TypeArgs,
    result=Typed,
    annotations=ACT,
    gate=Gate.ORIGIN,
    risk=Risk.MEDIUM,
    frames=FrameOutput.GATED,
    call=RELAY,
    docs=Reference(
        does=(
            "type text as **trusted input** (Chrome's debugger) into the focused element or the "
            "one named; **password fields refused** (the node that really has focus, through "
            "shadow roots and same-origin frames) unless policy allows; never returns the text; "
            "text another site's page supplied **asks you, naming both sites** (policy "
            "`provenance`)"
        ),
        args="`tabId`, `value`, element? (focused first), `waitFor?`",
        result="`{typed: true, applied, length, focused, ref?}` (never the text)",
        guard=(
            "CDP `Input.insertText` (debugger) into the node that really has focus (open shadow "
            "roots, same-origin frames; another site's frame refused): a password field refused "
            "unless `passwordFill`; a page-side guard cancels an insertion whose target or focus "
            "is not that node when it is dispatched (a focus the page moved during it and the "
            "guard could not cancel answers `policy_denied` saying the text may have gone "
            "elsewhere)"
        ),
    ),
)


KeyName = Annotated[str, Field(min_length=1, max_length=40)]


class KeysArgs(Acting, ElementArgs):
    TARGET_OPTIONAL = True
    keys: Annotated[
        KeyName | Annotated[list[KeyName], Field(min_length=1, max_length=50)],
        Field(
            description='a key or chord ("Enter", "Shift+Tab", "Mod+A", "ArrowDown", "F5", "a"; '
            "Mod is Meta on macOS, Control elsewhere) or a list of up to 50"
        ),
        Lineage.KEYS,
    ]


class KeysOut(Targeted, Waited):
    pressed: int
    keys: list[str] = Field(description="the keys as pressed (Mod resolved)")
    navigated: bool
    url: str
    observation: Observation | None = _observation()
    newTab: NewTab | None = _new_tab()  # noqa: N815
    blocked: str | None = _blocked()


PAGE_KEYS = ToolSpec(
    name="page_keys",
    title="Press keys",
    description="Press keys and chords as trusted input (Enter, Tab, Shift+Tab, Escape, arrows, "
    "Mod+A; up to 50). Asks the person first.",
    arguments=KeysArgs,
    result=KeysOut,
    annotations=ACT,
    gate=Gate.CONFIRM,
    asks=Asks.GRACE,
    risk=Risk.MEDIUM,
    frames=FrameOutput.GATED,
    call=RELAY,
    docs=Reference(
        does=(
            "keys and chords as **trusted input**: `Enter`, `Tab`, `Shift+Tab`, `Mod+A` (Cmd on "
            "macOS, Ctrl elsewhere), arrows, `Backspace`, F-keys; up to 50 in one call; **Enter or "
            "Space on a submit or link asks you**, as `page_click`; keys spelling what another "
            "site's page supplied **ask you, naming both sites** (policy `provenance`)"
        ),
        args=(
            "`tabId`, `keys` (a key/chord or a list of ≤ 50), element? (focused first), `waitFor?`"
        ),
        result="`{pressed, keys, navigated, url}`",
        guard=(
            "CDP `Input.dispatchKeyEvent` (debugger); confirm (`press`); Enter/Space on a submit "
            "or link: confirm as `page_click` (and must be the last key); typing keys on a "
            "password field refused unless `passwordFill`"
        ),
    ),
)


#: This family's tools, in the order they are listed.
TOOLS: tuple[ToolSpec, ...] = (
    PAGE_TYPE,
    PAGE_KEYS,
)
