"""Batches: many jobs over many hosts, each host polite, the hosts served side by side.

Politeness limits how fast we may ask *one* host, not how many hosts we ask at
once. A plain loop sleeps through every host's delay in turn, so a batch takes
the *sum* over hosts; :class:`HostScheduler` serves the hosts concurrently, so a
batch takes about as long as its *busiest* host needs. The pacing itself stays
the transport's (:class:`~paperfetch.http.client.HttpClient`): the scheduler only
decides *which* job to hand to a worker *when*, from ``client.ready_in(url)``.

How it works
------------

* Every job sits in one FIFO queue per host (:func:`~paperfetch.http.hosts.host_key`
  of ``job.url``).
* The thread that calls :meth:`HostScheduler.run` is the *dispatcher*; a pool of
  worker threads makes the requests (``job.advance()``). The dispatcher hands a
  job to an idle worker only when its host is **due**: fewer than
  ``client.in_flight_cap(url)`` of that host's jobs are in flight as
  dispatched by this scheduler, and ``client.ready_in(url) == 0``.
* A host whose ``ready_in`` is ``inf`` (suppressed after a 403), or that is held
  (Retry-After) for longer than ``defer_limit_s``, is *also* due: the transport
  answers such requests at once with a synthetic response, without sending
  anything, so those jobs drain in microseconds (and without the in-flight limit).
  A shorter hold, the pacing gap and backoff defer only that host's queue. (The
  test is on the hold itself, ``client.hold_remaining(url)``, not on
  ``ready_in > defer_limit_s``: a pacing gap or backoff longer than the limit is
  always waited out by the transport, so such a host is deferred, not served.)
* Once a host's robots.txt is known (after its first request), its queued jobs whose
  URL it disallows move to the :data:`NO_REQUEST` queue, served at once: ``get``
  answers them with ``None`` without sending anything, so they should not wait for
  a pacing gap they do not use. URLs without a host go there too (``advance``
  raises, and the error is attached to the job).
* Among due hosts the longest queue goes first (ties: the host waiting longest).
  When no host is due, the dispatcher waits on a condition variable until the
  earliest host is (at most :data:`MAX_WAIT_S`) or a worker reports back — it
  never spins. A host the transport reports busy for a reason the scheduler did
  not cause (a redirect hop of another job, another thread) is polled, first after
  :data:`BUSY_POLL_S`, then less and less often.
* After ``advance()`` a job whose ``url`` is not ``None`` goes to the back of the
  queue of the host of its new URL; otherwise ``on_finished(job)`` is called.

What the scheduler cannot see
-----------------------------

One ``advance()`` may block inside the transport: the first request to a host
with ``respect_robots_txt`` fetches robots.txt and then waits its Crawl-delay; a
429/503 the call may wait out (Retry-After ≤ ``max_retry_after_s``, backoff) is
slept through and retried; a redirect is followed to another host and paced
there. The transport keeps all of those polite (its own per-host limiter is
shared by every thread, and paces from the previous response); they only keep
that one worker busy, and the job's first host counts as in flight meanwhile.
In the same way, :meth:`HostScheduler.stop` cannot interrupt an ``advance`` that
is already sleeping inside the transport.

Threads
-------

``advance()`` runs in worker threads, one job at a time per job (a job is never
advanced twice concurrently), up to ``workers`` jobs at once overall. Jobs must
therefore not share mutable state without their own locking. ``on_finished`` is
called in the worker thread that finished the job (or, for jobs that arrive
already finished, in the thread calling ``run``), concurrently with other
workers: make it thread-safe (appending to a list or putting on a
:class:`queue.Queue` is). It is never called after :meth:`HostScheduler.run`
has returned. An exception from it, and a ``BaseException`` that is not an ``Exception`` out of
``advance`` (a ``KeyboardInterrupt`` raised in an event subscriber), stops the batch: ``run`` raises
it once every worker has ended. Any other failure, the scheduler's own bookkeeping included, is the job's.

Memory
------

``run`` consumes the iterable of jobs up front (it needs every job's host to
pick the longest queue and to size the pool); the scheduler keeps one
``(job, url)`` pair per job in its host's :class:`collections.deque` and nothing
else per job (about 100 bytes), so a batch of ~100k jobs costs some 10 MB on top
of the jobs themselves. For larger batches, feed chunks to successive ``run``
calls. What the jobs keep is theirs: :func:`paperfetch.batch.get_many` keeps every response, about
8 KB of Python objects each (14 KB of RSS measured with the transport's
connection-pool churn over more than 64 hosts).
"""

from __future__ import annotations

import logging
import math
import queue
import threading
import time
from collections import deque
from typing import Any, Callable, Iterable, Protocol, runtime_checkable

from paperfetch.clock import Clock, SystemClock
from paperfetch.errors import Stopped
from paperfetch.http.assign import Placement
from paperfetch.http.context import answer_now, answering_now, stop_event, stopping_with
from paperfetch.http.hosts import HostLimiter, host_key

__all__ = [
    "BUSY_POLL_S", "HostScheduler", "Job", "MAX_WAIT_S", "NO_REQUEST", "Transport", "answer_now", "answering_now",
    "default_workers", "stop_event",
]

logger = logging.getLogger(__name__)

#: The longest the dispatcher waits before looking again, even when no host is due
#: (so a released hold or another client's activity is noticed within this time).
MAX_WAIT_S = 0.25
#: How soon a host the *transport* reports busy (a request this scheduler did not
#: dispatch is in flight there: another job's redirect hop, another thread) is looked at
#: again; the wait doubles while it stays busy, up to MAX_WAIT_S.
BUSY_POLL_S = 0.002
#: The queue of jobs whose next ``advance`` sends nothing: a URL without a host (``advance``
#: will raise) or one the host's cached robots.txt disallows (``get`` returns ``None`` at once).
#: Always due, no in-flight limit; shown as this key in ``stats["per_host"]``.
NO_REQUEST = "(no request)"


@runtime_checkable
class Job(Protocol):
    """One unit of work that makes requests one at a time.

    ``url`` is the URL of the next request the job needs (``None`` when the job is
    finished); ``advance()`` makes that request (blocking, through the
    :class:`~paperfetch.http.client.HttpClient`) and updates the job's state and
    ``url``. A job may set ``error`` (the scheduler sets it when ``advance`` raises).
    """

    @property
    def url(self) -> str | None: ...

    def advance(self) -> None: ...


class Transport(Protocol):
    """What the scheduler asks the transport (:class:`~paperfetch.http.client.HttpClient` is one):
    would it send this URL (``would_send``: not disallowed by a cached robots.txt), how long may one
    call wait (``call_allowance``), does the host's open breaker end the batch's items for it at once
    (``breaker_ends_batch``), how soon is the host ready (``ready_in``: 0 now, ``inf`` suppressed),
    how long is it held (``hold_remaining``). The answers are the transport's policy
    (:mod:`paperfetch.http.policy`); the scheduler re-derives none of them, it only decides which job
    goes when. ``host_limiter`` gives the host's record, of which it reads the in-flight count and
    whether robots.txt changed."""

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
    def in_flight_cap(self, url: str) -> int: ...
    def call_allowance(self) -> float: ...
    def would_send(self, url: str) -> bool: ...
    def breaker_ends_batch(self, url: str, *, since: float | None, max_host_wait_s: float) -> bool: ...


def default_workers(distinct_hosts: int) -> int:
    """``min(32, 4 × hosts)``, at least 1 (hosts: distinct hosts of the jobs' first URLs).

    At most ``max_in_flight_per_host`` jobs per host are dispatched at once, so about
    one worker per host is busy at a time; the headroom is for jobs that move on to
    hosts not known up front (a resolver sending them to publishers), for queues that
    drain without requests (held, suppressed, disallowed) and for ``on_finished``.
    Idle workers cost a blocked thread each and no CPU. The cap of 32 reflects that
    one Python process spends ~1.3 ms of CPU per request under the GIL: more threads
    would not make more requests per second.
    """
    return max(1, min(32, 4 * distinct_hosts))


class _HostQueue:
    __slots__ = (
        "key", "url", "jobs", "in_flight", "not_before", "since", "dispatched", "limiter", "robots", "draining", "busy_polls",
    )

    def __init__(self, key: str, url: str, now: float, limiter: Any = None) -> None:
        self.key = key
        self.url = url            # any URL on this host, for ready_in()
        self.jobs: deque = deque()  # (job, url) in arrival order
        self.limiter = limiter    # the transport's HostLimiter (None for NO_REQUEST)
        self.robots: Any = None   # the RobotsRules the queue was last sorted against
        self.draining = limiter is None  # answered without a request: no in-flight limit
        self.busy_polls = 0       # consecutive looks that found the transport busy with others' requests
        self.in_flight = 0        # jobs of this host dispatched by this scheduler, not yet back
        self.not_before = 0.0     # scheduler clock: not worth asking ready_in() before this
        self.since = now          # when the head of the queue started waiting (tie-break)
        self.dispatched = 0


class HostScheduler:
    """Runs jobs over many hosts at once, each host no faster than the transport allows.

    :param client: the polite transport whose ``ready_in`` and per-host limits are obeyed.
    :param workers: worker threads; default :func:`default_workers` of the number of
        distinct hosts in the batch.
    :param defer_limit_s: a host held (Retry-After) for longer than this is served at
        once (the transport answers with a synthetic "held" response without sending
        anything); a shorter hold defers the host's queue. Default: what one call may
        wait out, ``min(client.max_retry_after_s, client.max_elapsed)``. A smaller value
        makes workers sleep through holds inside ``advance``.
    :param on_finished: called with each job when its ``url`` becomes ``None`` (or its
        ``advance`` raised); see the module documentation for the threading rules.
    :param clock: the clock ``ready_in`` is measured on; default the client's. With a
        clock that is not the system clock (a :class:`~paperfetch.clock.FakeClock`),
        waiting for a host is done with ``clock.sleep`` rather than in real time.
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
        self._cond = threading.Condition()
        self._running = False
        self._stopping = False
        self._closed = True
        self._generation = 0  # which run workers and their results belong to
        self._started_wall = 0.0
        self._hosts: dict[str, _HostQueue] = {}
        self._active: dict[str, _HostQueue] = {}   # hosts with queued jobs
        self._pending = 0     # jobs not yet finished: queued, in flight, or in on_finished
        self._in_flight = 0
        self._idle = 0
        self._work: queue.SimpleQueue = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._stop_event = threading.Event()
        self._callback_error: BaseException | None = None
        self._reset_stats()

    # ------------------------------------------------------------------ public API
    def run(self, jobs: Iterable[Any]) -> None:
        """Advance every job until its ``url`` is ``None``; return then, or soon after :meth:`stop`.

        ``KeyboardInterrupt`` here stops the batch (every worker is waited for: their transport waits
        end at once, a request already on the wire within its timeout) and is re-raised.
        """
        with self._cond:
            if self._running:
                raise RuntimeError("this HostScheduler is already running a batch")
            self._running = True
            self._stopping = False
            self._stop_event = threading.Event()
            self._callback_error = None
            self._closed = False
            self._generation += 1
            generation = self._generation
            self._started_wall = self._clock.time()
            self._placement = Placement(self.client, since=self._started_wall, max_host_wait_s=self.max_host_wait_s)
            self._hosts = {}
            self._active = {}
            self._pending = self._in_flight = self._idle = 0
            self._work = queue.SimpleQueue()
            self._threads = []
            self._reset_stats()
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
        """Stop the batch in progress: no new job is dispatched; ``run`` returns promptly.

        Every wait inside the transport of this batch's workers (pacing, retry waits, holds) ends
        at once and no further request is sent (:class:`~paperfetch.errors.Stopped` is raised in
        the worker); a request already on the wire is let finish. ``run`` returns once every worker
        has ended. Unfinished jobs keep their ``url``. Safe to call from any thread, and more than once.
        """
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
        """Figures of the current or last run (a copy).

        ``requests_started``: ``advance()`` calls dispatched; ``per_host``: the same per
        host; ``wire_requests``: requests the client actually sent meanwhile (robots.txt,
        retries and redirect hops included; other users of the client too);
        ``finished``/``errors``/``unfinished``: jobs; ``workers``; ``worker_idle_s``: the
        workers' summed time waiting for a job; ``scheduling_cpu_s``: CPU time spent in
        scheduling (reading the jobs, picking hosts, ``ready_in``, re-queueing), not in
        ``advance``; ``wakeups``: dispatcher wake-ups; ``wall_s``: duration of ``run``; ``moves``: queued
        jobs moved to another of their copies' hosts (:mod:`paperfetch.http.assign`).
        """
        with self._cond:
            stats = dict(self._stats)
            stats["per_host"] = {k: hq.dispatched for k, hq in self._hosts.items()}
            return stats

    # ------------------------------------------------------------------ internals
    def _reset_stats(self) -> None:
        self._stats: dict[str, Any] = {
            "requests_started": 0, "finished": 0, "errors": 0, "unfinished": 0, "workers": 0,
            "worker_idle_s": 0.0, "scheduling_cpu_s": 0.0, "wakeups": 0, "wall_s": 0.0, "wire_requests": 0, "moves": 0,
        }

    def _key(self, url: str) -> str:
        try:
            return host_key(url)
        except Exception:  # noqa: BLE001 - InvalidURL and anything odd: advance() will report it
            return NO_REQUEST

    def _queue(self, key: str, url: str, now: float) -> _HostQueue:
        hq = self._hosts.get(key)
        if hq is None:
            limiter = None
            if key != NO_REQUEST:
                try:
                    limiter = self.client.host_limiter(url)
                except Exception:  # noqa: BLE001
                    key = NO_REQUEST
                    return self._queue(key, url, now)
            hq = self._hosts[key] = _HostQueue(key, url, now, limiter)
        return hq

    def _append(self, hq: _HostQueue, job: Any, url: str, now: float) -> None:
        if not hq.jobs:
            hq.since = now
            self._active[hq.key] = hq
        hq.jobs.append((job, url))

    def _enqueue(self, job: Any, url: str, key: str, now: float) -> None:
        """Caller holds the lock (or is the only thread, during ingest). A job with copies goes to the
        copy whose host reaches it soonest (:mod:`paperfetch.http.assign`)."""
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
        """When the host's robots.txt became known, move its disallowed jobs to NO_REQUEST.

        Otherwise each would wait for a pacing gap it does not use. Caller holds the lock.
        """
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
            if self._breaker_blocks(hq):
                hq.draining = True
                return True
            ready = client.ready_in(hq.url)
            if ready <= 0:
                hq.busy_polls = 0
                return True
            limiter = hq.limiter
            if ready == math.inf or client.hold_remaining(hq.url) > self.defer_limit_s:
                # suppressed, or held longer than a call waits: the transport answers at once
                # with a synthetic response, so the queue drains without the in-flight limit
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

    def _breaker_blocks(self, hq: _HostQueue) -> bool:
        """Whether *hq*'s breaker is open past what the batch waits for this host (its items end at once).

        The transport answers (:func:`paperfetch.http.policy.breaker_ends_batch`): an open breaker
        defers the host's queue (``ready_in`` counts it) while the next probe falls within
        ``max_host_wait_s`` of when the host began failing, or this batch began, if later; a host
        that could not be reached at all is not waited for. Caller holds the lock."""
        return self.client.breaker_ends_batch(hq.url, since=self._started_wall, max_host_wait_s=self.max_host_wait_s)

    def _cap_of(self, hq: _HostQueue) -> int:
        """The host's in-flight cap (the transport's :func:`~paperfetch.http.policy.in_flight_cap`)."""
        return self.client.in_flight_cap(hq.url) if hq.limiter is not None else self._cap

    def _pick(self, now: float) -> _HostQueue | None:
        """The due host with the longest queue (ties: waiting longest), or ``None``."""
        free = self._active.get(NO_REQUEST)
        if free is not None:
            return free
        best = None
        for hq in self._active.values():
            if (hq.in_flight >= self._cap_of(hq) and not hq.draining) or hq.not_before > now:
                continue
            if best is None or len(hq.jobs) > len(best.jobs) or (len(hq.jobs) == len(best.jobs) and hq.since < best.since):
                best = hq
        if best is None or self._due(best, now):
            return best
        # the favourite is not due: try the others in order of preference
        others = [
            hq for hq in self._active.values()
            if (hq.in_flight < self._cap_of(hq) or hq.draining) and hq.not_before <= now and hq is not best
        ]
        others.sort(key=lambda h: (-len(h.jobs), h.since))
        for hq in others:
            if self._due(hq, now):
                return hq
        return None

    def _next_wake(self, now: float) -> float:
        """Seconds until some queued host may be due (capped at MAX_WAIT_S)."""
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

    def _run_one(self, generation: int, job: Any, hq: _HostQueue, draining: bool = False) -> None:
        if self._stopping or generation != self._generation:
            # dispatched, but stop() came before this worker took it: no new request starts
            with self._cond:
                if generation == self._generation and not self._closed:
                    hq.in_flight -= 1
                    self._in_flight -= 1
                    self._idle += 1
                    self._cond.notify()
            return
        error: BaseException | None = None
        try:
            if draining:
                with answer_now():  # the host is held or its breaker open: the transport answers at once
                    job.advance()
            else:
                job.advance()
        except BaseException as exc:  # noqa: BLE001 - a job's failure never kills a worker
            error = exc
        cpu0 = time.thread_time()
        url = None
        key = None
        if error is None:
            try:
                url = job.url
            except Exception as exc:  # noqa: BLE001
                error = exc
        if error is not None and not isinstance(error, (Exception, Stopped)) and not self._stopping:
            self._abort(error)  # Ctrl-C, SystemExit (a subscriber's too): the batch stops, run() raises it
        if isinstance(error, Stopped) or (error is not None and not isinstance(error, Exception)):
            # cut short by the stop: the job is not finished (no outcome for it), it keeps its url
            error = None
            url = url if url is not None else getattr(job, "url", None)
            if url is None:
                url = ""  # not re-queued (stopping); not reported as finished
        if error is not None:
            self._attach(job, error)
            url = None
        elif url:
            key = self._key(url)
        finish = False
        with self._cond:
            if generation != self._generation or self._closed:
                return  # run() has returned: the job is left as it is (its url tells whether it finished)
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
            if error is not None:
                self._stats["errors"] += 1
            if url is None:
                finish = True
            # otherwise re-queued above, or (stopping) left pending, reported in "unfinished"
            if not finish:
                self._idle += 1
            self._stats["scheduling_cpu_s"] += time.thread_time() - cpu0
            self._cond.notify()
            if not finish:
                return
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

    def _attach(self, job: Any, error: BaseException) -> None:
        try:
            job.error = error
            logger.debug("job %r failed: %s: %s", job, type(error).__name__, error)
        except Exception:  # a job without a settable ``error`` (logged with its traceback)
            logger.warning("job %r failed (not attachable): %s: %s", job, type(error).__name__, error, exc_info=error)

    def _call_on_finished(self, job: Any) -> None:
        """An exception from ``on_finished`` stops the batch; ``run`` raises it once every worker has ended."""
        if self.on_finished is None:
            return
        try:
            self.on_finished(job)
        except BaseException as exc:  # noqa: BLE001
            logger.error("on_finished failed for %r; stopping the batch", job)
            self._abort(exc)

    def _shutdown(self) -> None:
        """Release the workers and wait for every one of them: nothing of this batch outlives ``run``.

        After a stop their transport waits end at once; a request already on the wire ends within
        the client's timeout. A second Ctrl-C while waiting abandons them (``run`` re-raises it)."""
        for _ in self._threads:
            self._work.put(None)
        try:
            for thread in self._threads:
                thread.join()
        finally:
            with self._cond:
                self._closed = True
