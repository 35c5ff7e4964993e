"""Random identifiers for threads, runs and lease owners, without importing :mod:`uuid` (which loads :mod:`platform`
and costs ``import podium`` a few milliseconds)."""

from __future__ import annotations

import os

__all__ = ["random_id"]


def random_id() -> str:
    """32 lowercase hex digits from the OS's random source, in the form of a version 4 UUID's ``hex``."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # the RFC 4122 variant
    return raw.hex()
