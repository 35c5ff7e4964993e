"""The swarm: agents that hand the conversation to each other, without a supervisor; a new
input resumes with the last active agent.

All agents share the thread's conversation. The active agent answers with its prompt, its tools and one handoff
tool per agent it may hand off to (its own handoff tools when it was given some, as in docs/migrating.md);
calling one makes that agent active, and it continues the turn. The last active agent is kept in the thread's state,
so the next turn starts with it. With a ``state_schema``, the whole swarm state (the active agent and the fields the
application adds) is kept and validated as that type.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Generic, TypeVar

from podium.agents.base import Agent, AgentResult
from podium.agents.react import ReactAgent
from podium.errors import LimitReached, StepLimitExceeded, UsageError
from podium.messages import AIMessage, HumanMessage, ToolMessage
from podium.models.base import ModelRequest
from podium.orchestration.supervisor._loop import system_prompt
from podium.orchestration.supervisor.handoff import HandoffTool, canonical_calls, create_handoff_tool, repair_history
from podium.orchestration.supervisor.options import SwarmOptions
from podium.runtime.context import RunContext
from podium.tools import ToolSpec

__all__ = ["Swarm", "create_swarm"]

S = TypeVar("S")


def _check_schema(schema: Any) -> Any:
    """``schema``'s validator, once it is known to have an ``active_agent`` field.

    Raises:
        UsageError: not a pydantic model or dataclass, or no ``active_agent`` field.
    """
    from pydantic import TypeAdapter

    fields = getattr(schema, "model_fields", None) or getattr(schema, "__dataclass_fields__", None)
    if fields is None and hasattr(schema, "__total__"):  # a TypedDict (typing's or typing_extensions')
        fields = schema.__annotations__
    if fields is None:
        raise UsageError(f"state_schema must be a pydantic model, a dataclass or a TypedDict, not {schema!r}")
    if "active_agent" not in fields:
        raise UsageError(f"state_schema {schema.__name__} needs an 'active_agent' field (the agent answering next)")
    return TypeAdapter(schema)


class Swarm(Agent, Generic[S]):
    """ReAct agents that pass the conversation to each other. See :func:`create_swarm` for the options."""

    def __init__(
        self,
        agents: Sequence[ReactAgent],
        *,
        default_active_agent: str,
        name: str = "swarm",
        description: str = "",
        state_schema: type[S] | None = None,
        options: SwarmOptions | None = None,
    ) -> None:
        """Build the swarm (:func:`create_swarm` describes the arguments).

        Raises:
            UsageError: duplicate names, an unknown agent, a handoff tool clashing with an agent's tool, or a
                ``state_schema`` without ``active_agent``.
        """
        self.options = options = options or SwarmOptions()
        self.name = name
        self.description = description
        self.agents = {a.name: a for a in agents}
        if len(self.agents) != len(agents):
            raise UsageError("agent names in a swarm must be unique")
        if default_active_agent not in self.agents:
            raise UsageError(f"default_active_agent {default_active_agent!r} is not one of the swarm's agents")
        self.default_active_agent = default_active_agent
        self.state_key = f"swarm:{name}:active" if state_schema is None else f"swarm:{name}:state"
        """The thread-state key holding the last active agent (the whole state, with a ``state_schema``)."""
        self.state_schema = state_schema
        self._adapter = _check_schema(state_schema) if state_schema is not None else None
        self._handoffs: dict[str, dict[str, HandoffTool]] = {}
        self._specs: dict[str, list[ToolSpec]] = {}
        for agent in agents:
            handoffs = options.handoffs
            targets = (
                handoffs.get(agent.name, ()) if handoffs is not None else [n for n in self.agents if n != agent.name]
            )
            own: list[HandoffTool] = list(agent.handoffs)
            if own:  # the agent's own handoff tools (names and descriptions of its choosing) replace the defaults
                targets = [h.agent for h in own]
            unknown = [t for t in targets if t not in self.agents]
            if unknown:
                raise UsageError(f"agent {agent.name!r} hands off to unknown agents {unknown}")
            tools = own or [create_handoff_tool(t, prefix=options.handoff_tool_prefix) for t in targets]
            clash = [t.name for t in tools if t.name in agent.tools]
            if clash:
                raise UsageError(f"agent {agent.name!r} already has tools named {clash}")
            self._handoffs[agent.name] = {t.name: t for t in tools}
            self._specs[agent.name] = [t.spec for t in agent.tools.values()] + [t.spec for t in tools]

    async def invoke(self, ctx: RunContext[Any], input: HumanMessage) -> AgentResult:
        """Answer ``input``, starting with the agent that was active at the end of the previous turn."""
        view = repair_history(await ctx.history())
        start = len(view)
        view.append(await ctx.add_message(input))
        first = await self._active(ctx)
        active = first if first in self.agents else self.default_active_agent
        activations = {active: 1}
        actx = ctx.child(active)
        handoffs = 0
        for _ in range(self.options.max_steps):
            agent = self.agents[active]
            request = ModelRequest(
                messages=system_prompt(agent.prompt, view) + view, tools=self._specs[active], settings=agent.settings
            )
            reply = canonical_calls((await actx.call_model(agent.model, request, name=agent.name)).message)
            view.append(reply)
            if not reply.tool_calls:
                data = await self._save(ctx, active, changed=active != first)
                return AgentResult(output=reply.content, messages=view[start:], data=data)
            target, results = await self._answer(actx, agent.name, reply)
            view.extend(results)
            if target is not None:
                handoffs += 1
                if handoffs > self.options.max_handoffs:
                    limit = self.options.max_handoffs
                    reason = f"swarm {self.name!r} reached its limit of {limit} handoffs in one turn"
                    raise LimitReached("handoffs", reason)
                active = target
                count = activations[active] = activations.get(active, 0) + 1
                actx = ctx.child(active if count == 1 else f"{active}~{count}")
        raise StepLimitExceeded(self.name, self.options.max_steps)

    async def _active(self, ctx: RunContext[Any]) -> str:
        """The agent that was active at the end of the previous turn (from the thread's state)."""
        if self._adapter is None:
            return str(await ctx.load_state(self.state_key, self.default_active_agent))
        stored = await ctx.load_state(self.state_key, None)
        if not isinstance(stored, dict):
            return self.default_active_agent
        return str(stored.get("active_agent") or self.default_active_agent)

    async def _save(self, ctx: RunContext[Any], active: str, *, changed: bool) -> S | None:
        """Keep the active agent; with a schema, validate and keep the whole state and return it.

        The state is read again first, so fields that tools changed during the turn (``ctx.save_state`` under
        :attr:`state_key`) are kept.
        """
        if self._adapter is None:
            if changed:
                await ctx.save_state(self.state_key, active)
            return None
        stored = await ctx.load_state(self.state_key, None)
        state = self._adapter.validate_python({**(stored if isinstance(stored, dict) else {}), "active_agent": active})
        await ctx.save_state(self.state_key, self._adapter.dump_python(state, mode="json"))
        return state  # type: ignore[no-any-return]

    async def state(self, runtime: Any, thread_id: str) -> S:
        """The swarm's state in the thread ``thread_id`` of ``runtime`` (``state_schema`` given), validated.

        Raises:
            UsageError: the swarm has no ``state_schema``.
            StoreError: no such thread.
        """
        if self._adapter is None:
            raise UsageError(f"swarm {self.name!r} has no state_schema: read the active agent from {self.state_key!r}")
        stored = await runtime.store.get_state(thread_id, self.state_key)
        data = stored if isinstance(stored, dict) else {"active_agent": self.default_active_agent}
        return self._adapter.validate_python(data)  # type: ignore[no-any-return]

    async def _answer(self, ctx: RunContext[Any], agent: str, reply: AIMessage) -> tuple[str | None, list[ToolMessage]]:
        """Answer every call of ``reply`` in order; return the agent handed off to (the first handoff wins)."""
        handoffs = self._handoffs[agent]
        regular = [c for c in reply.tool_calls if c.name not in handoffs]
        answers = {}
        if regular:
            for result in await ctx.call_tools(self.agents[agent].tools, regular):
                answers[result.tool_call_id] = result
        target: str | None = None
        for call in reply.tool_calls:
            handoff = handoffs.get(call.name)
            if handoff is None:
                continue
            if target is None:
                target = handoff.agent
                message = ToolMessage(
                    content=f"Successfully transferred to {target}", tool_call_id=call.id, name=call.name
                )
            else:
                message = ToolMessage(
                    content=f"Not transferred: this turn already went to {target}.",
                    tool_call_id=call.id,
                    name=call.name,
                    is_error=True,
                )
            recorded = await ctx.add_message(message)
            assert isinstance(recorded, ToolMessage)
            answers[call.id] = recorded
        return target, [answers[c.id] for c in reply.tool_calls]


def create_swarm(
    agents: Sequence[ReactAgent],
    *,
    default_active_agent: str,
    name: str = "swarm",
    description: str = "",
    handoffs: Mapping[str, Sequence[str]] | None = None,
    handoff_tool_prefix: str | None = None,
    max_handoffs: int = 10,
    max_steps: int = 50,
    state_schema: type[S] | None = None,
) -> Swarm[S]:
    """A swarm of ``agents`` sharing one conversation, each able to hand it to the others.

    Args:
        agents: the agents (their names, models, prompts, tools and settings are used).
        default_active_agent: who answers the first turn (and any turn of a thread without a recorded agent).
        name: the swarm's name (its path, and the thread-state key ``swarm:<name>:active``).
        description: what the swarm does, for a parent choosing among agents.
        handoffs, handoff_tool_prefix, max_handoffs, max_steps: the swarm's options, each described in
            :class:`~podium.orchestration.supervisor.SwarmOptions` (its defaults are these). A token budget is the
            run's :class:`~podium.Limits` (``max_tokens``).
        state_schema: a pydantic model, dataclass or TypedDict with an ``active_agent`` field (and the
            application's fields): the swarm's state is kept in the thread as that type, :meth:`Swarm.state`
            reads it, and :meth:`Swarm.invoke` returns it as ``AgentResult.data``. Tools change their fields with
            ``ctx.save_state(swarm.state_key, ...)``.

    Raises:
        UsageError: duplicate names, an unknown agent, a handoff tool clashing with an agent's tool, or a
            ``state_schema`` without ``active_agent``.
    """
    options = SwarmOptions(
        handoffs=handoffs, handoff_tool_prefix=handoff_tool_prefix, max_handoffs=max_handoffs, max_steps=max_steps
    )
    return Swarm(
        agents,
        default_active_agent=default_active_agent,
        name=name,
        description=description,
        state_schema=state_schema,
        options=options,
    )
