"""The emulate family: the tool whose extension half is ``extension/handlers/emulate.js``, with
its arguments, result and declaration side by side. Pure declarations: no I/O."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from .arguments import Model, TabArgs
from .vocabulary import (
    ACT,
    RELAY,
    BadArguments,
    FrameOutput,
    Gate,
    Lineage,
    Reference,
    Risk,
    ToolSpec,
)

#: A user agent as a request header can carry it: printable ASCII, no line break.
USER_AGENT_SHAPE = r"^[\x20-\x7e]+$"
#: A BCP 47 language tag's shape (Chrome then checks ICU knows it).
LOCALE_SHAPE = r"^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8}){0,6}$"
#: An IANA time zone id's shape ("Europe/Berlin", "America/Argentina/Buenos_Aires", "UTC",
#: "Etc/GMT+5"); the extension then checks the zone exists.
TIMEZONE_SHAPE = r"^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+){0,2}$"


class Geolocation(Model):
    """Where the page is told it is (it still needs the geolocation permission to ask)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    latitude: Annotated[float, Field(ge=-90, le=90, description="degrees, -90 to 90")]
    longitude: Annotated[float, Field(ge=-180, le=180, description="degrees, -180 to 180")]
    accuracy: Annotated[float, Field(gt=0, le=100_000, description="metres (default 50)")] = 50


class EmulateArgs(TabArgs):
    userAgent: Annotated[  # noqa: N815
        str | None,
        Field(
            min_length=1,
            max_length=512,
            pattern=USER_AGENT_SHAPE,
            description="navigator.userAgent and the User-Agent header",
        ),
        Lineage.TYPED,
    ] = None
    geolocation: Annotated[
        Geolocation | None,
        Field(description="latitude, longitude, accuracy (the permission is not granted)"),
    ] = None
    colorScheme: Annotated[  # noqa: N815
        Literal["light", "dark"] | None, Field(description="prefers-color-scheme")
    ] = None
    locale: Annotated[
        str | None,
        Field(max_length=64, pattern=LOCALE_SHAPE, description='e.g. "de-DE" (Intl formats)'),
        Lineage.TYPED,
    ] = None
    timezone: Annotated[
        str | None,
        Field(max_length=64, pattern=TIMEZONE_SHAPE, description='an IANA id, e.g. "Asia/Tokyo"'),
        Lineage.TYPED,
    ] = None
    reset: Annotated[bool, Field(description="end every override (nothing else may be given)")] = (
        False
    )

    def wire(self) -> dict[str, Any]:
        wired = self.model_dump(mode="json", exclude_none=True, exclude={"reset"})
        if self.reset:
            if len(wired) > 1:
                raise BadArguments("reset takes no other setting")
            return {"tabId": self.tabId, "reset": True}
        return wired  # only tabId: read what the page is told, nothing changed


class Emulating(Model):
    """The overrides now on (each left out when not set)."""

    userAgent: str | None = None  # noqa: N815
    geolocation: Geolocation | None = None
    colorScheme: str | None = None  # noqa: N815
    locale: str | None = None
    timezone: str | None = None


class PageSees(Model):
    """What the page itself reports, read in its isolated world after the overrides."""

    userAgent: str  # noqa: N815
    locale: str = Field(description="Intl.DateTimeFormat().resolvedOptions().locale")
    timezone: str = Field(description="Intl.DateTimeFormat().resolvedOptions().timeZone")
    colorScheme: Literal["light", "dark"] = Field(  # noqa: N815
        description="matchMedia('(prefers-color-scheme: dark)')"
    )
    geolocationPermission: str = Field(  # noqa: N815
        description="the site's geolocation permission (granted, prompt, denied): only when "
        "granted does navigator.geolocation answer, then with the override"
    )


class EmulateOut(Model):
    emulating: Emulating | None = Field(
        description="what this call set; null after reset, or when nothing was given (a read)"
    )
    page: PageSees


PAGE_EMULATE = ToolSpec(
    name="page_emulate",
    title="Emulate a user agent, place, colour scheme, locale or timezone",
    description="Override a tab's user agent, geolocation, colour scheme, locale or timezone; "
    "reset ends them; none given reads them.",
    arguments=EmulateArgs,
    result=EmulateOut,
    annotations=ACT,
    gate=Gate.ORIGIN,
    risk=Risk.MEDIUM,
    frames=FrameOutput.GATED,
    call=RELAY,
    docs=Reference(
        does=(
            "user agent, geolocation, colour scheme, locale, timezone till the session ends; "
            "`reset`; none: read"
        ),
        args=(
            "`tabId`; `userAgent?` (printable ASCII, ≤ 512), `geolocation?: {latitude (-90–90), "
            'longitude (-180–180), accuracy? (metres)}`, `colorScheme?: "light"|"dark"`, '
            "`locale?` (BCP 47, e.g. `de-DE`), `timezone?` (IANA, e.g. `Asia/Tokyo`); or "
            "`reset: true`; nothing: read what the page is told. An unknown zone or locale → "
            "`bad_request` naming it"
        ),
        result=(
            "`{emulating: {…what was set} \\| null, page: {userAgent, locale, timezone, "
            "colorScheme, geolocationPermission}}`"
        ),
        guard=(
            "owned tabs only (another's, or the person's, → `tab_not_owned`: nothing sent); "
            "CDP `Emulation.setUserAgentOverride`, `setGeolocationOverride`, `setEmulatedMedia`, "
            "`setLocaleOverride`, `setTimezoneOverride` on the tab's own debugger attachment, "
            "cleared when the session lets the tab go (worker/debugger.js `release`, "
            "`EMULATION_CLEARS`); the geolocation permission is never granted: the page asks the "
            "person as without it; the user agent, locale and timezone are typed text for the "
            "provenance gate"
        ),
    ),
)


#: This family's tools, in the order they are listed.
TOOLS: tuple[ToolSpec, ...] = (PAGE_EMULATE,)
