"""Batches: many jobs over many hosts, the hosts served side by side, each as polite as the transport makes it.

How it dispatches, its threading rules and its memory (docs/politeness.md, "How the batch scheduler works").
"""

from __future__ import annotations

import logging
import math
import queue
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Protocol, runtime_checkable

from paperfetch.clock import Clock, SystemClock
from paperfetch.errors import Stopped
from paperfetch.http.assign import Placement
from paperfetch.http.context import answer_now, stopping_with
from paperfetch.http.hosts import HostLimiter, host_key
from paperfetch.http.robots import RobotsRules

__all__ = ["BUSY_POLL_S", "HostScheduler", "Job", "MAX_WAIT_S", "NO_REQUEST", "Transport", "default_workers"]

logger = logging.getLogger(__name__)

#: The longest the dispatcher waits before looking again (a released hold is noticed within it).
MAX_WAIT_S = 0.25
#: First re-look at a host busy with requests this scheduler did not dispatch; doubles up to MAX_WAIT_S.
BUSY_POLL_S = 0.002
#: The always-due queue of jobs whose next ``advance`` sends nothing (no host, or disallowed by robots.txt).
NO_REQUEST = "(no request)"


@runtime_checkable
class Job(Protocol):
    """Work done one request at a time: ``url`` is the next request's (``None`` when finished), ``advance()``
    makes it (blocking) and moves ``url`` on. The scheduler sets ``error`` when ``advance`` raises."""

    @property
    def url(self) -> str | None: ...

    error: BaseException | None

    def advance(self) -> None: ...


@runtime_checkable
class _DecidesAgain(Protocol):
    """A job whose next request may change with the hosts' facts: ``decide_again()`` decides it anew."""

    def decide_again(self) -> None: ...


class Transport(Protocol):
    """What the scheduler asks the transport (:class:`~paperfetch.http.client.HttpClient` is one). The answers
    are the transport's policy (:mod:`paperfetch.http.policy`); the scheduler re-derives none of them."""

    @property
    def max_in_flight_per_host(self) -> int: ...
    @property
    def max_host_wait_s(self) -> float: ...
    @property
    def requests_sent(self) -> int: ...
    @property
    def closed(self) -> bool: ...
    @property
    def clock(self) -> Clock: ...
    def host_limiter(self, url: str) -> HostLimiter: ...
    def ready_in(self, url: str) -> float: ...
    def hold_remaining(self, url: str) -> float: ...
    def closed_for(self, url: str) -> float: ...
    def in_flight_cap(self, url: str) -> int: ...
    def call_allowance(self) -> float: ...
    def would_send(self, url: str) -> bool: ...
    def breaker_ends_batch(self, url: str, *, since: float | None, max_host_wait_s: float) -> bool: ...


def default_workers(distinct_hosts: int) -> int:
    """``min(32, 4 × hosts)``, at least 1, for the distinct hosts of the jobs' first URLs (why: docs/politeness.md,
    "How the batch scheduler works")."""
    return max(1, min(32, 4 * distinct_hosts))


@dataclass(slots=True, eq=False)
class _HostQueue:
    key: str
    url: str                   # any URL on this host, for ready_in()
    since: float               # when the head of the queue started waiting (tie-break)
    limiter: HostLimiter | None = None  # None for NO_REQUEST
    jobs: deque = field(default_factory=deque)  # (job, url) in arrival order
    robots: RobotsRules | None = None   # the RobotsRules the queue was last sorted against
    draining: bool = False     # answered without a request: no in-flight limit
    busy_polls: int = 0
    in_flight: int = 0         # dispatched by this scheduler, not yet back
    not_before: float = 0.0    # not worth asking ready_in() before this
    dispatched: int = 0


def _longest_first(hq: _HostQueue) -> tuple[int, float]:
    """The order hosts are served in: the longest queue first, then the one waiting longest."""
    return -len(hq.jobs), hq.since


class HostScheduler:
    """Runs jobs over many hosts at once, each host no faster than the transport allows.

    :param workers: default :func:`default_workers` of the batch's distinct hosts.
    :param defer_limit_s: a host held longer than this is served at once (the transport answers without
        sending); a shorter hold defers its queue. Default ``client.call_allowance()``.
    :param on_finished: called with each finished (or failed) job, from worker threads: make it thread-safe.
    :param clock: default the client's; with a fake clock, waits are ``clock.sleep`` jumps.
    """

    def __init__(
        self,
        client: Transport,
        *,
        workers: int | None = None,
        defer_limit_s: float | None = None,
        on_finished: Callable[[Any], None] | None = None,
        clock: Clock | None = None,
        max_host_wait_s: float | None = None,
    ) -> None:
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be >= 1, not {workers!r}")
        self.client = client
        self.workers = workers
        if defer_limit_s is None:
            defer_limit_s = client.call_allowance()
        self.defer_limit_s = float(defer_limit_s)
        if max_host_wait_s is None:
            max_host_wait_s = float(client.max_host_wait_s)
        self.max_host_wait_s = float(max_host_wait_s)
        self.on_finished = on_finished
        self._clock: Clock = clock if clock is not None else client.clock
        self._real_time = isinstance(self._clock, SystemClock)
        self._cap = int(client.max_in_flight_per_host)
        #: a queue per pacing key: a host's, or one of its pools' (a transport without pools: the host's)
        self._pacing_key: Callable[[str], str] = getattr(client, "pacing_key", host_key)
        self._cond = threading.Condition()
        self._running = False
        self._closed = True
        self._generation = 0  # which run workers and their results belong to
        self._started_wall = 0.0
        self._fresh()

    def _fresh(self) -> None:
        """The state of a batch not yet started."""
        self._stopping = False
        self._hosts: dict[str, _HostQueue] = {}
        self._active: dict[str, _HostQueue] = {}   # hosts with queued jobs
        self._pending = 0     # jobs not yet finished: queued, in flight, or in on_finished
        self._in_flight = 0
        self._idle = 0
        self._work: queue.SimpleQueue = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._stop_event = threading.Event()
        self._callback_error: BaseException | None = None
        self._stats: dict[str, Any] = {
            "requests_started": 0, "finished": 0, "errors": 0, "unfinished": 0, "workers": 0,
            "worker_idle_s": 0.0, "scheduling_cpu_s": 0.0, "wakeups": 0, "wall_s": 0.0, "wire_requests": 0, "moves": 0,
        }

    def run(self, jobs: Iterable[Any]) -> None:
        """Advance every job until its ``url`` is ``None``; return then, or soon after :meth:`stop`.
        ``KeyboardInterrupt`` here stops the batch, waits for every worker, and is re-raised."""
        with self._cond:
            if self._running:
                raise RuntimeError("this HostScheduler is already running a batch")
            self._fresh()
            self._running = True
            self._closed = False
            self._generation += 1
            generation = self._generation
            self._started_wall = self._clock.time()
            self._placement = Placement(self.client, since=self._started_wall, max_host_wait_s=self.max_host_wait_s)
        cpu0 = time.thread_time()
        wall0 = time.perf_counter()
        sent0 = self.client.requests_sent
        try:
            self._ingest(jobs)
            count = self.workers if self.workers is not None else default_workers(len(self._hosts))
            if self._pending == 0:
                count = 0
            with self._cond:
                self._stats["workers"] = count
                self._idle = count
            for i in range(count):
                thread = threading.Thread(
                    target=self._worker, args=(generation, self._work), name=f"paperfetch-batch-{i}", daemon=True
                )
                self._threads.append(thread)
                thread.start()
            self._dispatch_loop()
        except BaseException:
            self.stop()
            raise
        finally:
            self._shutdown()
            with self._cond:
                self._stats["scheduling_cpu_s"] += time.thread_time() - cpu0
                self._stats["wall_s"] = time.perf_counter() - wall0
                self._stats["wire_requests"] = self.client.requests_sent - sent0
                self._stats["unfinished"] = self._pending
                self._running = False
                error, self._callback_error = self._callback_error, None
        if error is not None:
            raise error

    def stop(self) -> None:
        """Stop the batch (docs/politeness.md, "A stop that stops"); unfinished jobs keep their ``url``.
        Safe from any thread, and more than once."""
        self._stop_event.set()
        with self._cond:
            self._stopping = True
            self._cond.notify_all()

    def queued(self) -> dict[str, int]:
        """Jobs waiting in each host's queue now (a copy; in-flight jobs not counted)."""
        with self._cond:
            return {k: len(hq.jobs) for k, hq in self._hosts.items()}

    @property
    def stats(self) -> dict[str, Any]:
        """Figures of the current or last run, a copy (the keys: docs/politeness.md, "How the batch scheduler works")."""
        with self._cond:
            stats = dict(self._stats)
            stats["per_host"] = {k: hq.dispatched for k, hq in self._hosts.items()}
            return stats

    def _key(self, url: str) -> str:
        try:
            return self._pacing_key(url)
        except Exception:  # noqa: BLE001 - InvalidURL and anything odd: advance() will report it
            return NO_REQUEST

    def _queue(self, key: str, url: str, now: float) -> _HostQueue:
        hq = self._hosts.get(key)
        if hq is None:
            limiter = None
            if key != NO_REQUEST:
                try:
                    limiter = self.client.host_limiter(url)
                except Exception:  # noqa: BLE001 - advance() will report it
                    return self._queue(NO_REQUEST, url, now)
            hq = self._hosts[key] = _HostQueue(key, url, now, limiter, draining=limiter is None)
        return hq

    def _append(self, hq: _HostQueue, job: Job, url: str, now: float) -> None:
        if not hq.jobs:
            hq.since = now
            self._active[hq.key] = hq
        hq.jobs.append((job, url))

    def _enqueue(self, job: Job, url: str, key: str, now: float) -> None:
        """A job with copies goes to the copy reached soonest (:mod:`.assign`). Caller holds the lock, or is ingesting."""
        placed = self._placement.place(job, url, self._key, lambda k: len(self._hosts[k].jobs) if k in self._hosts else 0, now)
        if placed is not None:
            key, url = placed
        hq = self._queue(key, url, now)
        if hq.robots is not None and self._disallowed(url):
            hq = self._queue(NO_REQUEST, url, now)
        self._append(hq, job, url, now)

    def _disallowed(self, url: str) -> bool:
        """Whether the transport will answer *url* with ``None`` at once (cached robots.txt)."""
        try:
            return not self.client.would_send(url)
        except Exception:  # noqa: BLE001 - odd URL: advance() will report it
            return False

    def _sort_by_robots(self, hq: _HostQueue, now: float) -> None:
        """Move the jobs a newly known robots.txt disallows to NO_REQUEST (no pacing gap to wait). Caller holds the lock."""
        rules = hq.limiter.robots if hq.limiter is not None else None
        if rules is hq.robots:
            return
        hq.robots = rules
        if rules is None or not hq.jobs:
            return
        keep: deque[tuple[Any, str]] = deque()
        free = None
        for job, url in hq.jobs:
            if self._disallowed(url):
                if free is None:
                    free = self._queue(NO_REQUEST, url, now)
                self._append(free, job, url, now)
            else:
                keep.append((job, url))
        if free is not None:
            hq.jobs = keep
            if not keep:
                self._active.pop(hq.key, None)

    def _ingest(self, jobs: Iterable[Any]) -> None:
        now = self._clock.monotonic()
        for job in jobs:
            url = job.url
            if url is None:
                self._stats["finished"] += 1
                self._call_on_finished(job)
                continue
            self._enqueue(job, url, self._key(url), now)
            self._pending += 1
        for hq in list(self._hosts.values()):  # robots.txt already known from earlier use of the client
            self._sort_by_robots(hq, now)

    def _due(self, hq: _HostQueue, now: float) -> bool:
        """Whether *hq* may be served now; if not, set when to look again. Caller holds the lock."""
        if hq.limiter is None:
            return True
        client = self.client
        hq.draining = False
        try:
            if client.breaker_ends_batch(hq.url, since=self._started_wall, max_host_wait_s=self.max_host_wait_s):
                hq.draining = True
                return True
            ready = client.ready_in(hq.url)
            if ready <= 0:
                hq.busy_polls = 0
                return True
            limiter = hq.limiter
            if ready == math.inf or client.hold_remaining(hq.url) > self.defer_limit_s:
                # the transport answers at once without sending: drain without the in-flight limit
                hq.draining = True
                return True
            if limiter.in_flight >= self._cap_of(hq):
                # busy with a request we did not dispatch: look again soon, then less and less often
                hq.busy_polls += 1
                ready = max(ready, BUSY_POLL_S * 2 ** min(hq.busy_polls - 1, 8))
            else:
                hq.busy_polls = 0
        except Exception:  # noqa: BLE001 - let advance() raise it where it can be attached to a job
            return True
        hq.not_before = now + min(ready, MAX_WAIT_S)
        return False

    def _cap_of(self, hq: _HostQueue) -> int:
        return self.client.in_flight_cap(hq.url) if hq.limiter is not None else self._cap

    def _pick(self, now: float) -> _HostQueue | None:
        """The due host with the longest queue (ties: waiting longest), or ``None``."""
        free = self._active.get(NO_REQUEST)
        if free is not None:
            return free
        candidates = [hq for hq in self._active.values()
                      if (hq.in_flight < self._cap_of(hq) or hq.draining) and hq.not_before <= now]
        best = min(candidates, key=_longest_first, default=None)
        if best is None or self._due(best, now):
            return best
        candidates.sort(key=_longest_first)  # the best was not due: the others in turn
        return next((hq for hq in candidates if hq is not best and self._due(hq, now)), None)

    def _next_wake(self, now: float) -> float:
        soonest = MAX_WAIT_S
        for hq in self._active.values():
            if hq.in_flight < self._cap_of(hq) or hq.draining:
                soonest = min(soonest, hq.not_before - now)
        return max(0.0, soonest)

    def _dispatch_loop(self) -> None:
        clock = self._clock
        with self._cond:
            while not self._stopping and self._pending > 0:
                if self.client.closed:  # the client left its ``with`` block
                    self._stopping = True
                    self._stop_event.set()
                    break
                now = clock.monotonic()
                if self._placement.due(now, self._stats["requests_started"] - self._in_flight):
                    self._revise(now)
                while self._idle > 0:
                    hq = self._pick(now)
                    if hq is None:
                        break
                    job, url = hq.jobs.popleft()
                    self._placement.take(job, url)  # a job with copies: this host's becomes its next request
                    if hq.jobs:
                        hq.since = now
                    else:
                        del self._active[hq.key]
                    hq.in_flight += 1
                    hq.dispatched += 1
                    self._in_flight += 1
                    self._idle -= 1
                    self._stats["requests_started"] += 1
                    self._work.put((job, hq, hq.draining))
                if self._idle > 0 and self._active:
                    timeout = self._next_wake(clock.monotonic())
                else:
                    timeout = MAX_WAIT_S  # woken by a worker reporting back
                if timeout <= 0:
                    continue
                self._stats["wakeups"] += 1
                if self._real_time:
                    self._cond.wait(timeout)
                elif self._in_flight > 0:
                    self._cond.wait(min(timeout, 0.05))  # fake clock: let the workers report back first
                else:
                    self._cond.release()
                    try:
                        clock.sleep(timeout)  # fake clock: nothing in flight, so time may jump
                    finally:
                        self._cond.acquire()

    def _revise(self, now: float) -> None:
        """Move queued jobs to copies whose hosts reach them sooner (:meth:`~paperfetch.http.assign.Placement.revise`)."""
        active = {k: hq for k, hq in self._active.items() if hq.limiter is not None}
        moved = self._placement.revise({k: hq.jobs for k, hq in active.items()}, {k: hq.url for k, hq in active.items()},
                                       now, self._stats["requests_started"] - self._in_flight)
        self._stats["moves"] += len(moved)
        for job, key, url in moved:
            self._append(self._queue(key, url, now), job, url, now)
        for key, hq in active.items():
            if not hq.jobs:
                self._active.pop(key, None)

    def _worker(self, generation: int, work: queue.SimpleQueue) -> None:
        idle = 0.0
        try:
            with stopping_with(self._stop_event):
                while True:
                    t0 = time.perf_counter()
                    item = work.get()
                    idle += time.perf_counter() - t0
                    if item is None:
                        return
                    try:
                        self._run_one(generation, *item)
                    except Exception as exc:  # noqa: BLE001 - the scheduler's own bookkeeping failed
                        self._abort(exc)  # never a worker lost and a batch waiting for it forever
        finally:
            with self._cond:
                if generation == self._generation:
                    self._stats["worker_idle_s"] += idle

    def _run_one(self, generation: int, job: Job, hq: _HostQueue, draining: bool = False) -> None:
        """Advance *job* by one request, then queue its next request or report it finished."""
        if self._stopping or generation != self._generation:
            self._release_unstarted(generation, hq)
            return
        error = self._advance(job, draining)
        cpu0 = time.thread_time()
        url, error = self._next_url(job, error)
        key = self._key(url) if url else None
        if self._report_back(generation, job, hq, url, key, error, cpu0):
            self._finish(generation, job)

    def _release_unstarted(self, generation: int, hq: _HostQueue) -> None:
        """Dispatched, but stop() came before this worker took it: no new request starts."""
        with self._cond:
            if generation == self._generation and not self._closed:
                hq.in_flight -= 1
                self._in_flight -= 1
                self._idle += 1
                self._cond.notify()

    @staticmethod
    def _advance(job: Job, draining: bool) -> BaseException | None:
        """Run *job*'s next request; its failure is returned, never raised (a job's failure never kills a worker)."""
        try:
            if draining:
                with answer_now():  # the host is held or its breaker open: the transport answers at once
                    job.advance()
            else:
                job.advance()
        except BaseException as exc:  # noqa: BLE001
            return exc
        return None

    def _next_url(self, job: Job, error: BaseException | None) -> tuple[str | None, BaseException | None]:
        """(*job*'s next URL, the error it ended with): no URL for a failed job, ``""`` for one cut short by the
        stop (not re-queued, not finished). Ctrl-C or SystemExit from a job stops the batch."""
        url = None
        if error is None:
            try:
                url = job.url
            except Exception as exc:  # noqa: BLE001
                error = exc
        if error is not None and not isinstance(error, (Exception, Stopped)) and not self._stopping:
            self._abort(error)  # Ctrl-C, SystemExit (a subscriber's too): the batch stops, run() raises it
        if isinstance(error, Stopped) or (error is not None and not isinstance(error, Exception)):
            # cut short by the stop: the job is not finished (no outcome for it), it keeps its url
            kept = job.url
            return ("" if kept is None else kept), None
        if error is not None:
            self._attach(job, error)
            return None, error
        return url, None

    def _report_back(
        self, generation: int, job: Job, hq: _HostQueue, url: str | None, key: str | None,
        error: BaseException | None, cpu0: float,
    ) -> bool:
        """Free *hq*'s slot and queue *job*'s next request at *url*; whether the job is finished."""
        with self._cond:
            if generation != self._generation or self._closed:
                return False  # run() has returned: the job is left as it is (its url tells whether it finished)
            hq.in_flight -= 1
            hq.not_before = 0.0
            self._in_flight -= 1
            try:
                if hq.limiter is not None and hq.limiter.robots is not hq.robots:
                    self._sort_by_robots(hq, self._clock.monotonic())
                if url and not self._stopping:
                    self._enqueue(job, url, key or NO_REQUEST, self._clock.monotonic())
            except Exception as exc:  # noqa: BLE001 - e.g. the host-state store failed: the job's row says so
                self._attach(job, exc)
                error, url = exc, None
            self._decide_again(hq, self._clock.monotonic())
            if error is not None:
                self._stats["errors"] += 1
            finished = url is None
            if not finished:
                self._idle += 1
            self._stats["scheduling_cpu_s"] += time.thread_time() - cpu0
            self._cond.notify()
        return finished

    def _decide_again(self, hq: _HostQueue, now: float) -> None:
        """*hq*'s host is held (a 503 or 429 with Retry-After, just reported) or its breaker open: its queued jobs
        decide their next request again, and those whose next request is now on another host go to its queue (a
        draining queue's jobs are answered at once anyway). Caller holds the lock."""
        client = self.client
        try:
            if self._stopping or hq.draining or not hq.jobs or hq.limiter is None \
                    or client.closed_for(hq.url) <= 0:
                return
        except Exception:  # noqa: BLE001 - a transport that cannot say holds nothing
            return
        kept: deque[tuple[Any, str]] = deque()
        moved = []
        for job, url in hq.jobs:
            try:
                if isinstance(job, _DecidesAgain):
                    job.decide_again()
                new = job.url
            except Exception:  # noqa: BLE001 - its advance() will report it
                new = None
            if new and self._key(new) != hq.key:
                moved.append((job, new))
            else:
                kept.append((job, url))
        hq.jobs = kept
        if not kept:
            self._active.pop(hq.key, None)
        for job, url in moved:
            self._enqueue(job, url, self._key(url), now)

    def _finish(self, generation: int, job: Job) -> None:
        self._call_on_finished(job)
        with self._cond:
            if generation != self._generation:
                return
            self._stats["finished"] += 1
            self._pending -= 1
            self._idle += 1
            self._cond.notify()

    def _abort(self, error: BaseException) -> None:
        """Stop the batch because of *error*, which ``run`` raises once every worker has ended."""
        logger.error("batch stopped: %s: %s", type(error).__name__, error)
        with self._cond:
            self._callback_error = self._callback_error or error
        self.stop()

    def _attach(self, job: Job, error: BaseException) -> None:
        try:
            job.error = error
            logger.debug("job %r failed: %s: %s", job, type(error).__name__, error)
        except Exception:  # a job without a settable ``error`` (logged with its traceback)
            logger.warning("job %r failed (not attachable): %s: %s", job, type(error).__name__, error, exc_info=error)

    def _call_on_finished(self, job: Job) -> None:
        """An exception from ``on_finished`` stops the batch; ``run`` raises it once every worker has ended."""
        if self.on_finished is None:
            return
        try:
            self.on_finished(job)
        except BaseException as exc:  # noqa: BLE001
            logger.error("on_finished failed for %r; stopping the batch", job)
            self._abort(exc)

    def _shutdown(self) -> None:
        """Wait for every worker: nothing of this batch outlives ``run``. A second Ctrl-C abandons them."""
        for _ in self._threads:
            self._work.put(None)
        try:
            for thread in self._threads:
                thread.join()
        finally:
            with self._cond:
                self._closed = True
