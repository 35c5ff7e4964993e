"""The durable runtime: threads, runs, the journal, interrupts, limits and the event bus."""

from podium.runtime.bus import EventBus, InProcessBus, Subscription
from podium.runtime.context import RunContext
from podium.runtime.journal import Limits
from podium.runtime.runtime import Cancelled, IfBusy, RunResult, Runtime

__all__ = [
    "Cancelled",
    "EventBus",
    "IfBusy",
    "InProcessBus",
    "Limits",
    "RunContext",
    "RunResult",
    "Runtime",
    "Subscription",
]
