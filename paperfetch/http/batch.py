""":func:`get_many` and :func:`iter_many`: each host as polite as a loop of ``get`` would keep it, the hosts
side by side (docs/politeness.md, "get_many()") by :class:`~paperfetch.http.scheduler.HostScheduler`.
"""

from __future__ import annotations

import queue
import threading
from typing import TYPE_CHECKING, Any, Generator, Iterable, Protocol

from paperfetch.http.scheduler import HostScheduler, Transport

if TYPE_CHECKING:  # pragma: no cover
    import requests

__all__ = ["BatchClient", "get_many", "iter_many"]


class BatchClient(Transport, Protocol):
    """A transport that also answers ``get`` (:class:`~paperfetch.http.client.HttpClient` does)."""

    def get(self, url: str, **kwargs: Any) -> "requests.Response | None": ...


class _GetJob:
    """One ``client.get(url, **kwargs)``: a job of a single request (redirects inside it)."""

    __slots__ = ("index", "url", "result", "error", "_client", "_kwargs")

    def __init__(self, client: BatchClient, index: int, url: str, kwargs: dict[str, Any]) -> None:
        self.index = index
        self.url: str | None = url
        self.result: Any = None
        self.error: BaseException | None = None
        self._client = client
        self._kwargs = kwargs

    def advance(self) -> None:
        url = self.url
        assert url is not None
        self.result = self._client.get(url, **self._kwargs)
        self.url = None

    def __repr__(self) -> str:
        return f"_GetJob({self.index}, {self.url!r})"


_DONE = object()


def iter_many(
    client: BatchClient,
    urls: Iterable[str],
    *,
    workers: int | None = None,
    **kwargs: Any,
) -> Generator[tuple[int, "requests.Response | BaseException | None"], None, None]:
    """``(index, client.get(urls[index], **kwargs))`` as each URL finishes (the exception where ``get`` would
    raise). Leaving the loop early stops the batch; the generator returns once all its threads have ended."""
    jobs = [_GetJob(client, i, url, kwargs) for i, url in enumerate(urls)]
    done: queue.SimpleQueue = queue.SimpleQueue()
    scheduler = HostScheduler(client, workers=workers, on_finished=done.put)
    failure: list[BaseException] = []

    def dispatch() -> None:
        try:
            scheduler.run(jobs)
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            failure.append(exc)
        finally:
            done.put(_DONE)

    thread = threading.Thread(target=dispatch, name="paperfetch-dispatch", daemon=True)
    thread.start()
    try:
        while True:
            job = done.get()
            if job is _DONE:
                break
            yield job.index, (job.error if job.error is not None else job.result)
        if failure:
            raise failure[0]
    finally:
        scheduler.stop()
        thread.join()


def get_many(
    client: BatchClient,
    urls: Iterable[str],
    *,
    workers: int | None = None,
    return_exceptions: bool = True,
    **kwargs: Any,
) -> list["requests.Response | BaseException | None"]:
    """``[client.get(url, **kwargs) for url in urls]``, the hosts served concurrently. Where ``get`` would raise,
    ``return_exceptions=True`` (default) puts the exception in the slot; False raises the first one, stopping the batch."""
    urls = list(urls)
    results: list[Any] = [None] * len(urls)
    pairs = iter_many(client, urls, workers=workers, **kwargs)
    try:
        for index, result in pairs:
            if not return_exceptions and isinstance(result, BaseException):
                raise result
            results[index] = result
    finally:
        pairs.close()
    return results
