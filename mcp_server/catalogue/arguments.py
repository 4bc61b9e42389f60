"""The argument models and field types the tool families share: a tab, an element named one of
four ways, a frame, and an action's optional ``waitFor`` / ``observe``. Their fields are the
tools' input schemas; ``wire()`` is what the extension's handler takes. Pure: no I/O."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .vocabulary import BadArguments, Lineage

TabId = Annotated[int, Field(ge=0, description="from tab_open or tab_list")]


Url = Annotated[
    str,
    Field(min_length=1, max_length=8192, description="an absolute http(s) URL"),
    Lineage.ADDRESS,
]


#: The shape of an element ref (page_snapshot's ``@eN``); the one statement of it, published in
#: every ref's schema (the extension checks the wire schema, so holds it too).
REF_SHAPE = r"^@e[1-9][0-9]{0,6}$"

#: Longest selector, text or xpath naming an element.
MAX_ADDRESS = 2000

# Naming an element: read in the page, never sent or typed. An empty string is not given.
Ref = Annotated[
    str | None,
    Field(
        pattern=f"^$|{REF_SHAPE}",
        description="from page_snapshot",
    ),
    Lineage.INERT,
]


Selector = Annotated[str | None, Field(max_length=MAX_ADDRESS), Lineage.INERT]


Text = Annotated[
    str | None,
    Field(max_length=MAX_ADDRESS, description="the element's visible text"),
    Lineage.INERT,
]


XPath = Annotated[str | None, Field(max_length=MAX_ADDRESS), Lineage.INERT]


Index = Annotated[
    int | None,
    Field(
        ge=0,
        le=100_000,
        description="which of several matches, 0-based",
    ),
]


Match = Annotated[
    Literal["exact", "substring"],
    Field(description="how text matches"),
]


IgnoreCase = Annotated[bool, Field(description="text: ignore case")]


Frame = Annotated[
    int | None,
    Field(
        ge=0,
        le=2**31 - 1,
        description="a frameId from page_frames",
    ),
]


MaxChars = Annotated[int, Field(ge=1, le=5_000_000)]


class Model(BaseModel):
    """Every model of the catalogue: its validator and serializer are built when it is first
    used (a call's arguments or result, a schema generated), not when this module is imported.
    ``tabwarden mcp`` publishes its tools' schemas from the schema cache and validates through
    the SDK's own argument models, so a session builds only the models of the tools it calls
    (~100 models here; tests/mcp_server/test_catalogue_lazy.py). Behaviour is pydantic's own:
    deferring changes when the work is done, never what a model accepts or publishes."""

    model_config = ConfigDict(defer_build=True)


class Arguments(Model):
    """A tool's validated arguments; ``wire()`` is the ``args`` object the extension's handler
    takes (docs/protocol.md, "The page-tool catalogue"): never a null (an unset field is left
    out). Its JSON schema is ``wire.wire_schema`` of the model, which the extension checks."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)

    def shaped(self, reply: dict[str, Any]) -> dict[str, Any]:
        """The extension's reply (already masked by it) as this call's result is built from it;
        the reply itself unless the tool answers in another form (page_snapshot's lines)."""
        return reply


class NoArgs(Arguments):
    pass


class TabArgs(Arguments):
    tabId: TabId  # noqa: N815 — wire name


class FrameArgs(TabArgs):
    """A tab and, optionally, one of its frames (page_frames)."""

    frame: Frame = None


#: How long an element action waits for its element to be actionable (extension/handlers/ready.js).
ActionableMs = Annotated[
    int,
    Field(
        ge=0,
        le=10_000,
        description="wait up to this for the element to be actionable",
    ),
]


class ElementNamed(TabArgs):
    """An element named by exactly one of ref, selector, text or xpath, plus index; the
    subclass's own fields travel alongside. Tools that read or take the element as it is
    (page_get_state, page_upload) use this; the element actions use ``ElementArgs``."""

    TARGET: ClassVar[tuple[str, ...]] = ("ref", "selector", "text", "xpath")
    #: The element may be left out (the action then applies to the page or the focused node).
    TARGET_OPTIONAL: ClassVar[bool] = False
    #: What the wire form may give instead of naming the element (each: fields given together).
    WIRE_FORMS: ClassVar[tuple[tuple[str, ...], ...]] = ()

    #: How the element is picked among its name's matches (sent only when not the default).
    PICK: ClassVar[tuple[str, ...]] = ("index", "match", "ignoreCase")

    ref: Ref = None
    selector: Selector = None
    text: Text = None
    xpath: XPath = None
    index: Index = None
    match: Match = "exact"
    ignoreCase: IgnoreCase = False  # noqa: N815 — wire name
    frame: Frame = None

    def named(self) -> dict[str, str]:
        """The ways of naming the element that were given (an empty string is not given)."""
        given = {key: getattr(self, key) for key in self.TARGET}
        return {key: value for key, value in given.items() if value}

    def element(self) -> dict[str, Any]:
        named = self.named()
        if len(named) != 1:
            raise BadArguments("name the element by exactly one of ref, selector, text or xpath")
        return {**named, **_pick(self)}

    def own(self) -> dict[str, Any]:
        """The subclass's own fields (not tabId, not the element; frame only when given)."""
        own = self.model_dump(mode="json", exclude={"tabId", *self.PICK, *self.TARGET})
        if own.get("frame") is None:
            own.pop("frame", None)
        return own

    def wire(self) -> dict[str, Any]:
        if self.TARGET_OPTIONAL and not self.named():
            return {"tabId": self.tabId, **self.own()}
        return {"tabId": self.tabId, **self.element(), **self.own()}


class ElementArgs(ElementNamed):
    """An element action's element: named as ``ElementNamed``, and waited on (up to timeoutMs)
    until it is actionable before the action (extension/handlers/ready.js)."""

    timeoutMs: ActionableMs = 5000  # noqa: N815

    def own(self) -> dict[str, Any]:
        own = super().own()
        if "timeoutMs" not in self.model_fields_set:
            own.pop("timeoutMs", None)  # the extension's default is the same (handlers/ready.js)
        return own


def _pick(named: Any) -> dict[str, Any]:
    """index, match and ignoreCase as the wire takes them: each only when given / not default."""
    pick: dict[str, Any] = {}
    if named.index is not None:
        pick["index"] = named.index
    if named.match != "exact":
        pick["match"] = named.match
    if named.ignoreCase:
        pick["ignoreCase"] = True
    return pick


WaitMs = Annotated[int, Field(ge=0, le=120_000)]


class WaitFor(Model):
    """After the action: wait until exactly one of ref, selector or text is visible / absent
    (an empty string is not given, as for ElementArgs; the wire form leaves it out)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: The ways of naming what is waited for: exactly one (the wire schema's ``oneOf``).
    TARGET: ClassVar[tuple[str, ...]] = ("ref", "selector", "text")

    ref: Ref = None
    selector: Selector = None
    text: Text = None
    state: Literal["visible", "absent"] = "visible"
    timeoutMs: WaitMs = 5000  # noqa: N815

    @model_validator(mode="after")
    def _exactly_one(self) -> WaitFor:
        if len(self.named()) != 1:
            raise ValueError("wait for exactly one of ref, selector or text")
        return self

    def named(self) -> dict[str, str]:
        """The ways of naming what is waited for that were given (an empty string is not)."""
        given = {key: getattr(self, key) for key in self.TARGET}
        return {key: value for key, value in given.items() if value}

    def wire(self) -> dict[str, Any]:
        unnamed = {key for key in self.TARGET if key not in self.named()}
        return self.model_dump(mode="json", exclude_none=True, exclude=unnamed)


#: How a snapshot's rows are answered (page_snapshot's and an observation's): the server
#: re-encodes the extension's masked rows (interact/lines.py), so it never travels to the extension.
SnapshotFormat = Annotated[
    Literal["lines", "json"],
    Field(description="lines: one line per row (compact); json: one object per row"),
]


class Observe(Model):
    """After the action (and the wait): what the tab shows now, read as page_snapshot and
    page_text read it; skipped when the tab is not on an approved site."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    snapshot: Annotated[
        Literal["compact", "full"] | None,
        Field(description="compact: interactive elements only"),
    ] = None
    text: Annotated[bool, Field(description="the page's text (first 20,000 chars)")] = False
    format: SnapshotFormat = "lines"

    def wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True, exclude={"format"})


class Acting(Arguments):
    """An action's optional aftermath: ``waitFor`` then ``observe`` (the extension checks both
    before it acts)."""

    waitFor: Annotated[  # noqa: N815
        WaitFor | None,
        Field(description="then wait until one of ref, selector, text is visible or absent"),
    ] = None
    observe: Annotated[Observe | None, Field(description="then return what the tab shows")] = None

    AFTER: ClassVar[tuple[str, ...]] = ("waitFor", "observe")

    def aftermath(self) -> dict[str, Any]:
        """The waitFor and observe that were given, without their unset fields."""
        given: dict[str, WaitFor | Observe | None] = {k: getattr(self, k) for k in self.AFTER}
        return {k: v.wire() for k, v in given.items() if v}

    def wire(self) -> dict[str, Any]:
        base = {k: v for k, v in super().wire().items() if k not in self.AFTER}
        return {**base, **self.aftermath()}

    def shaped(self, reply: dict[str, Any]) -> dict[str, Any]:
        """The observation's snapshot in the format observe asked for, as page_snapshot's."""
        reply = super().shaped(reply)
        seen = reply.get("observation")
        if self.observe is None or not isinstance(seen, dict):
            return reply
        snapshot = seen.get("snapshot")
        if not isinstance(snapshot, dict):
            return reply
        # Imported here: the interact package imports this module.
        from .interact.lines import in_format

        return {
            **reply,
            "observation": {**seen, "snapshot": in_format(snapshot, self.observe.format)},
        }


class ElementName(Model):
    """An element named by exactly one of ref, selector, text or xpath (a scroll container)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    TARGET: ClassVar[tuple[str, ...]] = ElementArgs.TARGET

    ref: Ref = None
    selector: Selector = None
    text: Text = None
    xpath: XPath = None
    index: Index = None
    match: Match = "exact"
    ignoreCase: IgnoreCase = False  # noqa: N815 — wire name

    def wire(self) -> dict[str, Any]:
        named = {k: v for k in self.TARGET if (v := getattr(self, k))}
        if len(named) != 1:
            raise BadArguments("name the container by exactly one of ref, selector, text or xpath")
        return {**named, **_pick(self)}
