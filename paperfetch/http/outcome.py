"""What a response means, ``classify(response) -> Outcome``: per service, because services disagree about what a
status means (a 404 that means "busy", a 200 that carries an error); the retry policy stays the transport's.
"""

from __future__ import annotations

from enum import Enum

import requests

__all__ = ["Outcome", "default_classify"]


class Outcome(str, Enum):
    """The verdict on one response."""

    OK = "ok"          #: the answer; hand it to the caller
    ABSENT = "absent"  #: the record does not exist; asking again cannot change that
    RETRY = "retry"    #: a transient failure; ask again after a pause
    FATAL = "fatal"    #: a malformed request, a rejected key: asking again cannot help


_RETRY_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})
_ABSENT_STATUSES = frozenset({404, 410})


def default_classify(response: requests.Response) -> Outcome:
    """Read status codes honestly: 2xx OK, 404/410 ABSENT, 408/425/429/5xx RETRY, anything else FATAL."""
    status = response.status_code
    if 200 <= status < 300:
        return Outcome.OK
    if status in _ABSENT_STATUSES:
        return Outcome.ABSENT
    if status in _RETRY_STATUSES or 500 <= status < 600:
        return Outcome.RETRY
    return Outcome.FATAL
