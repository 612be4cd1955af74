"""Every default of the transport and the scheduler, named once.

:class:`~paperfetch.HttpClient`, :class:`~paperfetch.Retriever`, the scheduler and
the CLI take their defaults from here, so a number means the same thing wherever
it appears.
"""

from __future__ import annotations

__all__ = [
    "BACKOFF_BASE_S", "BACKOFF_DECAY_S", "BACKOFF_MAX_S", "BACKOFF_MULTIPLIER", "BREAKER_FAILURES", "CLOSE_WAIT_S",
    "DEFAULT_HOST_INTERVALS", "DEFAULT_RETRY_AFTER_S", "DOWNLOAD_CHUNK_BYTES", "DOWNLOAD_VALIDATE_BYTES",
    "FILENAME_TEMPLATE", "LEARN_DECAY_FRACTION", "LEARN_DECAY_SUCCESSES", "LEARN_MAX_S", "LEDGER_BUSY_TIMEOUT_S",
    "LEDGER_NAME", "LOCK_TIMEOUT_S", "MAX_ANSWER_BYTES", "MAX_CANDIDATE_URL_CHARS", "MAX_CRAWL_DELAY_S", "MAX_HOLD_S",
    "MAX_HOST_WAIT_S", "MAX_IN_FLIGHT_PER_HOST", "MAX_LANDING_BYTES", "MAX_PDF_BYTES", "MAX_REDIRECTS", "MAX_RETRIES",
    "MAX_RETRY_AFTER_S", "MIN_RATE_BYTES_S", "MIN_RATE_WINDOW_S", "NETWORK_RETRY_BASE_S", "OUT_DIR", "PACING_MARGIN_S",
    "PDF_SNIFF_BYTES", "RATE_LIMIT_MAX_S", "RATE_LIMIT_MIN_S", "REDIS_NAMESPACE", "REDIS_SOCKET_TIMEOUT_S",
    "REQUEST_DEADLINE_S", "ROBOTS_CACHE_TTL_S", "ROBOTS_DEADLINE_S", "ROBOTS_UNREACHABLE_TTL_S", "SEARCH_CACHE_TTL_S",
    "STATE", "SUPPRESSION_EXEMPT", "SUPPRESS_403_TTL_S", "TIMEOUT", "UNREACHABLE_RETRY_BASE_S",
]

#: Retries after the first attempt (PyPaperRetriever's ``max_retries``).
MAX_RETRIES = 3
#: The wait a header-less 429 costs (PyPaperRetriever's ``default_retry_after_s``).
DEFAULT_RETRY_AFTER_S = 60.0
#: The longest server wait (or hold) one call waits out; a longer one ends the call at once
#: (PyPaperRetriever's HttpClient default; the Retriever used 60 before: one value now).
MAX_RETRY_AFTER_S = 300.0
BACKOFF_BASE_S = 1.0
BACKOFF_MULTIPLIER = 2.0
BACKOFF_MAX_S = 300.0
BACKOFF_DECAY_S = 1.0
#: The fallback delay range for a host whose robots.txt is respected and names no Crawl-delay.
RATE_LIMIT_MIN_S = 1.0
RATE_LIMIT_MAX_S = 3.0
MAX_CRAWL_DELAY_S = 60.0
TIMEOUT = (10.0, 60.0)
#: Per-host minimum intervals every client applies unless told otherwise (seconds).
#: arXiv asks for no more than one request every three seconds.
DEFAULT_HOST_INTERVALS = {"export.arxiv.org": 3.0, "arxiv.org": 3.0}

#: Consecutive failures (429, 5xx, timeouts, connection errors) that open a host's breaker.
BREAKER_FAILURES = 3
#: The longest a batch waits for one host's breaker to let a probe through; past it the host's
#: remaining items end at once.
MAX_HOST_WAIT_S = 120.0
#: The first wait before asking again a host that could not be reached at all (DNS failure, refused
#: connection: it fails in milliseconds); the waits double, and after BREAKER_FAILURES its breaker opens.
UNREACHABLE_RETRY_BASE_S = 0.1
#: The learned interval never grows past this.
LEARN_MAX_S = 60.0
#: After this many successes in a row the learned interval comes down ...
LEARN_DECAY_SUCCESSES = 10
#: ... by this fraction.
LEARN_DECAY_FRACTION = 0.1

#: Requests in flight at once to one host.
MAX_IN_FLIGHT_PER_HOST = 1
#: Redirect hops one request follows.
MAX_REDIRECTS = 10
#: Total seconds one request may take: connect, head and every read, however the bytes trickle.
REQUEST_DEADLINE_S = 300.0
#: A body slower than MIN_RATE_BYTES_S over MIN_RATE_WINDOW_S seconds ends early (curl's --speed-limit and
#: --speed-time): a server trickling a PDF does not hold its host for the whole request deadline.
MIN_RATE_BYTES_S = 1024.0
MIN_RATE_WINDOW_S = 30.0
#: Total seconds a robots.txt request may take: it blocks its host's whole queue, so it gets less than a
#: request's deadline; past it the file is "unreachable" (for ROBOTS_UNREACHABLE_TTL_S).
ROBOTS_DEADLINE_S = 15.0
#: Decoded bytes of a (non-streamed) answer read at most: a gzip bomb stops here.
MAX_ANSWER_BYTES = 32 * 1024 * 1024
#: How long a plain 403 suppresses its host (None: for the process's life).
SUPPRESS_403_TTL_S: float | None = 3600.0
#: Hosts a 403 never suppresses (resolvers: their 403 is the publisher's).
SUPPRESSION_EXEMPT = ("doi.org", "dx.doi.org")
#: How long a fetched robots.txt is used (RFC 9309 §2.4: at most 24 hours).
ROBOTS_CACHE_TTL_S = 86400.0
#: How long an unreachable robots.txt is taken as unreachable before it is asked again.
ROBOTS_UNREACHABLE_TTL_S = 300.0
#: The first wait before retrying a timeout or connection error (the schedule grows it).
NETWORK_RETRY_BASE_S = 1.0
#: Added to every non-zero gap: the server sees our requests through a network whose latency varies,
#: so a gap exactly at the floor on our side can arrive below it.
PACING_MARGIN_S = 0.002

# ---------------------------------------------------------------------------- the ledger, the Retriever's files

#: The host-state store when nothing names one: the SQLite file in the user cache directory (paperfetch.state).
STATE = "sqlite"
#: A Retriever (and the CLI) reads robots.txt before fetching web pages; a bare HttpClient does only when asked.
RESPECT_ROBOTS_TXT = True
#: The output folder when none is given (the Retriever, the CLI, the settings).
OUT_DIR = "PDFs"
#: The saved PDF's file name: ``{type}`` and ``{value}`` of the identifier (paperfetch.ids.filename_for).
FILENAME_TEMPLATE = "{type}_{value}"
#: The largest PDF the Retriever saves (decoded bytes).
MAX_PDF_BYTES = 200 * 1024 * 1024
#: How much of a body is written per chunk while it streams to its part file.
DOWNLOAD_CHUNK_BYTES = 64 * 1024
#: How much of a body ``stream_to_file`` hands to its validator when the caller names no size.
DOWNLOAD_VALIDATE_BYTES = 2048
#: How much of a candidate's body an item keeps to judge it: enough to find citation_pdf_url in an
#: HTML page served as a PDF.
PDF_SNIFF_BYTES = 256 * 1024
#: Landing pages larger than this are not read.
MAX_LANDING_BYTES = 5 * 1024 * 1024
#: How long a SQLite file (host state, metadata cache, ledger) locked by another process is waited for
#: before the run falls back (host state in memory, no cache, the ledger in memory): never a silent stall.
#: ``PAPERFETCH_LOCK_TIMEOUT_S`` overrides it (paperfetch.config.lock_timeout_s).
LOCK_TIMEOUT_S = 10.0
#: How long a SQLite ledger write waits for another process's transaction (the lock timeout).
LEDGER_BUSY_TIMEOUT_S = LOCK_TIMEOUT_S
#: The longest hold (Retry-After, a held host) a store keeps; a stored one further ahead is a wall clock that
#: moved (or a corrupt record) and is clamped to this.
MAX_HOLD_S = 7 * 24 * 3600.0
#: The name that separates the ledgers of different batches in one Redis.
LEDGER_NAME = "default"
#: The prefix of every key paperfetch writes in Redis.
REDIS_NAMESPACE = "paperfetch:"
#: How long a Redis call waits before the store counts as not answering.
REDIS_SOCKET_TIMEOUT_S = 5.0


# ---------------------------------------------------------------------------- the item path, the research calls

#: How long ``Retriever.close()`` from another thread waits for the stopped batch to write its rows
#: (a request on the wire ends within its deadline) before it closes the metadata cache anyway.
CLOSE_WAIT_S = 30.0
#: How long a PubMed search answer (the PMIDs of a query, and its history-server pages) is reused from the
#: metadata cache: shorter than a work's metadata, since new papers match a query every day.
SEARCH_CACHE_TTL_S = 6 * 3600.0

#: A candidate URL longer than this is refused before any request (a row says so): servers stop near 8-64 kB.
MAX_CANDIDATE_URL_CHARS = 16_384
