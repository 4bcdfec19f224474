"""MPI traces (issue 20): recording real programs as OTF2 with tofusim's
PMPI tracer, reading any writer's OTF2 MPI records, summarising them."""

from .read import Call, Trace, read
from .record import record
from .replay import replay
from .summary import summarise

__all__ = ["Call", "Trace", "read", "record", "replay", "summarise"]
