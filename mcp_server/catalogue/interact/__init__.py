"""The interact family: the tools whose extension half is ``extension/handlers/interact.js``, in
two modules (it is the largest family): ``reading`` (what the page shows) and ``acting`` (what
is done to its elements), each tool's arguments, result and declaration side by side."""

from __future__ import annotations

from ..vocabulary import ToolSpec
from . import acting, reading

#: This family's tools, in the order they are listed.
TOOLS: tuple[ToolSpec, ...] = (*reading.TOOLS, *acting.TOOLS)
