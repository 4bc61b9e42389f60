"""The catalogue's vocabulary: what a tool declaration says (``ToolSpec``) and the words it says
it with (gates, risks, frame output, lineage, how a call is made). Pure declarations: nothing here
decides a call."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, auto
from typing import TYPE_CHECKING

from mcp_types import ToolAnnotations

from tabwarden.errors import TabwardenError
from tabwarden.protocol.codes import BAD_REQUEST

if TYPE_CHECKING:
    from .arguments import Arguments, Model


class BadArguments(TabwardenError):
    """The arguments are well-typed but do not make one request (e.g. two ways to name one
    element)."""

    code = BAD_REQUEST


class Gate(str, Enum):
    """The strongest guard every call of a tool passes after hop 1's (which every tool passes:
    kill switch, paired client). The value is the README's gate label."""

    #: Answered in this process; nothing reaches the browser.
    LOCAL = "local"
    #: Only the tabs this session opened (others' and the person's tabs do not exist for it).
    OWN_TAB = "own tab"
    #: An own tab whose current site is approved; a new site asks in the confirm window first.
    ORIGIN = "origin"
    #: As ORIGIN or OWN_TAB, and the person confirms the call (policy ``confirm``).
    CONFIRM = "confirm"
    #: As CONFIRM, answered by a tap on the person's security key (what OFF_BY_DEFAULT tools ask
    #: under policy ``presenceConfirm``).
    PRESENCE_CONFIRM = "presence-confirm"
    #: Refused unless the signed policy enables it; then confirmed on every call (by a tap when
    #: ``presenceConfirm`` is on).
    OFF_BY_DEFAULT = "off-by-default"


class Asks(str, Enum):
    """How often a tool's own confirm-window question (the policy's ``confirm`` kinds, or the
    question an off-by-default tool asks on every call) is put to the person. The new-site
    question (origin gate) and the provenance question are asked on every call of every tool,
    whatever this says. The extension's grace (worker/grace.js) covers exactly the GRACE tools:
    ``generate.py`` writes them into worker/catalogue.js ``GRACE_ACTIONS``."""

    #: After the person allows one call, further calls of any GRACE tool on that tab and that
    #: origin are not asked again for the policy's ``clickGraceSeconds`` (another origin, another
    #: tab, or the end of the window asks again).
    GRACE = "grace"
    #: Asked on every call: what it does cannot be judged from an earlier answer (code run in the
    #: page, a request with its cookies, a file, a dialog's answer, a tab closed).
    EVERY_CALL = "every call"


#: The gates whose tools always ask a question of their own: each must declare how often.
ASKING_GATES = frozenset({Gate.CONFIRM, Gate.PRESENCE_CONFIRM, Gate.OFF_BY_DEFAULT})
#: The gates whose question can never be covered by an earlier answer.
EVERY_CALL_GATES = frozenset({Gate.PRESENCE_CONFIRM, Gate.OFF_BY_DEFAULT})


class Risk(str, Enum):
    """What a misbehaving agent could do with the tool once its gate lets it through."""

    NONE = "none"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    HIGHEST = "highest"


class FrameOutput(str, Enum):
    """What a tool's output can hold of the page's frames (docs/adr/0007). The extension holds
    its table of the RENDERS and SAVES actions to this one (handlers/actions.js FRAME_OUTPUT,
    tests/mcp_server/test_frames_declared.py) and runs one check around every such handler: a
    tool that forgets cannot start."""

    #: Nothing of any page's content: tab bookkeeping, or answered in this process.
    NONE = "none"
    #: What the origin gate allows: the top frame, or the frame its ``frame`` argument names,
    #: each gated on its own origin (or entries each filtered by their own origin).
    GATED = "gated"
    #: Pixels or a PDF of the whole page, subframes included: refused while any frame's origin
    #: is not approved (each is asked about first, as a navigation to it would be), and while
    #: any frame's text shows a card number (a picture or a PDF cannot be masked).
    RENDERS = "renders"
    #: A file the page started: only one a frame of an approved origin started.
    SAVES = "saves"


class Local(Enum):
    """Answered in this process from the bridge client's own state, never relayed."""

    #: Is a host reachable, is the extension connected, protocol version, last handshake error.
    BRIDGE_STATUS = auto()
    #: The browsers with a live host socket, and which one this session's bridge uses.
    LIVE_BROWSERS = auto()


class Save(Enum):
    """How a relayed tool's reply becomes a file in the download sandbox."""

    #: The reply's base64 ``data`` is written under its ``name``; the result says ``path`` and
    #: ``size`` instead.
    BYTES = auto()
    #: A ``complete`` reply names the file Chrome saved (``file: {source, size}``): it is copied
    #: in under the download's ``filename``; the result says ``path`` and ``size`` instead.
    COPY = auto()


class Lineage(Enum):
    """What an argument that can carry text is, for the provenance ledger (``provenance.py``):
    every field of an argument model (nested models' too) whose type holds ``str`` declares one
    (``Annotated[..., Lineage.X]``), or the catalogue does not load (``undeclared_lineage``).
    The gated kinds' page lineage goes with the call as ``provenance``; the extension's gate
    (``worker/provenance-gate.js``) decides on it, and refuses lineage on an action it has no rule
    for."""

    #: An address the tab goes to (tab_open, page_navigate): gated against its own origin.
    ADDRESS = "address"
    #: The URL a request goes to (page_fetch): gated against its own origin, as an address.
    REQUEST_TARGET = "request_target"
    #: What a request sends (page_fetch's body, its header values): gated against the request
    #: target's origin.
    REQUEST_BODY = "request_body"
    #: Text typed or chosen into the page (a fill, a select, a prompt's answer): gated against
    #: the origin of the page or frame it goes into.
    TYPED = "typed"
    #: Keys pressed: the text their character keys type counts as typed text.
    KEYS = "keys"
    #: Not gated: it names or filters what is read in the page (a selector, a ref, a role), names
    #: a local file, or is shown whole to the person, who confirms every call (page_eval's code).
    INERT = "inert"


#: The kinds whose lineage is checked.
GATED_LINEAGE = frozenset(
    {Lineage.ADDRESS, Lineage.REQUEST_TARGET, Lineage.REQUEST_BODY, Lineage.TYPED, Lineage.KEYS}
)


@dataclass(frozen=True, kw_only=True, slots=True)
class Relay:
    """Relayed over the bridge as the extension action named like the tool."""

    #: The reply's base64 PNG ``data`` is returned as MCP image content (plus its metadata).
    image: bool = False
    #: This argument names files in the upload sandbox (a list of paths): after the gate, the
    #: server checks each (``uploads.check_upload``) and sends their real paths instead, with
    #: ``files: [{name, size}]``; Chrome reads the files itself, nothing of them is sent.
    sandbox_file: str | None = None
    #: When this argument is given, the reply's base64 ``data`` is written into the download
    #: sandbox under that name (``downloads.DownloadSandbox``, never overwriting) and answered
    #: as ``savedTo``: the bytes never reach the client.
    save_file: str | None = None
    #: What the server writes into the download sandbox (``downloads.py``) from the reply
    #: before answering; the file's bytes never reach the client.
    save: Save | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Reference:
    """How people read about the tool: its row of the README's Tools table and of
    docs/protocol.md's action catalogue (``generate.py`` writes both from these words; Markdown)."""

    #: The README's "what it does", for the person choosing what to allow.
    does: str = ""
    #: The README's gate and risk cells when they say more than the gate's and risk's names (they
    #: start with them: a test holds each cell to the declared gate and risk).
    gate: str | None = None
    risk: str | None = None
    #: Listed in the README row of this tool (whose ``does`` covers both) instead of its own.
    listed_with: str | None = None
    #: docs/protocol.md, for a relayed tool: the action's args and result as the extension sees
    #: them, and its guards beyond origin and ownership.
    args: str | None = None
    result: str | None = None
    guard: str = "—"


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolSpec:
    name: str
    title: str
    description: str
    arguments: type[Arguments]
    result: type[Model]
    annotations: ToolAnnotations
    gate: Gate
    risk: Risk
    #: Declared, never defaulted: what the tool's output can include of frames.
    frames: FrameOutput
    call: Relay | Local
    #: Its rows of the README's Tools table and docs/protocol.md (generate.py).
    docs: Reference
    #: How often its own confirm-window question is asked (``Asks``); None: it asks none (only
    #: the new-site and provenance questions every tool may ask). Required of a tool whose gate
    #: asks (ASKING_GATES) and of any tool whose extension handler asks (a test scans them); an
    #: off-by-default or presence-confirmed tool can only be asked every call.
    asks: Asks | None = None

    def __post_init__(self) -> None:
        if self.gate in ASKING_GATES and self.asks is None:
            raise ValueError(f"{self.name}: gate {self.gate.value!r} asks: declare asks=Asks...")
        if self.gate in EVERY_CALL_GATES and self.asks is not Asks.EVERY_CALL:
            raise ValueError(f"{self.name}: gate {self.gate.value!r} is asked every call")

    @property
    def action(self) -> str | None:
        """The extension action a call is relayed as; ``None`` for a local tool."""
        return self.name if isinstance(self.call, Relay) else None

    @property
    def read_only(self) -> bool:
        """The tool only reads (``readOnlyHint``): a call with an unknown outcome is safe to
        repeat. Anything not marked read-only is treated as able to act."""
        return self.annotations.read_only_hint is True


#: Answered from local state: reads nothing outside this process and the runtime directory.
LOCAL_READ = ToolAnnotations(readOnlyHint=True, destructiveHint=False, openWorldHint=False)


READ = ToolAnnotations(readOnlyHint=True, destructiveHint=False, openWorldHint=True)


ACT = ToolAnnotations(readOnlyHint=False, destructiveHint=False, openWorldHint=True)


CLOSE = ToolAnnotations(readOnlyHint=False, destructiveHint=True, openWorldHint=False)


RISKY = ToolAnnotations(readOnlyHint=False, destructiveHint=True, openWorldHint=True)


RELAY = Relay()
