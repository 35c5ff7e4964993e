"""One turn of the claims desk in its own process: ``python langgraph_worker.py STORE CHECKPOINTS THREAD TEXT``.

Prints the run's result and the graph nodes this process ran, as one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import sys

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from tests.integrations.langgraph_support import CALLS, master

from podium import Runtime, SQLiteStore


async def main(store_path: str, checkpoints: str, thread: str, text: str) -> None:
    store = SQLiteStore(store_path)
    async with AsyncSqliteSaver.from_conn_string(checkpoints) as saver:
        runtime = Runtime(store)
        agent = master(saver)
        status = None
        if await store.get_thread(thread) is not None:
            status, _ = await runtime.pending(thread)
        if status == "interrupted":
            result = await runtime.resume(agent, thread, text)
        else:
            result = await runtime.run(agent, text, thread_id=thread)
    await store.close()
    print(json.dumps({"status": result.status, "output": result.output, "reason": result.reason, "calls": CALLS}))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
