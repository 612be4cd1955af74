"""Batches over many hosts: the scheduler lives with the transport, in :mod:`paperfetch.http.scheduler`.

This module keeps the names importable from where they always were.
"""

from paperfetch.http.scheduler import (
    BUSY_POLL_S,
    MAX_WAIT_S,
    NO_REQUEST,
    STOP_GRACE_S,
    HostScheduler,
    Job,
    default_workers,
    get_many,
    iter_many,
)

__all__ = [
    "BUSY_POLL_S", "HostScheduler", "Job", "MAX_WAIT_S", "NO_REQUEST", "STOP_GRACE_S", "default_workers", "get_many", "iter_many",
]
