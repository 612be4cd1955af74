"""Events: everything the transport does, published to whoever listens (docs/politeness.md, "Events and
logging"); the transport does not know its subscribers.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from enum import Enum
from typing import Callable

from paperfetch.redact import redact_text

__all__ = ["Event", "EventBus", "EventKind"]

logger = logging.getLogger(__name__)


class EventKind(str, Enum):
    REQUEST = "request"              #: a request is about to be sent
    RESPONSE = "response"            #: a response arrived (status set)
    NETWORK_ERROR = "network_error"  #: nothing arrived (timeout, connection error)
    REDIRECT = "redirect"            #: a redirect is being followed
    WAIT = "wait"                    #: the caller sleeps (pacing, hold, retry)
    RETRY = "retry"                  #: the same request will be sent again
    BACKOFF = "backoff"              #: the host's backoff changed (seconds = new value)
    HOLD = "hold"                    #: the host is held until a time (seconds = hold length)
    HELD = "held"                    #: a request was not sent because the host is held
    SUPPRESS = "suppress"            #: the host is suppressed after a 403
    SUPPRESSED = "suppressed"        #: a request was not sent because the host is suppressed
    ROBOTS = "robots"                #: robots.txt fetched (detail: its status)
    DISALLOWED = "disallowed"        #: robots.txt forbids the URL
    BREAKER = "breaker"              #: the host's circuit breaker opened or closed (seconds = open period)
    LEARNED = "learned"              #: the host's learned interval changed (seconds = new value)


@dataclass(frozen=True)
class Event:
    kind: EventKind
    host: str
    at: float                    #: wall-clock time (epoch seconds)
    url: str | None = None       #: redacted
    status: int | None = None
    seconds: float | None = None
    detail: str = ""

    def __post_init__(self) -> None:
        if self.detail:
            object.__setattr__(self, "detail", redact_text(self.detail))


Subscriber = Callable[[Event], None]


class EventBus:
    """A thread-safe list of subscribers; ``publish`` calls each in turn."""

    def __init__(self) -> None:
        self._subscribers: tuple[Subscriber, ...] = ()
        self._lock = threading.Lock()

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Add *subscriber*; returns a function that removes it again."""
        with self._lock:
            self._subscribers = self._subscribers + (subscriber,)

        def unsubscribe() -> None:
            with self._lock:
                self._subscribers = tuple(s for s in self._subscribers if s is not subscriber)

        return unsubscribe

    def publish(self, event: Event) -> None:
        for subscriber in self._subscribers:
            try:
                subscriber(event)
            except Exception:  # logged with its traceback
                logger.exception("event subscriber %r failed on %s", subscriber, event.kind.value)

    def __len__(self) -> int:
        return len(self._subscribers)
