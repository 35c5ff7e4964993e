"""The shapes of what the API answers, so ``/openapi.json`` describes the bodies the server sends.

The response models carry every key the routes send, in the order they send them, and type the nested parts
loosely where they are free data (a thread's ``values``, metadata): a route answering through one of them sends
the same JSON as without it. :func:`errors` declares the error answers a route can give, each with its body:
``{"detail": "<why>"}``, or for a 422 also FastAPI's list of the fields that did not fit.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "Assistant",
    "Cancelled",
    "ErrorBody",
    "OpenAIErrorBody",
    "StoredEvent",
    "Thread",
    "ThreadRun",
    "ThreadState",
    "ValidationErrorBody",
    "errors",
]


class ErrorBody(BaseModel):
    """An error answer: what went wrong, in words."""

    detail: str = Field(description="Why the request was refused")


class FieldError(BaseModel):
    """One part of a request that does not fit its schema."""

    loc: list[str | int] = Field(description="Where: body, query, path or header, then the field's path")
    msg: str = Field(description="What is wrong with it")
    type: str = Field(description="The kind of error (pydantic's error type)")


class ValidationErrorBody(BaseModel):
    """A 422: the fields that do not fit the schema (a list), or in words why the request cannot be done."""

    detail: str | list[FieldError]


class OpenAIError(BaseModel):
    """The ``error`` object OpenAI clients read."""

    message: str
    type: str = Field(description="authentication_error, permission_error, not_found_error, invalid_request_error…")
    code: int = Field(description="The HTTP status")


class OpenAIErrorBody(BaseModel):
    """An error of ``/v1``: ``detail`` as on every route, and the same in OpenAI's ``error`` object."""

    detail: str | list[FieldError]
    error: OpenAIError


_WHY = {
    401: "No valid credentials: an API key (Authorization: Bearer, or X-Api-Key) or a JWT",
    403: "The credentials lack the scope the route needs",
    404: "No such assistant, thread or run (another user's answers the same)",
    409: "A conflict: the thread exists, is busy, waits for an answer, or nothing waits to be answered",
    413: "The body is larger than the server accepts",
    415: "The body is not JSON (Content-Type: application/json)",
    422: "The request is malformed, or asks what the server cannot do",
    500: "The run failed (the app's error in words)",
    503: "The store does not answer, or the server is stopping (Retry-After says when to try again)",
}

AUTH = (401, 403)
"""What every API route can answer before it looks at the request."""
BODY = (413, 415, 422)
"""What a route taking a JSON body can answer about the body."""


def errors(*codes: int, openai: bool = False) -> dict[int | str, dict[str, Any]]:
    """The ``responses`` of a route that can answer ``codes`` (and those of :data:`AUTH`, and 503 when the store
    fails), with their bodies (``openai``: those of ``/v1``)."""
    wanted = sorted({*AUTH, *codes, 503})
    model: dict[int, type[BaseModel]] = {code: ValidationErrorBody if code == 422 else ErrorBody for code in wanted}
    if openai:
        model = dict.fromkeys(wanted, OpenAIErrorBody)
    return {code: {"model": model[code], "description": _WHY[code]} for code in wanted}


class Assistant(BaseModel):
    """A served app as an assistant (``assistant_id`` = ``graph_id`` = the app's name)."""

    assistant_id: str
    graph_id: str
    name: str
    description: str | None = Field(description="The agent's description, else the app's welcome")
    config: dict[str, Any]
    context: dict[str, Any]
    metadata: dict[str, Any]
    version: int
    created_at: str
    updated_at: str


ThreadStatus = Literal["idle", "busy", "interrupted", "error"]


class Thread(BaseModel):
    """A thread: its metadata, status, current values and the interrupts that wait (by run id)."""

    thread_id: str
    created_at: str
    updated_at: str
    metadata: dict[str, Any]
    status: ThreadStatus
    values: dict[str, Any] = Field(description="messages (LangChain form), and task_stack for apps keeping one")
    interrupts: dict[str, list[dict[str, Any]]]


class ThreadState(BaseModel):
    """A thread's state: current (``GET /threads/{id}/state``) or after one run (the history's entries)."""

    values: dict[str, Any]
    next: list[str]
    tasks: list[dict[str, Any]]
    interrupts: list[dict[str, Any]]
    checkpoint: dict[str, Any]
    parent_checkpoint: dict[str, Any] | None
    metadata: dict[str, Any]
    created_at: str | None
    checkpoint_id: str
    parent_checkpoint_id: str | None


class ThreadRun(BaseModel):  # type: ignore[no-redef]  # (its field kwargs meets the plugin's **kwargs of __init__)
    """A run of a thread; ``podium_status`` and ``reason`` say how it ended in Podium's words."""

    run_id: str
    thread_id: str
    assistant_id: str
    created_at: str
    updated_at: str
    status: Literal["pending", "running", "error", "success", "timeout", "interrupted"]
    metadata: dict[str, Any]
    multitask_strategy: str
    kwargs: dict[str, Any]
    podium_status: str
    reason: str


class Cancelled(BaseModel):
    """What cancelling a run answers: the run and its status after the cancel."""

    run_id: str
    status: str


class StoredEvent(BaseModel):
    """A stored event (``kind`` says which; the fields of that kind follow)."""

    model_config = ConfigDict(extra="allow")
    kind: str
    run_id: str
    path: list[str]
    seq: int
    key: str | None
    ts: float
