"""The tasks demo's own parts (used by ``examples/tasks_demo.py``): the reading of calculations."""
