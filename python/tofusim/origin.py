"""Where a value came from, for the first word of a refusal: ``<arguments>``
when a Python program called the API, ``<command line>`` when the
``tofusim`` command did (its entry point sets it for the call)."""

from __future__ import annotations

from contextvars import ContextVar

WHERE: ContextVar[str] = ContextVar("tofusim_where", default="<arguments>")
