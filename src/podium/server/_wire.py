"""Small helpers shared by the routes: timestamps and JSON-safe values."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["iso"]


def iso(timestamp: float) -> str:
    """Seconds since the epoch as an ISO 8601 UTC timestamp."""
    return datetime.fromtimestamp(timestamp, UTC).isoformat()
