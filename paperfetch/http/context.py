"""The per-call context a batch gives the transport in one worker thread.

A batch (:mod:`paperfetch.http.scheduler`) runs ``client.get`` in its worker threads and
tells the transport two things about the call in progress there, without either module
importing the other:

* the batch's **stop signal** (:func:`stop_event`): the transport sleeps on it, so a stopped
  batch's waits end at once, and checks it before sending anything;
* **answer now** (:func:`answer_now` / :func:`answering_now`): the host is held or its breaker
  open past what the batch waits for, so the transport waits for nothing and answers at once.

Thread-local values only; nothing here sends, sleeps or decides.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Generator

__all__ = ["answer_now", "answering_now", "stop_event", "stopping_with"]

_local = threading.local()


@contextmanager
def answer_now() -> Generator[None, None, None]:
    """Within this block (in this thread) the transport waits for no hold and no open breaker:
    such requests are answered at once without being sent. The scheduler drains a blocked host so."""
    before = getattr(_local, "now", False)
    _local.now = True
    try:
        yield
    finally:
        _local.now = before


def answering_now() -> bool:
    """Whether this thread is inside :func:`answer_now`."""
    return getattr(_local, "now", False)


@contextmanager
def stopping_with(event: threading.Event) -> Generator[None, None, None]:
    """Within this block (in this thread), :func:`stop_event` is *event*: a batch's worker."""
    before = getattr(_local, "stop", None)
    _local.stop = event
    try:
        yield
    finally:
        _local.stop = before


def stop_event() -> threading.Event | None:
    """The stop signal of the batch this thread works for (``None`` outside a batch's workers).

    The transport sleeps on it (``clock.wait``), so a stopped batch's waits end at once, and checks
    it before sending anything."""
    return getattr(_local, "stop", None)
