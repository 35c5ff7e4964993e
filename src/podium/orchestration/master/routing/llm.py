"""The LLM intent classifier: one tool-calling request to a model (the model is bound to the tools).

The model is offered the candidate tools (each taking ``text`` and a required ``rationale``) plus four control
tools: ``ask_human`` (clarify or ask), ``refuse_request`` (guardrail), ``describe_capabilities`` and
``abandon_task``. The prompt states the pending task: which tool waits, what it asked, its context and the answer
it expects. A reply that calls no tool, an unknown tool, or omits the rationale goes back to the model once with
the error; after that the classifier asks the human to rephrase.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from podium.messages import AIMessage, HumanMessage, Message, SystemMessage, ToolMessage
from podium.models.base import Model, ModelRequest, ModelSettings, cut_off
from podium.orchestration.master.routing.base import Classifier, Decision, DecisionKind, Query
from podium.orchestration.master.routing.router import describe_expectation
from podium.tools import ToolSpec

if TYPE_CHECKING:
    from podium.runtime.context import RunContext

__all__ = ["CONTROL_TOOLS", "LLMClassifier", "ROUTING_MAX_TOKENS"]

ROUTING_MAX_TOKENS = 256
"""The classifier's default reply cap: a routing decision is one short tool call, never an essay."""

_TEXT = {
    "type": "string",
    "description": "The request in your words (the tool also gets the human's own message; never invent details).",
}
_RATIONALE = {"type": "string", "description": "Why this choice fits the message and the pending task."}
_SAY = {"type": "string", "description": "What to tell the human."}

CONTROL_TOOLS: dict[str, tuple[DecisionKind, str]] = {
    "ask_human": ("ask", "Ask the human a clarifying question (the message is vague or does not fit)."),
    "refuse_request": ("refuse", "Refuse a harmful or out-of-scope request; restate what the pending task needs."),
    "describe_capabilities": ("capabilities", "Answer 'what can you do?': list the tasks you can help with."),
    "abandon_task": ("abandon", "The human wants to stop the pending task ('never mind', 'cancel')."),
}
"""The classifier's own tools, by name: the decision each stands for and its description."""

INSTRUCTIONS = """You are the intent classifier of {title}, an assistant that works through tools.
Read the latest message and call exactly one tool. Always give a rationale.
- Call a task tool when the message asks for what it does, or answers the question of its pending task.
- Call ask_human when the message does not fit what the pending task expects, or is too vague.
- Call refuse_request when the message is harmful, illegal, or outside what the tools do.
- Call describe_capabilities when the human asks what you can do.
- Call abandon_task when the human wants to stop the pending task.

Task tools:
{tools}
"""


class LLMClassifier(Classifier):
    """Classifies with one tool-calling model request (plus one retry when the reply is unusable)."""

    name = "llm"

    def __init__(
        self,
        model: Model,
        *,
        title: str = "the assistant",
        settings: ModelSettings | None = None,
        max_retries: int = 1,
        max_chars: int = 8000,
    ) -> None:
        """Classify with ``model``.

        Args:
            model: the model to ask.
            title: the assistant's name, used in the prompt.
            settings: request options (default: a required, single tool call of at most
                :data:`ROUTING_MAX_TOKENS` tokens).
            max_retries: how often an unusable reply goes back to the model with the error.
            max_chars: the message is cut to this many characters in the prompt.
        """
        self.model = model
        self.title = title
        self.settings = settings or ModelSettings(
            tool_choice="required", parallel_tool_calls=False, max_tokens=ROUTING_MAX_TOKENS
        )
        self.max_retries = max_retries
        self.max_chars = max_chars

    def specs(self, query: Query) -> list[ToolSpec]:
        """The tools offered to the model for ``query``: the candidates, then the control tools."""
        out: list[ToolSpec] = []
        for name in query.candidates:
            profile = query.catalog.get(name)
            if profile is None:
                continue
            properties = {"text": _TEXT, **profile.parameters, "rationale": _RATIONALE}
            schema = {"type": "object", "properties": properties, "required": ["text", "rationale"]}
            out.append(ToolSpec(name, profile.description or profile.introduction, schema))
        for name, (kind, description) in CONTROL_TOOLS.items():
            properties = {"text": _SAY, "rationale": _RATIONALE} if kind in ("ask", "refuse") else {}
            properties["rationale"] = _RATIONALE
            required = [*(["text"] if "text" in properties else []), "rationale"]
            out.append(ToolSpec(name, description, {"type": "object", "properties": properties, "required": required}))
        return out

    def prompt(self, query: Query) -> str:
        """The system prompt for ``query``: instructions, tools, and the pending task with its expectation."""
        lines = []
        for name in query.candidates:
            profile = query.catalog.get(name)
            if profile is not None:
                lines.append(f"- {name}: {profile.description or profile.introduction}")
        text = INSTRUCTIONS.format(title=self.title, tools="\n".join(lines) or "(none)")
        pending = query.pending
        if query.origin == "tool":
            who = pending.tool if pending is not None else "a tool"
            text += (
                f"\nThe latest message is a request from the tool {who}, not from the human. Route it to the tool "
                "that should handle it, or call ask_human to put it to the human.\n"
            )
        if pending is None:
            text += "\nThere is no pending task.\n"
            if query.previous:  # what a follow-up ("and on sunday?") refers to
                text += f"The last request was answered by {query.previous}; a follow-up to it goes there too.\n"
            return text
        text += f"\nPending task: {pending.tool} is waiting for an answer to: {pending.content!r}\n"
        if pending.context:
            text += f"Context: {pending.context}\n"
        text += f"Expected answer: {describe_expectation(pending.expectation)}\n"
        text += f"If the message answers it, call {pending.tool}.\n"
        return text

    async def classify(self, ctx: RunContext[Any], query: Query) -> Decision:
        specs = self.specs(query)
        messages: list[Message] = [
            SystemMessage(content=self.prompt(query)),
            HumanMessage(content=query.text[: self.max_chars]),
        ]
        known = {spec.name for spec in specs}
        problem = ""
        for _ in range(self.max_retries + 1):
            request = ModelRequest(messages=list(messages), tools=specs, settings=self.settings)
            reply = (await ctx.call_model(self.model, request, name=self.name)).message
            decision, problem = self._read(reply, known)
            if decision is not None:
                decision.source = self.name
                return decision
            messages.append(reply)
            if reply.tool_calls:
                messages.extend(
                    ToolMessage(content=problem, tool_call_id=call.id, name=call.name, is_error=True)
                    for call in reply.tool_calls
                )
            else:
                messages.append(HumanMessage(content=problem))
        return Decision(
            kind="ask",
            reason="classifier_error",
            confidence=0.0,
            source=self.name,
            text="Sorry, I did not understand that. Could you rephrase it?",
            rationale=f"The classifier gave no usable answer: {problem}",
        )

    def _read(self, reply: AIMessage, known: set[str]) -> tuple[Decision | None, str]:
        if cut_off(reply):
            return None, "Your reply was cut off by the length limit. Call exactly one tool, with short arguments."
        if not reply.tool_calls:
            return None, "Call exactly one of the tools; do not answer with text."
        call = reply.tool_calls[0]
        if call.name not in known:
            return None, f"Unknown tool {call.name!r}. Call one of: {', '.join(sorted(known))}."
        try:
            arguments = call.parsed_arguments()
        except (ValueError, json.JSONDecodeError) as exc:
            return None, f"The arguments of {call.name} are not a JSON object ({exc}). Call it again."
        rationale = str(arguments.pop("rationale", "") or "").strip()
        if not rationale:
            return None, f"The rationale argument of {call.name} is required. Call it again with a rationale."
        text = str(arguments.pop("text", "") or "")
        control = CONTROL_TOOLS.get(call.name)
        if control is None:
            return Decision(kind="route", tool=call.name, text=text, rationale=rationale, arguments=arguments), ""
        return Decision(kind=control[0], text=text, rationale=rationale), ""
