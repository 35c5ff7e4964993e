"""The durable runtime: threads, runs, the journal, interrupts and limits."""

from podium.runtime.context import Limits, RunContext
from podium.runtime.runtime import RunResult, Runtime

__all__ = ["Limits", "RunContext", "RunResult", "Runtime"]
