"""LangChain tools and LangGraph graphs in Podium, so a team can bring the agents it already built.

- :func:`from_langchain` makes a LangChain tool (any ``BaseTool``) a :class:`podium.Tool`: same name, description
  and argument schema; LangChain validates the arguments and its errors go back to the model.
- :class:`LangGraphAgent` makes a compiled LangGraph graph a :class:`podium.Agent`, usable on its own, as a tool
  (``.as_tool()``), as a supervisor's worker or as a master-agent tool. The graph's ``interrupt(...)`` becomes a
  Podium question to the human (``ctx.ask``): a durable interrupt under a runtime, a task waiting on the master
  agent's stack under the master agent. The answer resumes the graph from its own checkpoint
  (``Command(resume=...)``), so the graph needs a checkpointer, a durable one (SQLite, PostgreSQL) to resume
  in another process.

Needs the ``langchain`` extra (``langchain-core`` and ``langgraph``); they load when a tool or graph is wrapped.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from podium.agents.base import Agent, AgentResult
from podium.errors import ModelRetry, UsageError
from podium.events import Expectation
from podium.messages import HumanMessage
from podium.tools import Tool, ToolArgumentsError, ToolMetadata

if TYPE_CHECKING:
    from podium.runtime.context import RunContext

__all__ = ["LangChainTool", "LangGraphAgent", "from_langchain"]


def _require(module: str) -> None:
    try:
        __import__(module)
    except ImportError:
        raise UsageError(f"this needs the 'langchain' extra ({module}): pip install 'podium[langchain]'") from None


class LangChainTool(Tool):
    """A LangChain tool callable by a model like any Podium tool."""

    __slots__ = ("langchain_tool",)

    def __init__(self, langchain_tool: Any, *, name: str | None = None, metadata: ToolMetadata | None = None) -> None:
        """Wrap ``langchain_tool`` (a ``langchain_core.tools.BaseTool``)."""
        _require("langchain_core")
        from langchain_core.utils.function_calling import convert_to_openai_tool

        self.langchain_tool = langchain_tool
        """The wrapped LangChain tool."""
        function = convert_to_openai_tool(langchain_tool)["function"]

        async def call(arguments: dict[str, Any]) -> Any:
            return await self._invoke(arguments)

        super().__init__(
            call,
            name=name or function["name"],
            description=function.get("description", ""),
            metadata=metadata,
            parameters=function.get("parameters") or {"type": "object", "properties": {}},
        )

    def validate(self, arguments: str | dict[str, Any]) -> dict[str, Any]:
        """Parse the model's arguments into an object; LangChain checks them against the tool's schema."""
        raw: Any = arguments
        if isinstance(arguments, str):
            try:
                raw = json.loads(arguments.strip() or "{}")
            except json.JSONDecodeError as exc:
                raise ToolArgumentsError(
                    f"The arguments for tool '{self.name}' are not valid JSON ({exc.msg}). Call it with a JSON object."
                ) from None
        if not isinstance(raw, dict):
            raise ToolArgumentsError(f"The arguments for tool '{self.name}' must be a JSON object.")
        return {"arguments": raw}

    async def _invoke(self, arguments: dict[str, Any]) -> Any:
        from langchain_core.tools import ToolException
        from pydantic import ValidationError

        try:
            return await self.langchain_tool.ainvoke(arguments)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
            raise ModelRetry(f"Invalid arguments for tool '{self.name}': {problems}.") from None
        except ToolException as exc:
            raise ModelRetry(str(exc)) from None


def from_langchain(langchain_tool: Any, *, name: str | None = None, metadata: ToolMetadata | None = None) -> Tool:
    """A LangChain tool as a :class:`podium.Tool` (``name`` replaces its name)."""
    return LangChainTool(langchain_tool, name=name, metadata=metadata)


def _messages_input(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


def _last_message(values: Any) -> str:
    messages = values.get("messages") if isinstance(values, dict) else None
    if messages:
        last = messages[-1]
        content = last.get("content") if isinstance(last, dict) else getattr(last, "content", last)
        return content if isinstance(content, str) else json.dumps(content, default=str)
    return json.dumps(values, default=str, ensure_ascii=False)


def _question(value: Any) -> tuple[str, Expectation | None]:
    """What to ask the human for an interrupt's value: text as it is; from a dict its ``question`` (or ``prompt``)
    and, with ``options``, a choice."""
    if isinstance(value, str):
        return value, None
    if isinstance(value, dict):
        text = value.get("question") or value.get("prompt") or value.get("text")
        options = value.get("options")
        expectation = Expectation(type="choice", options=[str(o) for o in options]) if options else None
        if isinstance(text, str):
            return text, expectation
    return json.dumps(value, default=str, ensure_ascii=False), None


class LangGraphAgent(Agent):
    """A compiled LangGraph graph as a Podium agent; its interrupts are Podium questions to the human."""

    def __init__(
        self,
        graph: Any,
        *,
        name: str,
        description: str = "",
        input: Callable[[str], Any] = _messages_input,
        output: Callable[[Any], str] = _last_message,
        max_interrupts: int = 20,
    ) -> None:
        """Wrap ``graph`` (the result of ``StateGraph.compile(checkpointer=...)``).

        Args:
            graph: the compiled graph; it needs a checkpointer when it interrupts.
            name: the agent's name.
            description: what it does, for a caller choosing among agents.
            input: builds the graph's input from the human's message (default: ``{"messages": [user message]}``).
            output: reads the answer from the graph's final state (default: the last message's content).
            max_interrupts: questions one invocation may ask before it is stopped (guards against a loop).
        """
        _require("langgraph")
        self.graph = graph
        self.name = name
        self.description = description
        self.input = input
        self.output = output
        self.max_interrupts = max_interrupts

    def _config(self, ctx: RunContext[Any]) -> dict[str, Any]:
        # stable across re-executions and processes: the conversation plus where the graph runs in it
        return {"configurable": {"thread_id": f"{ctx.thread_id}/{'/'.join(ctx.path)}"}}

    async def _state(self, config: dict[str, Any]) -> dict[str, Any]:
        snapshot = await self.graph.aget_state(config)
        interrupts = [
            {"id": str(item.id), "value": json.loads(json.dumps(item.value, default=str))}
            for item in getattr(snapshot, "interrupts", ())
        ]
        if interrupts:
            return {"interrupts": interrupts}
        return {"output": self.output(snapshot.values) if snapshot.values else ""}

    async def invoke(self, ctx: RunContext[Any], input: HumanMessage) -> AgentResult:
        """Run the graph on ``input`` (or resume it where it waits), asking the human at each interrupt."""
        from langgraph.types import Command

        config = self._config(ctx)
        text = input.content if isinstance(input.content, str) else str(input.content)
        state = await ctx.step(lambda: self._state(config))
        if not state.get("interrupts"):  # not waiting on a question: start (or continue the graph's thread) anew

            async def start() -> None:
                await self.graph.ainvoke(self.input(text), config)

            await ctx.step(start)
            state = await ctx.step(lambda: self._state(config))
        for _ in range(self.max_interrupts):
            interrupts = state.get("interrupts")
            if not interrupts:
                return AgentResult(output=state["output"])
            answers: dict[str, str] = {}
            for item in interrupts:
                prompt, expectation = _question(item["value"])
                # keyed by the graph's interrupt id, so the question is the same one whichever run asks it
                asker = ctx.child(f"interrupt-{item['id']}")
                answers[item["id"]] = await asker.ask(prompt, expectation=expectation, data=item["value"])
            resume: Any = next(iter(answers.values())) if len(answers) == 1 else answers

            async def go_on(resume: Any = resume) -> None:
                await self.graph.ainvoke(Command(resume=resume), config)

            await ctx.step(go_on)
            state = await ctx.step(lambda: self._state(config))
        raise UsageError(f"graph {self.name!r} asked more than {self.max_interrupts} questions in one invocation")
