"""Podium's data in the Agent Protocol's shapes, and the request bodies back into Podium's terms.

Messages go out in LangChain's dict form (``type`` human/ai/tool/system, ``tool_calls`` with parsed ``args``);
a message's id is ``<run id>-<seq>``, the stored event that added it, so streamed chunks and state agree.
Interrupts carry Podium's prompt, path and expectation, and the HITLRequest shape when they ask to approve a tool
call (see ``docs/server.md``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from fastapi import HTTPException

from podium.events import Event, Interrupt, InterruptRaised, MessageAdded, RunEnded, TaskStackChanged
from podium.messages import AIMessage, HumanMessage, Message, SystemMessage, ToolCall, ToolMessage

__all__ = ["NOTHING_WAITS", "Values", "input_text", "interrupt_out", "message_id", "message_out", "resume_answer"]

NOTHING_WAITS = "the thread has no interrupt waiting for an answer"
"""The 409 detail of a resume on a thread that asks nothing."""

_APPROVE = ("yes", "approve", "approved", "ok", "confirm")
_REJECT = ("no", "reject", "rejected", "cancel", "deny")


def message_id(event: Event) -> str:
    """The id a stored message is known by: ``<run id>-<seq>``."""
    return f"{event.run_id}-{event.seq}"


def _args(call: ToolCall) -> Any:
    try:
        return json.loads(call.arguments or "{}")
    except ValueError:
        return {"_raw": call.arguments}


def message_out(message: Message, id: str) -> dict[str, Any]:
    """``message`` as a LangChain message dict."""
    if isinstance(message, HumanMessage):
        return {"type": "human", "content": message.content, "id": id, "name": message.name}
    if isinstance(message, AIMessage):
        calls = [{"name": c.name, "args": _args(c), "id": c.id, "type": "tool_call"} for c in message.tool_calls]
        return {
            "type": "ai",
            "content": message.content,
            "id": id,
            "name": message.name,
            "tool_calls": calls,
            "invalid_tool_calls": [],
        }
    if isinstance(message, ToolMessage):
        return {
            "type": "tool",
            "content": message.content,
            "id": id,
            "name": message.name,
            "tool_call_id": message.tool_call_id,
            "status": "error" if message.is_error else "success",
        }
    assert isinstance(message, SystemMessage)
    return {"type": "system", "content": message.content, "id": id}


def _tool_call(interrupt: Interrupt, calls: dict[str, ToolCall]) -> ToolCall | None:
    """The tool call an interrupt was raised in, if it asks for its approval (a tool with ``approval``) or asks a
    yes/no question about it."""
    call = calls.get(interrupt.path[-1]) if interrupt.path else None
    expectation = interrupt.expectation
    if call is not None and expectation is not None and expectation.type == "approval":
        return call
    if call is None or expectation is None or expectation.type != "choice":
        return None
    options = [o.lower() for o in expectation.options]
    return call if any(o in _APPROVE for o in options) and any(o in _REJECT for o in options) else None


def interrupt_out(interrupt: Interrupt, calls: dict[str, ToolCall]) -> dict[str, Any]:
    """An interrupt as the API shows it: ``{"id", "value"}`` with Podium's question in ``value``."""
    value: dict[str, Any] = interrupt.to_dict()
    call = _tool_call(interrupt, calls)
    if call is not None:
        value["action_requests"] = [{"name": call.name, "args": _args(call), "description": interrupt.prompt}]
        value["review_configs"] = [{"action_name": call.name, "allowed_decisions": list(_decisions(interrupt))}]
    return {"id": interrupt.id, "value": value}


@dataclass(slots=True)
class Values:
    """A thread's values (its main history and task stack) folded from its stored events."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    task_stack: list[Any] | None = None
    interrupts: dict[str, Interrupt] = field(default_factory=dict)
    calls: dict[str, ToolCall] = field(default_factory=dict)
    last_seq: int = 0
    last_status: str | None = None
    _block: dict[str, int] = field(default_factory=dict)
    """The positions of the latest model reply's calls, by call id (its results are kept in call order)."""
    _block_start: int = 0

    def add(self, event: Event) -> bool:
        """Fold one stored event in; whether the values changed."""
        self.last_seq = max(self.last_seq, event.seq)
        if isinstance(event, MessageAdded) and event.namespace == "":
            message = event.message
            out = message_out(message, message_id(event))
            if isinstance(message, ToolMessage) and message.tool_call_id in self._block:
                # concurrent calls are stored as they finish; the history shows their results in call order
                position = self._block[message.tool_call_id]
                at = len(self.messages)
                while at > self._block_start and self._position(self.messages[at - 1]) > position:
                    at -= 1
                self.messages.insert(at, out)
                return True
            self._block = {}
            if isinstance(message, AIMessage):
                self.calls.update((c.id, c) for c in message.tool_calls)
                self._block = {c.id: n for n, c in enumerate(message.tool_calls)}
                self._block_start = len(self.messages) + 1
            self.messages.append(out)
            return True
        if isinstance(event, TaskStackChanged) and not event.path[1:]:
            self.task_stack = event.stack
            return True
        if isinstance(event, InterruptRaised):
            self.interrupts[event.interrupt.id] = event.interrupt
        elif event.key is not None and event.key.endswith("!"):
            self.interrupts.pop(event.key[:-1], None)
        elif isinstance(event, RunEnded):
            self.last_status = event.status
            if event.status != "interrupted":
                self.interrupts.clear()
        return False

    def _position(self, message: dict[str, Any]) -> int:
        return self._block.get(str(message.get("tool_call_id")), len(self._block))

    def pending(self) -> list[dict[str, Any]]:
        """The unanswered interrupts, in the API's shape."""
        return [interrupt_out(i, self.calls) for i in self.interrupts.values()]

    def to_dict(self, *, with_interrupts: bool = False) -> dict[str, Any]:
        """The ``values`` object (``__interrupt__`` added when asked and something waits)."""
        data: dict[str, Any] = {"messages": list(self.messages)}
        if self.task_stack is not None:
            data["task_stack"] = self.task_stack
        if with_interrupts and self.interrupts:
            data["__interrupt__"] = self.pending()
        return data


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") if isinstance(p, dict) and p.get("type") == "text" else None for p in content]
        if all(isinstance(p, str) for p in parts):
            return "".join(p for p in parts if p)
    raise HTTPException(422, "a message's content must be text or a list of text parts")


def input_text(input: Any) -> str:
    """The one user message of a run's ``input`` (``{"messages": [{"role": "user", "content": ...}]}``).

    Raises:
        HTTPException: 422, anything else.
    """
    messages = input.get("messages") if isinstance(input, dict) else None
    if isinstance(messages, dict | str):
        messages = [messages]
    if not isinstance(messages, list) or len(messages) != 1 or not isinstance(messages[0], dict):
        raise HTTPException(
            422, 'input must be {"messages": [{"role": "user", "content": "..."}]} with exactly one message'
        )
    message = messages[0]
    role = message.get("role", message.get("type"))
    if role not in ("user", "human"):
        raise HTTPException(422, f"a run takes one user message, not role {role!r}")
    text = _text(message.get("content"))
    if not text.strip():
        raise HTTPException(422, "the message is empty")
    return text


def _decisions(interrupt: Interrupt) -> tuple[str, ...]:
    """The HITL decisions an approval takes: a tool's own approval can also be edited."""
    approval = interrupt.expectation is not None and interrupt.expectation.type == "approval"
    return ("approve", "edit", "reject") if approval else ("approve", "reject")


def _decision(decisions: Any, interrupt: Interrupt, call: ToolCall) -> str:
    """The answer a HITL decision gives: an option of a yes/no question, or a tool approval's decision (see
    :func:`podium.human.approval`)."""
    allowed = _decisions(interrupt)
    if not isinstance(decisions, list) or len(decisions) != 1 or not isinstance(decisions[0], dict):
        kinds = " | ".join(f'"{kind}"' for kind in allowed)
        raise HTTPException(422, f'decisions must be a list of one {{"type": {kinds}}}')
    decision = decisions[0]
    kind = decision.get("type")
    if kind not in allowed:
        raise HTTPException(422, f"decision type must be {', '.join(map(repr, allowed))}, not {kind!r}")
    if "edit" not in allowed:  # a yes/no question asked by the tool itself
        options = interrupt.expectation.options if interrupt.expectation else []
        wanted = _APPROVE if kind == "approve" else _REJECT
        return next(o for o in options if o.lower() in wanted)
    if kind == "approve":
        return "approve"
    if kind == "reject":
        message = decision.get("message")
        if message is not None and not isinstance(message, str):
            raise HTTPException(422, "a reject decision's message must be text")
        return f"reject: {message.strip()}" if message and message.strip() else "reject"
    edited = decision.get("edited_action")
    arguments = edited.get("args") if isinstance(edited, dict) else None
    if not isinstance(edited, dict) or not isinstance(arguments, dict):
        raise HTTPException(422, 'an edit decision needs "edited_action": {"name": ..., "args": {...}}')
    if edited.get("name", call.name) != call.name:
        raise HTTPException(422, f"an edit changes the arguments of {call.name}, not the tool called")
    return "edit: " + json.dumps(arguments, separators=(",", ":"), ensure_ascii=False)


def resume_answer(value: Any, values: Values) -> str | dict[str, str]:
    """The answer(s) a ``command.resume`` value gives to the pending interrupts.

    Accepted: text (the one pending interrupt), ``{interrupt_id: text}``, or the HITL response
    ``{"decisions": [{"type": "approve" | "reject"}]}`` for a tool approval (also by interrupt id); a tool's own
    approval (``approval=True``) also takes ``{"type": "edit", "edited_action": {"name", "args"}}`` and a reject's
    ``message``.

    Raises:
        HTTPException: 409 when nothing waits; 422 for a malformed value or an unknown interrupt id.
    """
    pending = values.interrupts
    if not pending:
        raise HTTPException(409, NOTHING_WAITS)
    if isinstance(value, str):
        if len(pending) != 1:
            raise HTTPException(422, f"several interrupts wait; resume with {{id: answer}} for: {', '.join(pending)}")
        return value
    if not isinstance(value, dict) or not value:
        raise HTTPException(422, "resume must be text, {interrupt_id: text} or {decisions: [...]}")
    if "decisions" in value and len(pending) == 1:
        value = {next(iter(pending)): value}
    answers: dict[str, str] = {}
    for key, answer in value.items():
        interrupt = pending.get(key)
        if interrupt is None:
            raise HTTPException(422, f"no pending interrupt {key!r}; pending: {', '.join(pending)}")
        call = _tool_call(interrupt, values.calls)
        if isinstance(answer, dict) and "decisions" in answer and call is not None:
            answers[key] = _decision(answer["decisions"], interrupt, call)
        elif isinstance(answer, str):
            answers[key] = answer
        else:
            raise HTTPException(422, f"the answer to {key!r} must be text (or HITL decisions for a tool approval)")
    return answers
