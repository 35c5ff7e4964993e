"""The plan service's specialists and their tools (used by ``examples/plan_service.py`` and ``bench/plan.py``)."""
