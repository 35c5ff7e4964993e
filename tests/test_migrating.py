"""docs/migrating.md: every Podium block runs (in order, in one namespace); the peers' blocks are only shown."""

from __future__ import annotations

import re
from pathlib import Path

PAGE = (Path(__file__).parents[1] / "docs" / "migrating.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", PAGE, re.S)
PEERS = ("# langgraph", "# Langroid")


def test_the_podium_blocks_run_and_each_peer_block_has_a_podium_twin() -> None:
    podium = [b for b in BLOCKS if not b.startswith(PEERS)]
    peers = [b for b in BLOCKS if b.startswith(PEERS)]
    assert len(peers) >= 10 and len(podium) == len(peers) + 1  # one setup block, then a Podium twin for each
    namespace: dict[str, object] = {"__name__": "migrating"}
    for block in podium:
        exec(compile(block, "docs/migrating.md", "exec"), namespace)
