"""Every default of paperfetch, named once, so a number means the same thing wherever it appears."""

from __future__ import annotations

__all__ = [
    "ARXIV_INTERVAL_S", "BACKOFF_BASE_S", "BACKOFF_DECAY_S", "BACKOFF_MAX_S", "BACKOFF_MULTIPLIER", "BREAKER_FAILURES",
    "CACHE_ANSWER_TTL_S", "CACHE_NOT_FOUND_TTL_S", "CLOSE_WAIT_S", "DASHBOARD_MAX_ROWS",
    "DEFAULT_RETRY_AFTER_S", "DOWNLOAD_CHUNK_BYTES", "DOWNLOAD_VALIDATE_BYTES", "FILENAME_TEMPLATE", "HOST_LEASE_S",
    "LEARN_DECAY_FRACTION", "LEARN_DECAY_SUCCESSES", "LEARN_MAX_S", "LEARN_WAIT_FACTOR", "LEDGER_NAME",
    "LOCK_TIMEOUT_S", "MAX_ANSWER_BYTES", "MAX_CANDIDATE_URL_CHARS", "MAX_CRAWL_DELAY_S",
    "MAX_HOLD_S", "MAX_HOST_WAIT_S", "MAX_IN_FLIGHT_PER_HOST", "MAX_LANDING_BYTES", "MAX_PDF_BYTES", "MAX_REDIRECTS",
    "MAX_RETRIES", "MAX_RETRY_AFTER_S", "MAX_ROBOTS_BYTES", "MAX_XML_BYTES", "MIN_RATE_BYTES_S", "MIN_RATE_WINDOW_S",
    "NETWORK_RETRY_BASE_S", "OUT_DIR", "PACING_MARGIN_S", "PDF_SNIFF_BYTES", "RATE_LIMIT_MAX_S", "RATE_LIMIT_MIN_S",
    "RECHECK_AFTER_S", "REDIS_NAMESPACE", "REDIS_RETRY_AFTER_S", "REDIS_SOCKET_TIMEOUT_S", "REQUEST_DEADLINE_S",
    "ROBOTS_CACHE_TTL_S",
    "ROBOTS_DEADLINE_S", "ROBOTS_REDIRECTS", "ROBOTS_UNREACHABLE_TTL_S", "SEARCH_CACHE_TTL_S", "SEARCH_MAX_RESULTS",
    "STATE", "SUPPRESSION_EXEMPT", "SUPPRESS_403_TTL_S", "TIMEOUT", "UNREACHABLE_RETRY_BASE_S",
]

# the transport's retries, waits and pacing (docs/politeness.md, "The behaviours, their defaults and why")
#: Retries after the first attempt (PyPaperRetriever's ``max_retries``).
MAX_RETRIES = 3
#: The wait a header-less 429 costs (PyPaperRetriever's ``default_retry_after_s``).
DEFAULT_RETRY_AFTER_S = 60.0
#: The longest server wait one call waits out; a longer one ends the call (PyPaperRetriever's value).
MAX_RETRY_AFTER_S = 300.0
#: Backoff after a 429/5xx: first delay, growth, cap, decay per success (PyPaperRetriever's values).
BACKOFF_BASE_S = 1.0
BACKOFF_MULTIPLIER = 2.0
BACKOFF_MAX_S = 300.0
BACKOFF_DECAY_S = 1.0
#: The fallback delay range for a host whose robots.txt names no Crawl-delay (PyPaperRetriever's).
RATE_LIMIT_MIN_S = 1.0
RATE_LIMIT_MAX_S = 3.0
#: The Crawl-delay cap: one hostile robots.txt cannot stall a batch.
MAX_CRAWL_DELAY_S = 60.0
#: Per-request (connect, read) timeout, seconds.
TIMEOUT = (10.0, 60.0)
#: arXiv asks for no more than one request every three seconds (every client keeps it for arXiv's hosts).
ARXIV_INTERVAL_S = 3.0

#: Consecutive failures (429, 5xx, timeouts, connection errors) that open a host's breaker.
BREAKER_FAILURES = 3
#: The longest a batch waits for a host's breaker to let a probe through; past it the host's items end.
MAX_HOST_WAIT_S = 120.0
#: The first retry wait for an unreachable host, doubling: it fails in milliseconds, so "offline" costs < 1 s.
UNREACHABLE_RETRY_BASE_S = 0.1
#: The learned interval's cap; a longer server wait is an outage, kept as a hold.
LEARN_MAX_S = 60.0
#: After this many successes in a row the learned interval comes down ...
LEARN_DECAY_SUCCESSES = 10
#: ... by this fraction.
LEARN_DECAY_FRACTION = 0.1
#: A server wait over this many times the host's interval is a hold, not a pace: one Retry-After must not slow the rest.
LEARN_WAIT_FACTOR = 10.0

#: Requests in flight at once to one host.
MAX_IN_FLIGHT_PER_HOST = 1
#: Redirect hops one request follows.
MAX_REDIRECTS = 10
#: Total seconds one request may take, however the bytes trickle.
REQUEST_DEADLINE_S = 300.0
#: A body slower than this many bytes/s over the window ends early (curl's --speed-limit/--speed-time).
MIN_RATE_BYTES_S = 1024.0
MIN_RATE_WINDOW_S = 30.0
#: A robots.txt request's deadline: it blocks its host's whole queue, so less than a request's.
ROBOTS_DEADLINE_S = 15.0
#: Decoded bytes of a (non-streamed) answer read at most: a gzip bomb stops here.
MAX_ANSWER_BYTES = 32 * 1024 * 1024
#: Decoded bytes of a robots.txt read: RFC 9309 §2.5 asks for at least 500 KiB, and Google reads that much.
MAX_ROBOTS_BYTES = 500 * 1024
#: Redirect hops a robots.txt request follows: RFC 9309 §2.3.1.2 asks for at least five.
ROBOTS_REDIRECTS = 5
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
#: Added to every non-zero gap, so varying latency never lands a request below the floor.
PACING_MARGIN_S = 0.002

# the ledger, the host-state store, the Retriever's files

#: The host-state store when nothing names one: the SQLite file in the user cache directory.
STATE = "sqlite"
#: A Retriever (and the CLI) reads robots.txt before fetching web pages; a bare HttpClient does only when asked.
RESPECT_ROBOTS_TXT = True
#: The output folder when none is given.
OUT_DIR = "PDFs"
#: The saved PDF's file name: ``{type}`` and ``{value}`` of the identifier.
FILENAME_TEMPLATE = "{type}_{value}"
#: The largest PDF saved and read (decoded bytes): a PDF that was saved can be read.
MAX_PDF_BYTES = 200 * 1024 * 1024
#: Bytes written per chunk while a body streams to its part file.
DOWNLOAD_CHUNK_BYTES = 64 * 1024
#: Bytes ``stream_to_file`` hands its validator when the caller names no size.
DOWNLOAD_VALIDATE_BYTES = 2048
#: Bytes of a candidate's body kept to judge it: enough to find citation_pdf_url in HTML served as a PDF.
PDF_SNIFF_BYTES = 256 * 1024
#: Landing pages larger than this are not read.
MAX_LANDING_BYTES = 5 * 1024 * 1024
#: The largest XML body parsed: room for a supplement-heavy PMC article, not a misbehaving server's 100 MB.
MAX_XML_BYTES = 32 * 1024 * 1024
#: How long a locked SQLite file is waited for before the run falls back: never a silent stall.
LOCK_TIMEOUT_S = 10.0
#: The longest hold a header can ask for and a store keeps; a stored hold further ahead is clamped to it.
MAX_HOLD_S = 7 * 24 * 3600.0
#: How long a process holds a host's slot in a shared store: what a process killed mid-request costs the host.
HOST_LEASE_S = 10.0
#: The name that separates the ledgers of different batches in one Redis.
LEDGER_NAME = "default"
#: The prefix of every key paperfetch writes in Redis.
REDIS_NAMESPACE = "paperfetch:"
#: How long a Redis call waits before the store counts as not answering.
REDIS_SOCKET_TIMEOUT_S = 5.0
#: How long host state stays in the fallback store before Redis is tried again.
REDIS_RETRY_AFTER_S = 30.0
#: How long a final "absent" answer in the ledger (``not_found``, ``no_open_copy``) is kept before a run asks
#: the services again: embargoes end and repositories are harvested late. Read at each run, so it can be set.
RECHECK_AFTER_S = 30 * 24 * 3600.0


# the item path, the research calls, the dashboard

#: How long ``Retriever.close()`` from another thread waits for a stopped batch's rows before closing the cache.
CLOSE_WAIT_S = 30.0
#: How long a service's answer is reused from the metadata cache.
CACHE_ANSWER_TTL_S = 7 * 24 * 3600.0
#: How long a "not found" is reused: a work a service did not know yesterday may be indexed today.
CACHE_NOT_FOUND_TTL_S = 24 * 3600.0
#: How long a PubMed search answer is reused: shorter than metadata, since new papers match a query every day.
SEARCH_CACHE_TTL_S = 6 * 3600.0

#: Hosts a dashboard's HTML table shows (held and suppressed ones first); the rest are counted in one line.
DASHBOARD_MAX_ROWS = 50

#: A candidate URL longer than this is refused before any request: servers stop near 8-64 kB.
MAX_CANDIDATE_URL_CHARS = 16_384
#: The PubMed hits a search returns when the caller names no number (the CLI's ``--max``).
SEARCH_MAX_RESULTS = 200
