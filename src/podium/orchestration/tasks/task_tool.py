"""A tool that runs a task as a sub-task: the model delegates by calling it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from podium.orchestration.tasks.loop import Scope, execute
from podium.orchestration.tasks.types import USER, TaskMessage
from podium.runtime.context import RunContext
from podium.tools import Tool

if TYPE_CHECKING:
    from podium.orchestration.tasks.task import Task

__all__ = ["task_tool"]


def task_tool(task: Task, *, name: str | None = None, description: str | None = None) -> Tool:
    """A tool that runs ``task`` as a sub-task on the model's ``prompt`` and returns its result.

    The sub-task runs in the tool call's own context (its journal, its questions to the human), with its own
    history unless it keeps one. A result that is not ``done`` (or a fixed turn budget's) comes back as
    ``[<task> stopped: <outcome>: <reason>]`` for the model to act on.
    """

    async def run_task(ctx: RunContext[Any], prompt: str) -> Any:
        result = await execute(task, ctx, Scope(), TaskMessage(content=prompt, sender=USER))
        if result.outcome not in ("done", "fixed_turns"):
            return f"[{task.name} stopped: {result.outcome}: {result.reason}]"
        return result.value if result.value is not None else result.content

    run_task.__doc__ = """Run a sub-task.

        Args:
            prompt: the request for it, with everything it needs.
        """
    return Tool(
        run_task,
        name=name or f"run_{task.name}",
        description=description or task.description or f"Ask the {task.name} task to handle a request.",
        timeout=None,  # a task is bounded by the run's limits, as it would be on its own
    )
