"""What a person reads of a run, for the protocols that carry only text (the OpenAI-compatible endpoint, A2A).

The thread API shows the thread's whole history; a text client gets one reply per turn, made of:

- **the agent's replies**: messages for which :attr:`podium.events.MessageAdded.is_reply` holds (the thread's
  history, said by the agent whose path it is), never the messages between tasks, a plan step's work, a worker's
  report to its supervisor or hand-back bookkeeping. Model tokens stream only when they go to the thread's history
  (:attr:`podium.events.TokenDelta.namespace` ""), so what streams is what the reply says;
- **then the run's artifacts, in brief**: a plan's agent messages as ``source: text`` (what the planner and each
  step's agent said); any other artifact (a letter, a table as JSON) under its title. The plan's records (each
  transition of the plan and its steps, as JSON) are state for the plan page and ``/plan`` routes, not text to read;
- **then the question** of a run that waits, with how to answer it (:func:`question_text`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from podium.events import Artifact, Event, Interrupt, InterruptRaised, MessageAdded, RunEnded, TokenDelta
from podium.orchestration.plan.record import describe

__all__ = ["Reply", "artifact_text", "question_text"]


def question_text(interrupt: Interrupt) -> str:
    """A question as a person reads it: its prompt and, in brackets, how to answer (:meth:`Interrupt.how_to_answer`:
    a choice's options, ``[yes / no]``, or the expectation's hint)."""
    how = interrupt.how_to_answer()
    return f"{interrupt.prompt} [{how}]" if how else interrupt.prompt


def artifact_text(artifact: Artifact) -> str | None:
    """An artifact as a person reads it after the reply, or ``None`` for a plan's record (state, not text)."""
    content, title = artifact.content, artifact.title
    if title == "plan" and isinstance(content, dict) and "kind" in content:
        return None  # a transition of the plan or a step: the agents' messages say what happened
    said = describe(title, content)  # a plan's agent message: "HrAgent: ..."
    if said is not None:
        return said
    body = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, default=str)
    return f"{title}:\n{body}" if title else body


@dataclass(slots=True)
class Reply:
    """The text of one run as a person reads it, built from its events in order (a stream sends each addition)."""

    run_id: str
    """The run whose events count (other runs' events on the thread are ignored)."""
    text: list[str] = field(default_factory=list)
    """The pieces added so far; joined, they are the reply."""
    ended: RunEnded | None = None
    """How the run ended, once it has."""
    _questions: list[str] = field(default_factory=list)
    _artifacts: list[str] = field(default_factory=list)
    _streaming: set[tuple[str, ...]] = field(default_factory=set)
    """The paths whose model reply to the thread's history is streaming (its message is then not added again)."""

    def feed(self, event: Event) -> str:
        """Take one event of the thread; the text it adds to the reply (``""`` for none)."""
        if event.run_id != self.run_id or self.ended is not None:
            return ""
        if isinstance(event, TokenDelta):
            if event.namespace != "" or not event.text:
                return ""
            new = event.path not in self._streaming
            self._streaming.add(event.path)
            return self._add(event.text, new_paragraph=new)
        if isinstance(event, MessageAdded) and event.namespace == "" and event.message.kind == "ai":
            streamed = event.path in self._streaming
            self._streaming.discard(event.path)
            if event.is_reply and not streamed:
                return self._add(event.message.content, new_paragraph=True)
        elif isinstance(event, InterruptRaised):
            self._questions.append(question_text(event.interrupt))
        elif isinstance(event, Artifact):
            said = artifact_text(event)
            if said:
                self._artifacts.append(said)
        elif isinstance(event, RunEnded):
            self.ended = event
            tail = self._artifacts + (self._questions if event.status == "interrupted" else [])
            if tail:
                return self._add("\n\n".join(tail), new_paragraph=True)
        return ""

    def _add(self, text: str, *, new_paragraph: bool) -> str:
        if new_paragraph and self.text:
            text = "\n\n" + text
        self.text.append(text)
        return text
