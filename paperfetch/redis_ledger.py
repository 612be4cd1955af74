"""The Redis resume ledger's old address; new code imports :class:`RedisLedger` from :mod:`paperfetch.ledger`."""

from __future__ import annotations

from paperfetch.ledger.redis import RedisLedger

__all__ = ["RedisLedger"]
