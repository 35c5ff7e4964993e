"""A child process for the crash test: runs (or finishes) a four-tool-call conversation on a SQLite file.

Usage: ``python crash_worker.py run|resume DB LOG`` where LOG collects one line per model call and tool execution.
The third tool call blocks (forever) the first time it runs, so the parent can kill the process mid-run.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

from podium import AIMessage, HumanMessage, Message, ModelRequest, ReactAgent, Runtime, SQLiteStore, ToolMessage
from podium.testing import FunctionModel, tool_call

THREAD = "crash-thread"


def main(mode: str, db: str, log_path: str) -> None:
    log = Path(log_path)

    def write(entry: dict[str, object]) -> None:
        with log.open("a") as out:
            out.write(json.dumps(entry) + "\n")

    def model(messages: list[Message], request: ModelRequest) -> AIMessage:
        done = sum(isinstance(m, ToolMessage) for m in messages)
        write({"what": "model", "seen": len(messages)})
        if done < 4:
            return AIMessage(tool_calls=[tool_call("record_step", {"n": done + 1})])
        return AIMessage(content="all four steps recorded")

    def record_step(n: int) -> str:
        """Record one step of the job."""
        write({"what": "tool", "n": n})
        marker = log.with_suffix(".blocked")
        if n == 3 and not marker.exists():
            marker.write_text("x")
            time.sleep(600)  # the parent kills us here
        return f"step {n} recorded"

    async def go() -> None:
        runtime = Runtime(SQLiteStore(db))
        agent = ReactAgent("worker", FunctionModel(model), [record_step])
        if mode == "run":
            result = await runtime.run(agent, HumanMessage(content="record four steps"), thread_id=THREAD)
        else:
            result = await runtime.resume(agent, THREAD)
        print(json.dumps({"status": result.status, "output": result.output}))

    asyncio.run(go())


if __name__ == "__main__":
    main(*sys.argv[1:4])
