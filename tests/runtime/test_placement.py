"""Where tool threads wake (``podium._handoff.Placement``): every way the system can refuse leaves things as they were."""

from __future__ import annotations

import os

import pytest

from podium import _handoff
from podium._handoff import Placement

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="threads cannot be placed on CPUs here")


def test_without_the_system_calls_nothing_is_looked_up(monkeypatch: pytest.MonkeyPatch) -> None:
    import ctypes

    monkeypatch.delattr(os, "sched_setaffinity")
    assert _handoff._load_getcpu() is None
    monkeypatch.undo()

    def no_libc(*args: object) -> object:
        raise OSError("no C library here")

    monkeypatch.setattr(ctypes, "CDLL", no_libc)
    assert _handoff._load_getcpu() is None

    class Unknowing:  # a C library whose sched_getcpu cannot tell
        def __call__(self) -> int:
            return -1

    class Library:
        sched_getcpu = Unknowing()

    monkeypatch.setattr(ctypes, "CDLL", lambda *args: Library())
    assert _handoff._load_getcpu() is None


def test_a_thread_that_ended_is_left_alone_and_placement_goes_on() -> None:
    if Placement.here() is None:
        pytest.skip("the CPU a thread runs on cannot be known here")
    placement = Placement()
    placement.native_id = 4_194_304 + 1_000  # past Linux's largest thread id: no such thread
    placement.place(0)
    assert placement.cpu is None and Placement.here() is not None  # not taken for a refusal: still placing


def test_a_refused_release_keeps_the_thread_running(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(pid: int, cpus: set[int]) -> None:
        raise OSError(22, "Invalid argument")

    placement = Placement()
    placement.cpu = 0
    monkeypatch.setattr(os, "sched_setaffinity", refused)
    placement.release()
    assert placement.cpu is None
