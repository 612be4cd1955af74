"""The Redis resume ledger's old address: :class:`RedisLedger` lives in :mod:`paperfetch.ledger.redis` now.

Kept so ``from paperfetch.redis_ledger import RedisLedger`` goes on working; new code imports it from
:mod:`paperfetch.ledger` (or opens it with :func:`paperfetch.ledger.open_ledger`).
"""

from __future__ import annotations

from paperfetch.ledger.redis import RedisLedger

__all__ = ["RedisLedger"]
