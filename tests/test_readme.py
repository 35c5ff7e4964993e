"""The README's Python blocks run, and CI runs the README's test command."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("block", re.findall(r"```python\n(.*?)```", README, re.S))
def test_python_blocks_run(block: str) -> None:
    exec(compile(block, "README.md", "exec"), {"__name__": "readme"})


def test_readme_starts_with_two_commands_and_ci_runs_the_second() -> None:
    blocks = re.findall(r"```bash\n(.*?)```", README, re.S)
    assert README.index("```bash") < README.index("\n\n", README.index("# Podium") + 9) + 3
    main, tests = blocks[0].strip(), blocks[1].strip()
    assert "podium serve" in main and "\n" not in main and "\n" not in tests
    assert "podium chat smart-investigator" in README  # the terminal chat stays documented
    assert tests in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
