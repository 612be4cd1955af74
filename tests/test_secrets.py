"""No configured secret (e-mail, API keys) in any output of a failing and of a succeeding run.

The values are planted on purpose: an e-mail that is not shaped like an address (so only the
value-based redactor can catch it), and API keys for OpenAlex and NCBI. Every output is searched
for the raw values and their URL-encoded forms, in any case.
"""

from __future__ import annotations

import logging
import socket
from pathlib import Path
from urllib.parse import quote, quote_plus

import pandas as pd
import pytest

import paperfetch
from paperfetch import HttpClient, Identification, NetworkError, Retriever, load_settings
from paperfetch.cli import main
from paperfetch.demo import DEMO_INPUTS, DemoWorld
from paperfetch.http.hosts import host_key
from paperfetch.ledger import DEFAULT_LEDGER_NAME
from paperfetch.log import disable_logging
from paperfetch.redact import REDACTED, Redactor, redact_text, redact_url, register_secrets
from paperfetch.retriever import ENDPOINT_NAMES
from paperfetch.testing import LoopbackHost, Reply, cassette_vcr

EMAIL = "jane.doe@uni.x"               # a one-letter top-level domain: the e-mail regex cannot catch it
OPENALEX_KEY = "OaxSekretKey123"
NCBI_KEY = "NcbiKey999zz"
S2_KEY = "S2xKeyQq777"                 # sent as the x-api-key header
SECRETS = (EMAIL, OPENALEX_KEY, NCBI_KEY, S2_KEY)


def forms(value: str) -> set[str]:
    found = {value, quote(value, safe=""), quote(value), quote_plus(value), quote(quote(value, safe=""), safe="")}
    return {f.lower() for f in found}


NEEDLES = set().union(*(forms(s) for s in SECRETS))


def leaks(text: str | bytes) -> list[str]:
    if isinstance(text, bytes):
        text = text.decode("latin-1")
    low = text.lower()
    return sorted(n for n in NEEDLES if n in low)


class Everything(logging.Handler):
    """Every record of every logger: formatted with its traceback (``lines``), and kept whole (``records``, their
    ``exc_info`` too)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))
        self.lines: list[str] = []
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        self.lines.append(self.format(record))


@pytest.fixture
def every_record():
    handler = Everything()
    root = logging.getLogger()
    previous = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    yield handler
    root.removeHandler(handler)
    root.setLevel(previous)
    disable_logging()


def _refused() -> str:
    with socket.socket() as sock:  # a port that was just free: connecting to it is refused
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def refused_url():
    return _refused()


@pytest.fixture
def refused_endpoints():
    """One refusing host per service: a host's backoff after an error does not slow the others."""
    return {name: _refused() for name in ENDPOINT_NAMES}


def outputs_of(retriever: Retriever, outcomes: pd.DataFrame, out_dir: Path) -> dict[str, str | bytes]:
    found: dict[str, str | bytes] = {
        "outcomes csv": outcomes.to_csv(),
        "outcomes repr": repr(outcomes.to_dict()),
        "requests": retriever.requests().to_csv(),
        "requests repr": repr(retriever.requests().to_dict()),
        "domain_status": retriever.domain_status().to_csv(),
        "domain_status repr": repr(retriever.domain_status().to_dict()),
        "retriever repr": repr(retriever) + str(retriever.identification) + repr(retriever.web) + repr(retriever.api),
    }
    for path in out_dir.rglob("*"):
        if path.is_file():
            found[f"file {path.name}"] = path.read_bytes()
    assert (out_dir / DEFAULT_LEDGER_NAME).exists()
    return found


def assert_clean(outputs: dict[str, str | bytes]) -> None:
    dirty = {name: leaks(text) for name, text in outputs.items() if leaks(text)}
    assert dirty == {}


# ---------------------------------------------------------------------------- the redactor itself
def test_redactor_masks_raw_encoded_and_any_case():
    r = Redactor([EMAIL, OPENALEX_KEY])
    text = (f"GET /w?mailto=jane.doe%40uni.x&api_key={OPENALEX_KEY.upper()} from JANE.DOE@UNI.X "
            f"or jane.doe%40UNI.X or {quote(quote(EMAIL, safe=''), safe='')}")
    masked = r.redact(text)
    assert leaks(masked) == [] and masked.count(REDACTED) == 5
    assert Redactor().redact("nothing secret here") == "nothing secret here"
    assert "secret(s)" in repr(r) and EMAIL not in repr(r)


def test_redact_url_masks_secret_parameters_and_userinfo():
    url = "https://user:pw@api.example/w?filter=doi:10.1/x&api_key=zzzz9999&mailto=a%40b.org"
    shown = redact_url(url)
    assert "zzzz9999" not in shown and "a%40b.org" not in shown and "user:pw" not in shown
    assert "filter=doi:10.1/x" in shown


def test_redact_text_masks_secret_parameters_in_free_text_only_after_a_query_separator():
    assert redact_text("see ?x=1&api_key=qwerty77") == f"see ?x=1&api_key={REDACTED}"
    assert redact_text("give one with email=, --email or PAPERFETCH_EMAIL") == "give one with email=, --email or PAPERFETCH_EMAIL"


def test_settings_and_identification_reprs_are_masked():
    settings = load_settings({"email": EMAIL, "openalex_api_key": OPENALEX_KEY, "ncbi_api_key": NCBI_KEY},
                             environ={}, config_path="/nonexistent/config.toml")
    assert leaks(repr(settings) + str(settings) + repr(settings.identification) + repr(settings.rows())) == []
    # the table a notebook shows: the e-mail stays masked there too (e-mails never reach an output)
    assert leaks(settings.frame().to_string() + settings._repr_html_()) == []


def test_mapped_exception_messages_are_redacted(refused_url):
    Identification(email=EMAIL, openalex_api_key=OPENALEX_KEY, ncbi_api_key=NCBI_KEY)
    client = HttpClient(max_retries=0, network_retry_base_s=0.01)
    url = f"{refused_url}/works?mailto={quote(EMAIL)}&api_key={OPENALEX_KEY}&email={quote_plus(EMAIL)}&x={NCBI_KEY}"
    with pytest.raises(NetworkError) as info:
        client.fetch(url)
    assert leaks(str(info.value)) == [] and leaks(repr(info.value)) == [] and leaks(info.value.url or "") == []
    assert leaks(str(NetworkError(f"boom at {url}"))) == []


# ---------------------------------------------------------------------------- a failing run
def test_failing_run_leaks_nothing(tmp_path, refused_endpoints, every_record, capsys, monkeypatch):
    endpoints = refused_endpoints
    with Retriever(email=EMAIL, openalex_api_key=OPENALEX_KEY, ncbi_api_key=NCBI_KEY, s2_api_key=S2_KEY, out_dir=tmp_path / "lib",
                   endpoints=endpoints, progress=False, max_retries=1, workers=2,
                   http_options={"network_retry_base_s": 0.01,  # and no 3 s arXiv interval on the refusing hosts
                                 "rate_limit_min_s": 0.0, "rate_limit_max_s": 0.0,  # nor a 1-3 s gap between retries
                                 "host_intervals": {host_key(url): 0.0 for url in endpoints.values()}}) as retriever:
        outcomes = retriever.download(["10.1234/abc", "PMID:31452104", "PMC3531190", "arXiv:1706.03762"])
        assert set(outcomes["status"].astype(str)) <= {"network_error", "not_found", "no_open_copy"}
        found = outputs_of(retriever, outcomes, tmp_path / "lib")
    assert any(f"api_key={REDACTED}" in line for line in every_record.lines), "the failing URLs were logged"
    # the command line, with every report format
    monkeypatch.setenv("PAPERFETCH_CONFIG", str(tmp_path / "none.toml"))
    for name in ("PAPERFETCH_RATE_LIMIT_MIN_S", "PAPERFETCH_RATE_LIMIT_MAX_S"):  # read for secrets, not pace
        monkeypatch.setenv(name, "0")
    for name, url in endpoints.items():
        monkeypatch.setenv(f"PAPERFETCH_{name.upper()}_URL", url)
    for suffix in (".csv", ".jsonl", ".parquet"):
        code = main(["download", "10.1234/abc", "PMID:31452104", "--email", EMAIL, "--openalex-api-key", OPENALEX_KEY,
                     "--ncbi-api-key", NCBI_KEY, "--out", str(tmp_path / "cli"), "--report", str(tmp_path / f"report{suffix}"),
                     "--failed", str(tmp_path / "failed.txt"), "--max-retries", "0", "-vv", "--no-progress"])
        assert code == 1
    captured = capsys.readouterr()
    found.update({"stdout": captured.out, "stderr": captured.err, "log records": "\n".join(every_record.lines)})
    for path in tmp_path.rglob("*"):
        if path.is_file():
            found[f"file {path}"] = path.read_bytes()
    assert "network_error" in captured.out
    assert len(every_record.lines) > 20
    assert_clean(found)


# ---------------------------------------------------------------------------- a succeeding run
def test_succeeding_run_in_the_demo_world_leaks_nothing(tmp_path, every_record, capsys, monkeypatch):
    with DemoWorld(base_ip=160) as world:
        with Retriever(email=EMAIL, openalex_api_key=OPENALEX_KEY, ncbi_api_key=NCBI_KEY, s2_api_key=S2_KEY, out_dir=tmp_path / "lib",
                       endpoints=world.endpoints, progress=False, verbosity=3,
                       http_options={"network_retry_base_s": 0.1, "rate_limit_min_s": 0.1, "rate_limit_max_s": 0.3,
                                     # no published service interval (bioRxiv's 1 s): read for secrets, not pace
                                     "host_intervals": {host_key(url): 0.0 for url in world.endpoints.values()}}
                       ) as retriever:
            outcomes = retriever.download(DEMO_INPUTS)
            assert (outcomes["status"] == "downloaded").sum() >= 5
            found = outputs_of(retriever, outcomes, tmp_path / "lib")
            candidates = retriever.candidates(["10.5555/demo.fast", "PMID:90000001"])
            found["candidates"] = candidates.to_csv()
        monkeypatch.setenv("PAPERFETCH_CONFIG", str(tmp_path / "none.toml"))
        monkeypatch.setenv("PAPERFETCH_EMAIL", EMAIL)
        monkeypatch.setenv("PAPERFETCH_OPENALEX_API_KEY", OPENALEX_KEY)
        monkeypatch.setenv("NCBI_API_KEY", NCBI_KEY)
        monkeypatch.setenv("PAPERFETCH_S2_API_KEY", S2_KEY)
        monkeypatch.setenv("PAPERFETCH_DELAY_MIN", "0")  # no configured gap: these runs are read for secrets, not pace
        monkeypatch.setenv("PAPERFETCH_DELAY_MAX", "0")
        for name, url in world.endpoints.items():
            monkeypatch.setenv(f"PAPERFETCH_{name.upper()}_URL", url)
        code = main(["download", "10.5555/demo.fast", "PMID:90000001", "10.5555/demo.gone", "--out", str(tmp_path / "cli"),
                     "--report", str(tmp_path / "report.csv"), "--failed", str(tmp_path / "failed.txt"), "-vv",
                     "--no-progress"])
        assert code == 1
        assert main(["download", "10.5555/demo.fast", "--dry-run", "--format", "jsonl", "--out", str(tmp_path / "cli")]) == 0
        assert main(["config"]) == 0
    captured = capsys.readouterr()
    found.update({"stdout": captured.out, "stderr": captured.err, "log records": "\n".join(every_record.lines)})
    for path in tmp_path.rglob("*"):
        if path.is_file():
            found[f"file {path}"] = path.read_bytes()
    assert "downloaded" in captured.out and "'***'" in captured.out
    assert_clean(found)


def test_cassettes_never_hold_a_secret(tmp_path):
    Identification(email=EMAIL, openalex_api_key=OPENALEX_KEY, ncbi_api_key=NCBI_KEY)

    def echo(request):  # a service that echoes the query, as some do in error messages
        return Reply(200, f'{{"echo": "{request.query}", "path": "{request.path}"}}', {"Content-Type": "application/json"})

    host = LoopbackHost("127.0.0.1", {"*": echo}).start()
    try:
        cassette = tmp_path / "echo.yaml"
        with cassette_vcr(record_mode="all").use_cassette(str(cassette)):
            import requests

            requests.get(host.url(f"/works/{quote(EMAIL)}"),
                         params={"mailto": EMAIL, "api_key": OPENALEX_KEY, "key2": NCBI_KEY},
                         headers={"User-Agent": f"paperfetch (mailto:{EMAIL})"}, timeout=10)
    finally:
        host.stop()
    body = cassette.read_bytes()
    assert b"echo" in body and leaks(body) == []


def test_importing_paperfetch_puts_the_filter_on_every_module_logger():
    names = [n for n in logging.Logger.manager.loggerDict if n.startswith("paperfetch")]
    assert "paperfetch.http.client" in names
    for name in names:
        log = logging.getLogger(name)
        assert any(type(f).__name__ == "RedactingFilter" for f in log.filters), name
    assert paperfetch.redact_text is redact_text


@pytest.mark.timeout(60)  # linear: well under a second here; quadratic (the old code: 5.5 s at 40 kB) about an hour
def test_redact_text_is_linear_in_its_input():
    """2 MB of each adversarial shape within the test's time limit (the figures per size: benchmarks/redact.py)."""
    Redactor([EMAIL])  # the shape of a real process: some secrets registered
    n = 2_000_000
    for text in ["a" * n, ("a." * (n // 2)), ("x%40" * (n // 4)), ("mailto=" + "b" * n), ("a@" * (n // 2))]:
        assert len(redact_text(text)) <= len(text)


@pytest.mark.timeout(60)  # the prefix tree: about 0.4 s per MB; one alternative per secret form: about 12 s per MB
def test_redaction_cost_does_not_grow_with_the_number_of_secrets():
    """The registry only grows (a long kernel, a test session); masking is one prefix tree, not one alternative
    per secret form: 400 secrets (1,000+ forms) on 8 MB within the test's time limit."""
    import random
    import string

    rng = random.Random(5)
    secrets = [f"user{i}.{''.join(rng.choices(string.ascii_lowercase, k=8))}@uni" for i in range(300)]
    secrets += ["".join(rng.choices(string.ascii_letters + string.digits, k=32)) for _ in range(100)]
    text = "".join(rng.choices(string.ascii_letters + string.digits + " /.:", k=200_000)) * 40 + secrets[7]
    # the text ends with secrets[7]: masked by the redactor that knows it, left alone by the one that does not
    assert Redactor(secrets[:4]).redact(text).endswith(secrets[7])
    assert Redactor(secrets).redact(text).endswith(REDACTED)
    assert Redactor(secrets).redact("x " + secrets[350] + " y") == f"x {REDACTED} y"


# ---------------------------------------------------------------------------- secrets with URL-special characters
SPECIAL_EMAIL = "jane+doe@uni.x"        # a `+` (a space once a query is decoded), a 1-letter TLD: only the value catches it
SPECIAL_OPENALEX_KEY = "sk-OPEN-xyz/42"
SPECIAL_NCBI_KEY = "Nc%bi 99+zz"        # a `%`, a space and a `+`
SPECIAL_S2_KEY = "S2/x%2Fk+Q q"
SPECIAL = (SPECIAL_EMAIL, SPECIAL_OPENALEX_KEY, SPECIAL_NCBI_KEY, SPECIAL_S2_KEY)


def special_needles() -> set[str]:
    """Every way a URL, a decoded query or a re-encoded one may spell a special secret."""
    found: set[str] = set()
    for value in SPECIAL:
        plus_as_space = value.replace("+", " ")
        for v in (value, plus_as_space):
            found |= {v, quote(v, safe=""), quote(v), quote_plus(v), quote(v, safe="@"), quote(v, safe="+"),
                      quote_plus(v, safe="@"), quote_plus(v, safe="/"), quote(quote(v, safe=""), safe="")}
    return {f.lower() for f in found} | {f.upper() for f in found}


SPECIAL_NEEDLES = special_needles()


def special_leaks(text: str | bytes) -> list[str]:
    if isinstance(text, bytes):
        text = text.decode("latin-1")
    low = text.lower()
    return sorted(n for n in {s.lower() for s in SPECIAL_NEEDLES} if n in low)


def test_the_redactor_masks_every_encoded_form_of_special_secrets():
    r = Redactor(SPECIAL)
    for needle in sorted(SPECIAL_NEEDLES):
        masked = r.redact(f"GET /w?q=1&x={needle}&y=2 and {needle}.")
        assert special_leaks(masked) == [], (needle, masked)
    assert r.redact("sk-OPEN-xyz%2f42 sk-OPEN-xyz%2F42 jane%2bdoe%40uni.x") == " ".join([REDACTED] * 3)


def test_special_secrets_leave_no_trace_in_exception_chains_logs_or_frames(tmp_path, refused_endpoints, every_record):
    import traceback

    endpoints = refused_endpoints
    Identification(email=SPECIAL_EMAIL, openalex_api_key=SPECIAL_OPENALEX_KEY, ncbi_api_key=SPECIAL_NCBI_KEY)
    register_secrets([SPECIAL_S2_KEY])  # the Retriever below registers it too; the raw client comes first
    found: dict[str, str | bytes] = {}
    base = endpoints["openalex"]
    for i, value in enumerate(SPECIAL):
        client = HttpClient(max_retries=0, network_retry_base_s=0.01, breaker_failures=0)
        for query in (f"api_key={quote(value, safe='')}", f"mailto={quote_plus(value)}", f"x={quote(value)}",
                      f"y={value}", f"api_key={quote(value, safe='@+')}"):
            for call in (client.fetch, lambda u: client.download(u, tmp_path / "x.pdf")):
                try:
                    call(f"{base}/works/{i}?{query}")
                except Exception as exc:  # noqa: BLE001 - every error is searched, whatever its type
                    found[f"chain {i} {query}"] = "".join(traceback.format_exception(exc))
                else:
                    pytest.fail("a refused host answered")
    with Retriever(email=SPECIAL_EMAIL, openalex_api_key=SPECIAL_OPENALEX_KEY, ncbi_api_key=SPECIAL_NCBI_KEY,
                   s2_api_key=SPECIAL_S2_KEY, out_dir=tmp_path / "lib", endpoints=endpoints, progress=False,
                   max_retries=1, workers=2,
                   http_options={"network_retry_base_s": 0.01, "rate_limit_min_s": 0.0, "rate_limit_max_s": 0.0,
                                 "host_intervals": {host_key(url): 0.0 for url in endpoints.values()}}) as retriever:
        outcomes = retriever.download(["10.1234/abc", "PMID:31452104", "PMC3531190", "arXiv:1706.03762"])
        assert set(outcomes["status"].astype(str)) <= {"network_error", "not_found", "no_open_copy"}
        found.update({"outcomes csv": outcomes.to_csv(), "outcomes repr": repr(outcomes.to_dict()),
                      "requests": retriever.requests().to_csv(), "requests repr": repr(retriever.requests().to_dict()),
                      "domain_status": retriever.domain_status().to_csv(), "retriever repr": repr(retriever)})
    found["log records"] = "\n".join(every_record.lines)
    for path in tmp_path.rglob("*"):
        if path.is_file():
            found[f"file {path.name}"] = path.read_bytes()
    assert any("refused" in str(text) for text in found.values())
    dirty = {name: special_leaks(text) for name, text in found.items() if special_leaks(text)}
    assert dirty == {}


# ---------------------------------------------------------------------------- exception chains
CHAIN_KEY = "Ck/9+z%q w"                # a `/` urllib3 writes as %2F, a `+`, a `%` and a space


def _spellings(value: str) -> set[str]:
    """The key raw, percent-encoded (once, twice, keeping `/`), plus-encoded, with `+` read as a space, any case."""
    found: set[str] = set()
    for v in (value, value.replace("+", " ")):
        found |= {v, quote(v, safe=""), quote(v), quote_plus(v), quote_plus(v, safe="/"), quote(quote(v, safe=""), safe="")}
    return {f.lower() for f in found}


CHAIN_NEEDLES = _spellings(CHAIN_KEY)


def _chain(exc: BaseException) -> list[BaseException]:
    """*exc* and every exception it holds: ``__cause__``, ``__context__`` and those in ``args`` (urllib3 wraps its
    ``MaxRetryError`` in the ``requests`` error's args), each once."""
    found: list[BaseException] = []
    todo = [exc]
    while todo:
        error = todo.pop()
        if any(error is seen for seen in found):
            continue
        found.append(error)
        todo += [e for e in (error.__cause__, error.__context__, *error.args) if isinstance(e, BaseException)]
    return found


def chain_leaks(exc: BaseException) -> list[str]:
    """Where in *exc*'s whole chain the key shows: ``"<type> str|repr|args"``."""
    dirty = []
    for error in _chain(exc):
        for what, text in (("str", str(error)), ("repr", repr(error)), ("args", repr(error.args))):
            if any(n in text.lower() for n in CHAIN_NEEDLES):
                dirty.append(f"{type(error).__name__} {what}")
    return dirty


@pytest.fixture
def resetting():
    """Makes loopback hosts that accept a connection, read the request and reset it (SO_LINGER 0); each a new
    port, so no host's backoff from an earlier error holds the next call."""
    import struct
    import threading

    servers: list[tuple[socket.socket, threading.Thread]] = []

    def serve(server: socket.socket) -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                try:
                    conn.recv(65536)
                except OSError:
                    pass
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    def make() -> str:
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen(64)
        thread = threading.Thread(target=serve, args=(server,), daemon=True)
        thread.start()
        servers.append((server, thread))
        return f"http://127.0.0.1:{server.getsockname()[1]}"

    yield make
    for server, thread in servers:
        try:
            server.shutdown(socket.SHUT_RDWR)  # wakes the accept() waiting in the thread
        except OSError:
            pass
        server.close()
        thread.join(timeout=5)


def test_a_key_with_url_specials_is_absent_from_every_exception_chain_of_the_client(tmp_path, resetting, every_record):
    Identification(openalex_api_key=CHAIN_KEY)
    raised = 0
    for make in (_refused, resetting):
        for query in (f"api_key={quote(CHAIN_KEY, safe='')}", f"key={quote_plus(CHAIN_KEY)}", f"x={CHAIN_KEY}",
                      f"q={quote(CHAIN_KEY, safe='/')}"):
            for name in ("get", "fetch", "download"):
                base = make()  # a new host each time: no backoff held from the call before
                url = f"{base}/works?{query}"
                client = HttpClient(max_retries=0, network_retry_base_s=0.01, breaker_failures=0)
                call = getattr(client, name)
                with pytest.raises(Exception) as info:  # noqa: PT011 - whatever the type, its chain is searched
                    call(url) if name != "download" else call(url, tmp_path / "x.pdf")
                assert len(_chain(info.value)) > 1, name  # the raw urllib3 errors are held: the test sees them
                assert chain_leaks(info.value) == [], (base, query, name)
                raised += 1
    logged = [r.exc_info[1] for r in every_record.records if r.exc_info and r.exc_info[1] is not None]
    assert raised == 24 and all(chain_leaks(e) == [] for e in logged)


def test_a_key_with_url_specials_is_absent_from_what_download_and_fulltext_log_and_report(
        tmp_path, resetting, every_record):
    endpoints = {name: (_refused() if i % 2 else resetting()) for i, name in enumerate(ENDPOINT_NAMES)}
    with Retriever(email="lab@uni.example", openalex_api_key=CHAIN_KEY, ncbi_api_key=CHAIN_KEY, s2_api_key=CHAIN_KEY,
                   out_dir=tmp_path / "lib", endpoints=endpoints, progress=False, max_retries=0, workers=2,
                   http_options={"network_retry_base_s": 0.01, "breaker_failures": 0,
                                 # no host backoff after a reset, no 1-3 s gap: searched for the key, not paced
                                 "backoff_base_s": 0.01, "rate_limit_min_s": 0.0, "rate_limit_max_s": 0.0,
                                 "host_intervals": {host_key(url): 0.0 for url in endpoints.values()}}) as retriever:
        outcomes = retriever.download(["10.1234/abc", "PMID:31452104", "arXiv:1706.03762"])
        text = retriever.fulltext(["10.1234/xyz", "PMC3531190"])
        frames = [outcomes, retriever.requests(), text.outcomes, text.paragraphs]
    assert "network_error" in set(outcomes["status"].astype(str))
    dumped = "\n".join(f.to_csv() + repr(f.to_dict()) for f in frames).lower()
    assert [n for n in CHAIN_NEEDLES if n in dumped] == []
    logged = [r.exc_info[1] for r in every_record.records if r.exc_info and r.exc_info[1] is not None]
    assert [chain_leaks(e) for e in logged if chain_leaks(e)] == []
    messages = "\n".join(r.getMessage() for r in every_record.records).lower()
    assert [n for n in CHAIN_NEEDLES if n in messages] == []


def test_a_key_with_url_specials_is_absent_from_the_command_line_output(tmp_path, resetting):
    import os
    import subprocess
    import sys

    env = {**os.environ, "PAPERFETCH_CONFIG": str(tmp_path / "none.toml"),
           "PAPERFETCH_CACHE_DIR": str(tmp_path / "cache"),
           # no host backoff after a reset, no 1-3 s gap: the output is searched for the key, not paced
           "PAPERFETCH_BACKOFF_BASE_S": "0.01", "PAPERFETCH_RATE_LIMIT_MIN_S": "0", "PAPERFETCH_RATE_LIMIT_MAX_S": "0"}
    for i, name in enumerate(ENDPOINT_NAMES):
        env[f"PAPERFETCH_{name.upper()}_URL"] = _refused() if i % 2 else resetting()
    done = subprocess.run(
        [sys.executable, "-m", "paperfetch", "download", "10.1234/abc", "PMID:31452104", "--email", "lab@uni.example",
         "--openalex-api-key", CHAIN_KEY, "--ncbi-api-key", CHAIN_KEY, "--out", str(tmp_path / "cli"),
         "--max-retries", "0", "-vv", "--no-progress"],
        capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 1 and "network_error" in done.stdout, done.stderr[-2000:]
    output = (done.stdout + done.stderr).lower()
    assert [n for n in CHAIN_NEEDLES if n in output] == []
