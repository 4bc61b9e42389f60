"""page_fill_form: several fields of one form in one call (text, select, checkbox, radio), each
named as an element action names its element, each answered with its own outcome. The extension
half (handlers/interact.js fillForm) runs the single-field tools' own page operations and guards:
page_fill's password rule, page_select's question (one for the whole form), the lineage of every
value typed or chosen. Pure declarations: no I/O."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import ConfigDict, Field

from ..arguments import (
    Acting,
    ActionableMs,
    ElementArgs,
    FrameArgs,
    IgnoreCase,
    Index,
    Match,
    Model,
    Ref,
    Selector,
    Text,
    XPath,
    _pick,
)
from ..results import Observation, _blocked, _observation, _omitted_unless_set
from ..target import Target
from ..vocabulary import (
    ACT,
    RELAY,
    Asks,
    BadArguments,
    FrameOutput,
    Gate,
    Lineage,
    Reference,
    Risk,
    ToolSpec,
)

#: Most fields one call fills (a longer form: several calls). Documented in the tool's row.
MAX_FORM_FIELDS = 50
#: Longest value one field of a form takes (page_fill takes longer ones, one at a time): fifty
#: fields of it stay well inside what one request may carry.
MAX_FORM_VALUE = 10_000

#: What each kind of field takes beside its element (exactly one of a select's choices).
_TAKES: dict[str, frozenset[str]] = {
    "text": frozenset({"value"}),
    "select": frozenset({"value", "values", "label", "optionIndex"}),
    "checkbox": frozenset({"checked"}),
    "radio": frozenset({"checked"}),
}
_CHOICES = ("value", "values", "label", "optionIndex", "checked")

FormValue = Annotated[str, Field(max_length=MAX_FORM_VALUE)]


class FormField(Model):
    """One field of the form: its kind, its element (exactly one of ref, selector, text or xpath,
    as an element action's), and what goes into it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    TARGET: ClassVar[tuple[str, ...]] = ElementArgs.TARGET

    kind: Annotated[
        Literal["text", "select", "checkbox", "radio"],
        Field(
            description='"text": an input or textarea, takes value; "select": a native <select>, '
            'takes one of value, values, label, optionIndex; "checkbox": takes checked; '
            '"radio": checked (only true)'
        ),
    ]
    ref: Ref = None
    selector: Selector = None
    text: Text = None
    xpath: XPath = None
    index: Index = None
    match: Match = "exact"
    ignoreCase: IgnoreCase = False  # noqa: N815 — wire name
    value: Annotated[
        FormValue | None,
        Field(description="text: what it holds after; select: an option's value"),
        Lineage.TYPED,
    ] = None
    values: Annotated[
        list[FormValue] | None,
        Field(min_length=1, max_length=100, description="select multiple: several values"),
        Lineage.TYPED,
    ] = None
    label: Annotated[
        FormValue | None, Field(description="select: an option's label"), Lineage.TYPED
    ] = None
    optionIndex: Annotated[  # noqa: N815
        int | None, Field(ge=0, le=100_000, description="select: an option by position, 0-based")
    ] = None
    checked: Annotated[bool | None, Field(description="checkbox: on or off; radio: true")] = None

    def wire(self, at: int) -> dict[str, Any]:
        """The field as the extension takes it; ``at`` is its place in the list (for errors)."""
        where = f"fields[{at}] ({self.kind})"
        named = {key: v for key in self.TARGET if (v := getattr(self, key))}
        if len(named) != 1:
            raise BadArguments(
                f"{where}: name the element by exactly one of ref, selector, text or xpath"
            )
        given = {key: v for key in _CHOICES if (v := getattr(self, key)) is not None}
        wrong = sorted(set(given) - _TAKES[self.kind])
        if wrong:
            raise BadArguments(f"{where} does not take {', '.join(wrong)}")
        if self.kind == "text" and "value" not in given:
            raise BadArguments(f"{where}: give its value")
        if self.kind == "select" and len(given) != 1:
            raise BadArguments(f"{where}: give exactly one of value, values, label, optionIndex")
        if self.kind == "checkbox" and "checked" not in given:
            raise BadArguments(f"{where}: give checked (true or false)")
        if self.kind == "radio" and given.get("checked", True) is not True:
            raise BadArguments(f"{where}: a radio button cannot be unchecked; check another one")
        return {"kind": self.kind, **named, **_pick(self), **given}


class FillFormArgs(Acting, FrameArgs):
    fields: Annotated[
        list[FormField],
        Field(
            min_length=1,
            max_length=MAX_FORM_FIELDS,
            description=f"1 to {MAX_FORM_FIELDS} fields, filled in this order",
        ),
    ]
    timeoutMs: Annotated[  # noqa: N815
        ActionableMs,
        Field(description="wait up to this, for all fields, for each to be actionable"),
    ] = 5000

    def wire(self) -> dict[str, Any]:
        framed = {"frame": self.frame} if self.frame is not None else {}
        timed = {"timeoutMs": self.timeoutMs} if "timeoutMs" in self.model_fields_set else {}
        fields = [f.wire(i) for i, f in enumerate(self.fields)]
        return {"tabId": self.tabId, "fields": fields, **framed, **timed, **self.aftermath()}


class FieldError(Model):
    code: str = Field(description="an error code of the table, as a tool's error")
    message: str
    hint: str = Field(description="the code's next step")


class FieldOutcome(Model):
    """One field's outcome: done (with what page_fill, page_select or page_check answers for it)
    or its own error; a text field's content is never returned."""

    kind: Literal["text", "select", "checkbox", "radio"]
    ok: bool
    target: Target | None = _omitted_unless_set("the element it went into (ref, role, name, frame)")
    applied: Literal["yes", "no", "unclear"] | None = _omitted_unless_set(
        "text: whether the value took (read back in the page)"
    )
    length: int | None = _omitted_unless_set("text: its length after (never its content)")
    selected: list[str] | None = _omitted_unless_set("select: the chosen options' values")
    labels: list[str] | None = _omitted_unless_set("select: their labels")
    checked: bool | None = _omitted_unless_set("checkbox, radio: its state after")
    error: FieldError | None = _omitted_unless_set("why this field was not filled")


class FormFilled(Model):
    filled: int = Field(description="fields done")
    failed: int = Field(description="fields with an error (the others were still filled)")
    fields: list[FieldOutcome] = Field(description="each field's outcome, in the order given")
    observation: Observation | None = _observation()
    blocked: str | None = _blocked()


PAGE_FILL_FORM = ToolSpec(
    name="page_fill_form",
    title="Fill a form",
    description="Fill several fields in one call (text, select, checkbox, radio); each field's "
    "outcome is reported. Asks the person once when a select is among them.",
    arguments=FillFormArgs,
    result=FormFilled,
    annotations=ACT,
    gate=Gate.ORIGIN,
    asks=Asks.GRACE,
    risk=Risk.MEDIUM,
    frames=FrameOutput.GATED,
    call=RELAY,
    docs=Reference(
        listed_with="page_fill",
        args=(
            f"`tabId`, `fields` (1..{MAX_FORM_FIELDS}: `kind`, element, `value` \\| `values` \\| "
            "`label` \\| `optionIndex` \\| `checked`), `frame?`, `timeoutMs?` (for all fields)"
        ),
        result=(
            "`{filled, failed, fields: [{kind, ok, target?, applied?, length?, selected?, "
            "labels?, checked?, error?: {code, message, hint}}]}` (a text's content never)"
        ),
        guard=(
            "every field found and checked before any is filled: a password field refused "
            "unless `passwordFill` (nothing filled); one confirm for the selects (as "
            "`page_select`'s, grace per tab and origin) and one for foreign lineage; each field "
            "filled by `page_fill`'s, `page_select`'s or `page_check`'s page operation"
        ),
    ),
)

#: These tools, in the order they are listed.
TOOLS: tuple[ToolSpec, ...] = (PAGE_FILL_FORM,)
