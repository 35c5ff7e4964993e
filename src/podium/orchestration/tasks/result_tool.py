"""The result tool: a structured result a handler returns to end its task (its own module: it needs pydantic,
which the rest of the tasks package imports only when used)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ResultTool(BaseModel):
    """A structured result a handler returns to end its task with it.

    Subclass it with typed fields, or give any fields to the base class; the task's ``value`` is the tool, rebuilt
    as the handler's annotated return type after a resume. ``Task.run(..., output_type=YourResultTool)`` returns it.
    """

    model_config = ConfigDict(extra="allow")
