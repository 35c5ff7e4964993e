"""The acceptance scenario of ``specs/master_agent.md``: the seed's SmartInvestigator demo, offline, turn by turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.orchestration.master_support import DL, ROLE, ROLE_QUESTION, SS, TOPOLOGY_QUESTION, Conversation, check_turn

from examples.smart_investigator import DEMO, build, stand_in
from podium import AIMessage, HumanMessage, Runtime, Settings, SQLiteStore, Store, ToolMessage
from podium.app import load_app
from podium.orchestration.master.agent import MasterAgent
from podium.testing import FunctionModel


def test_welcome_lists_both_tools_by_their_introductions() -> None:
    agent = build()
    assert agent.welcome == (
        "Hello, I am Smart Investigator. I can help you with the following tasks:\n"
        f"- {DL}: Assist you in crafting a standardised declined letter.\n"
        f"- {SS}: Assist you in finding your claim id.\n"
        "How can I help you today?"
    )
    app = load_app("smart-investigator")
    assert app.welcome == agent.welcome
    offline = app.build(app.model(Settings.load(env={})))
    assert isinstance(offline, MasterAgent) and offline.classifier.name == "router"
    assert build(FunctionModel(stand_in)).classifier.name == "hybrid"  # with a real model configured


async def test_the_seed_demo_turn_by_turn(store: Store) -> None:
    conversation = Conversation(Runtime(store), build())
    for number, text in enumerate(DEMO):
        turn = await conversation.say(text)
        check_turn(turn, number)
    assert await conversation.stack() == []
    # Every human message went through the classifier, and only routes called tools.
    assert [len(t.decisions) for t in conversation.turns] == [1] * len(DEMO)
    assert [t.tools_called for t in conversation.turns] == [[DL], [SS], [], [SS], [DL], [], [], [DL]]


async def test_the_transcript_is_the_seeds_message_state(store: Store) -> None:
    conversation = Conversation(Runtime(store), build())
    for text in DEMO:
        await conversation.say(text)
    messages = await conversation.runtime.messages(conversation.thread_id)
    humans = [m.content for m in messages if isinstance(m, HumanMessage)]
    assert humans == DEMO
    tools = [(m.name, m.content) for m in messages if isinstance(m, ToolMessage)]
    assert tools == [
        (DL, "Please provide your claim id"),
        (SS, ROLE_QUESTION),
        (SS, 'Due to "I am a partner.", the id can be found at www.my_id.com.'),
        (DL, TOPOLOGY_QUESTION),
        (DL, "Letter generated!"),
    ]
    final = messages[-1]
    assert isinstance(final, AIMessage) and final.content.startswith("Letter generated!")
    # side-channel texts never enter the conversation a model could be shown
    everything = " ".join(m.content + " ".join(c.arguments for c in getattr(m, "tool_calls", [])) for m in messages)
    assert "Choosing" not in everything and "Obtaining" not in everything


@pytest.mark.parametrize("restart_after", range(len(DEMO) - 1))
async def test_a_restart_between_two_turns_changes_nothing(tmp_path: Path, restart_after: int) -> None:
    path = tmp_path / "store.db"
    store = SQLiteStore(path)
    conversation = Conversation(Runtime(store), build())
    for number, text in enumerate(DEMO):
        if number == restart_after + 1:  # a new process: new store connection, new runtime, new agent
            entries_before = await conversation.stack_entries()
            await store.close()
            store = SQLiteStore(path)
            conversation.runtime, conversation.agent = Runtime(store), build()
            assert await conversation.stack_entries() == entries_before
        check_turn(await conversation.say(text), number)
    await store.close()


async def test_the_letter_agent_keeps_its_own_state_per_call(store: Store) -> None:
    conversation = Conversation(Runtime(store), build())
    for text in DEMO[:5]:
        await conversation.say(text)
    (entry,) = await conversation.stack_entries()
    assert entry["parent_tool"] == DL and entry["parent_state"] is None  # its state is not in the stack ...
    own: dict[str, Any] = await store.get_state(conversation.thread_id, f"agent:{DL}:{entry['call_id']}")
    assert own == {"claim_id": "123ABH", "topology": None, "asking": "topology"}  # ... it keeps it itself


async def test_smart_strategy_hands_its_state_to_the_stack(store: Store) -> None:
    conversation = Conversation(Runtime(store), build())
    for text in DEMO[:2]:
        await conversation.say(text)
    entries = await conversation.stack_entries()
    assert [e["parent_tool"] for e in entries] == [DL, SS]
    assert entries[1]["parent_state"] == {"question": "Where to find a claim id?"}
    assert entries[1]["task"]["expectation"] == ROLE
    assert "artifact" not in entries[1]["task"]  # only text is stored
