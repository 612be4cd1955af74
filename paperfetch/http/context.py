"""The per-call context a batch's worker thread gives the transport (the stop signal, "answer now", the item and
source), and the item's :class:`Tally` the transport keeps, without the scheduler and the transport importing each
other. One frozen :class:`CallContext` per thread, written only by :func:`scope`.
"""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, replace
from typing import Any, Generator

__all__ = ["CallContext", "Tally", "answer_now", "answering_now", "charge_wait", "count_request", "current", "scope",
           "stop_event", "stopping_with"]


@dataclass(eq=False)
class Tally:
    """What the transport spent for one item: written by one thread at a time, read by the item's row and views."""

    waited_s: float = 0.0  #: seconds waited for hosts on the item's behalf (pacing, holds, retries)
    requests: int = 0      #: requests put on the wire for it


@dataclass(frozen=True)
class CallContext:
    """What this thread's calls are made for."""

    stop: threading.Event | None = None  #: the stop signal of the batch this thread works for
    answer_now: bool = False             #: wait for no hold and no open breaker: answer at once
    item: Any = None                     #: the item the calls work for (views name requests by it)
    tally: Tally | None = None           #: where the transport adds what it spends for that item
    source: str | None = None            #: the source that asks


_EMPTY = CallContext()
_local = threading.local()


def current() -> CallContext:
    """This thread's context (an empty one outside every :func:`scope`)."""
    return getattr(_local, "context", _EMPTY)


@contextmanager
def scope(**changes: Any) -> Generator[CallContext, None, None]:
    """Within this block (in this thread) the context has *changes*; the previous one is back after it."""
    before = current()
    _local.context = new = replace(before, **changes)
    try:
        yield new
    finally:
        _local.context = before


def answer_now() -> AbstractContextManager[CallContext]:
    """Within this block (in this thread) a held or open host is answered at once without sending."""
    return scope(answer_now=True)


def answering_now() -> bool:
    return current().answer_now


def stopping_with(event: threading.Event) -> AbstractContextManager[CallContext]:
    """Within this block (in this thread), :func:`stop_event` is *event*: a batch's worker."""
    return scope(stop=event)


def stop_event() -> threading.Event | None:
    """The stop signal of this thread's batch (``None`` outside one): the transport sleeps on it and checks it before sending."""
    return current().stop


def charge_wait(seconds: float) -> None:
    tally = current().tally
    if tally is not None and seconds > 0:
        tally.waited_s += seconds


def count_request() -> None:
    tally = current().tally
    if tally is not None:
        tally.requests += 1
