"""The interact family: the tools whose extension half is ``extension/handlers/interact.js``, in
three modules (it is the largest family): ``reading`` (what the page shows), ``acting`` (what
is done to its elements) and ``forms`` (several fields in one call), each tool's arguments,
result and declaration side by side."""

from __future__ import annotations

from ..vocabulary import ToolSpec
from . import acting, forms, reading

#: This family's tools, in the order they are listed.
TOOLS: tuple[ToolSpec, ...] = (*reading.TOOLS, *acting.TOOLS, *forms.TOOLS)
