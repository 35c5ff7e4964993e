"""Orchestrations built on the core: each in its own module, each usable alone from Python."""
