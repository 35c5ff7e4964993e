"""A remote A2A agent in Podium, with the official ``a2a-sdk`` (the ``a2a`` extra).

:class:`A2AAgent` is a :class:`podium.Agent` talking to an agent served over A2A (another Podium server's app, or
any A2A server): run it alone, give it to a supervisor as a worker, to a ReAct agent or the master agent as a tool
(``.as_tool()``). Each invocation sends the request as a message, streams the task until it stops, and answers
with the task's artifacts (or the agent's reply message):

- ``input-required``: the remote agent's question becomes a Podium question to the human (``ctx.ask``, a durable
  interrupt under a runtime, with its choices when the remote agent is a Podium app), and the answer goes back on
  the same task and context; the task goes on.
- ``failed``, ``rejected``, ``canceled``, or a server that cannot be reached: :class:`A2AError`, which agents
  handling tool errors show the model as the tool's error.

Each exchange is a journaled step, so a resumed run does not send a message already answered. The remote context
is the Podium conversation plus the agent's path, so later calls in one conversation continue the remote one.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from podium.agents.base import Agent, AgentResult
from podium.errors import PodiumError, UsageError
from podium.events import Expectation

if TYPE_CHECKING:
    from a2a.types import a2a_pb2 as pb

    from podium.messages import HumanMessage
    from podium.runtime.context import RunContext

__all__ = ["A2AAgent", "A2AError"]


class A2AError(PodiumError):
    """A remote A2A agent failed: it cannot be reached, or its task ended without an answer."""

    def __init__(self, agent: str, detail: str) -> None:
        """``detail`` says what went wrong with the remote agent ``agent``."""
        super().__init__(f"A2A agent {agent!r}: {detail}")
        self.agent = agent
        """The remote agent's name."""
        self.detail = detail
        """What went wrong."""


def _require() -> None:
    try:
        import a2a.client  # noqa: F401
    except ImportError:  # pragma: no cover - the dev extra installs it
        raise UsageError("this needs the 'a2a' extra (a2a-sdk): pip install 'podium[a2a]'") from None


_STATES = {
    2: "working",
    3: "completed",
    4: "failed",
    5: "canceled",
    6: "input-required",
    7: "rejected",
    8: "auth-required",
}
"""``TaskState`` numbers by their protocol names (1 is ``submitted``; the SDK's enum keeps these values)."""


class _Reply:
    """What one exchange said: the task, its state, its artifacts' text, its status message."""

    def __init__(self) -> None:
        self.task_id = ""
        self.state = "submitted"
        self.artifacts: dict[str, str] = {}
        self.status_text = ""
        self.questions: list[dict[str, Any]] = []

    def _status(self, status: pb.TaskStatus) -> None:
        self.state = _STATES.get(status.state, "submitted")
        if status.HasField("message"):
            self.status_text = "\n".join(p.text for p in status.message.parts if p.text)
            from google.protobuf.json_format import MessageToDict

            asked = MessageToDict(status.message.metadata).get("podium.questions")
            self.questions = [q for q in asked if isinstance(q, dict)] if isinstance(asked, list) else []

    def take(self, response: pb.StreamResponse) -> None:
        """Fold one response of the stream into the reply."""
        if response.HasField("task"):
            task = response.task
            self.task_id = task.id
            for artifact in task.artifacts:
                self.artifacts[artifact.artifact_id] = "".join(p.text for p in artifact.parts if p.text)
            self._status(task.status)
        elif response.HasField("status_update"):
            self.task_id = response.status_update.task_id or self.task_id
            self._status(response.status_update.status)
        elif response.HasField("artifact_update"):
            update = response.artifact_update
            text = "".join(p.text for p in update.artifact.parts if p.text)
            before = self.artifacts.get(update.artifact.artifact_id, "") if update.append else ""
            self.artifacts[update.artifact.artifact_id] = before + text
        elif response.HasField("message"):  # a direct answer, no task
            self.state = "completed"
            self.artifacts["message"] = "\n".join(p.text for p in response.message.parts if p.text)

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "state": self.state,
            "text": "\n\n".join(t for t in self.artifacts.values() if t) if self.artifacts else self.status_text,
            "question": self.status_text,
            "questions": self.questions,
        }


class A2AAgent(Agent):
    """A remote agent served over A2A, as a Podium agent; its ``input-required`` questions go to the human."""

    def __init__(
        self,
        url: str,
        *,
        name: str,
        description: str = "",
        headers: Mapping[str, str] | None = None,
        timeout: float = 300.0,
        max_questions: int = 20,
    ) -> None:
        """Talk to the A2A agent at ``url`` (its card is at ``<url>/.well-known/agent-card.json``).

        Args:
            url: the agent's base URL (a Podium server's app: ``http://host:port/a2a/<app>``).
            name: the agent's name here (its tool name).
            description: what it does, for a model choosing among agents (see :meth:`discover` for the card's).
            headers: HTTP headers for every request (``{"Authorization": "Bearer ..."}``).
            timeout: seconds one exchange may take, the remote agent's work included.
            max_questions: questions one invocation may relay before it gives up (guards against a loop).
        """
        _require()
        self.url = url.rstrip("/")
        self.name = name
        self.description = description
        self.headers = dict(headers or {})
        self.timeout = timeout
        self.max_questions = max_questions

    @classmethod
    async def discover(
        cls,
        url: str,
        *,
        name: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 300.0,  # noqa: ASYNC109 - the agent's setting for its exchanges, not this call's bound
    ) -> A2AAgent:
        """The agent at ``url``, named and described by its card (``name`` replaces the card's name).

        Raises:
            A2AError: the card cannot be read.
        """
        _require()
        import httpx
        from a2a.client import A2ACardResolver

        try:
            async with httpx.AsyncClient(headers=dict(headers or {}), timeout=timeout) as http:
                card = await A2ACardResolver(http, url.rstrip("/")).get_agent_card()
        except Exception as exc:
            raise A2AError(name or url, f"cannot read its agent card: {exc}") from exc
        agent_name = name or "".join(c if c.isalnum() or c in "_-" else "_" for c in card.name)[:64] or "remote"
        return cls(url, name=agent_name, description=card.description, headers=headers, timeout=timeout)

    def _context(self, ctx: RunContext[Any]) -> str:
        where = f"{ctx.thread_id}/{'/'.join(ctx.path)}"
        return "podium-" + hashlib.sha256(where.encode()).hexdigest()[:32]

    async def _send(self, text: str, context_id: str, task_id: str) -> dict[str, Any]:
        """Send one message and follow its task until it stops; the reply as data (journaled)."""
        import httpx
        from a2a.client import ClientConfig, ClientFactory
        from a2a.types import a2a_pb2 as pb

        reply = _Reply()
        message = pb.Message(
            role=pb.Role.ROLE_USER,
            message_id=str(uuid.uuid4()),
            context_id=context_id,
            task_id=task_id,
            parts=[pb.Part(text=text)],
        )
        try:
            async with httpx.AsyncClient(headers=self.headers, timeout=self.timeout) as http:
                client = await ClientFactory(ClientConfig(httpx_client=http, streaming=True)).create_from_url(self.url)
                async for response in client.send_message(pb.SendMessageRequest(message=message)):
                    reply.take(response)
        except Exception as exc:
            raise A2AError(self.name, f"the exchange failed: {type(exc).__name__}: {exc}") from exc
        return reply.to_dict()

    async def invoke(self, ctx: RunContext[Any], input: HumanMessage) -> AgentResult:
        """Send ``input`` to the remote agent and relay its questions to the human until it answers.

        Raises:
            A2AError: the remote agent cannot be reached, or its task failed, was rejected or cancelled.
        """
        context_id = self._context(ctx)
        text = input.content if isinstance(input.content, str) else str(input.content)
        reply = await ctx.step(partial(self._send, text, context_id, ""))
        for _ in range(self.max_questions + 1):
            state = reply["state"]
            if state == "completed":
                return AgentResult(output=reply["text"])
            if state != "input-required":
                said = f": {reply['question']}" if reply["question"] else ""
                raise A2AError(self.name, f"the task ended {state}{said}")
            answer = await ctx.ask(
                reply["question"] or "The remote agent needs input.", expectation=_expectation(reply)
            )
            reply = await ctx.step(partial(self._send, answer, context_id, reply["task_id"]))
        raise A2AError(self.name, f"it asked more than {self.max_questions} questions in one request")


def _expectation(reply: dict[str, Any]) -> Expectation | None:
    questions = reply.get("questions") or []
    options = questions[0].get("options") if len(questions) == 1 else None
    return Expectation(type="choice", options=[str(o) for o in options]) if options else None
