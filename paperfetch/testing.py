"""Fakes for the tests, the demo and the benchmarks, never used at run time (docs/testing.md)."""

from __future__ import annotations

import io
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable, Mapping
from urllib.parse import unquote, urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.response import HTTPResponse

from paperfetch.clock import Clock
from paperfetch.redact import redact_text, redact_url

__all__ = [
    "CASSETTE_FILTER_HEADERS", "CASSETTE_FILTER_QUERY_PARAMETERS", "CASSETTE_MATCH_ON", "LoopbackHost", "Reply",
    "Request", "ScriptedAdapter", "cassette_vcr", "gaps", "scripted_session", "scrub_cassette_request",
    "scrub_cassette_response"
]

#: vcrpy settings of every cassette: identity parameters and headers never reach one; the rest matches.
CASSETTE_FILTER_QUERY_PARAMETERS = ("email", "mailto", "api_key", "tool")
CASSETTE_FILTER_HEADERS = ("authorization", "user-agent")
CASSETTE_MATCH_ON = ("method", "scheme", "host", "port", "path", "query")


def cassette_vcr(record_mode: str = "none", **kwargs: Any):  # noqa: ANN201 - vcr is a test dependency
    """A ``vcr.VCR`` with paperfetch's cassette settings (record mode ``none``: replay only)."""
    import vcr

    options = dict(
        record_mode=record_mode,
        filter_query_parameters=list(CASSETTE_FILTER_QUERY_PARAMETERS),
        filter_headers=list(CASSETTE_FILTER_HEADERS),
        match_on=list(CASSETTE_MATCH_ON),
        decode_compressed_response=True,
        before_record_request=scrub_cassette_request,
        before_record_response=scrub_cassette_response,
    )
    options.update(kwargs)
    recorder = vcr.VCR(**options)
    # paths match percent-decoded: recordings may hold 10.1038/nature12373 where 10.1038%2Fnature12373 is sent
    recorder.register_matcher("path", _same_decoded_path)
    return recorder


def _same_decoded_path(r1: Any, r2: Any) -> None:
    """vcrpy matcher: two request paths are the same once percent-decoded."""
    assert unquote(r1.path) == unquote(r2.path), f"{r1.path} != {r2.path}"


def _scrub_body(body: Any) -> Any:
    """A text body with every secret masked; a binary body (a PDF) as it is."""
    if isinstance(body, str):
        return redact_text(body)
    if isinstance(body, (bytes, bytearray)):
        try:
            text = bytes(body).decode("utf-8")
        except UnicodeDecodeError:
            return body
        scrubbed = redact_text(text)
        return body if scrubbed == text else scrubbed.encode("utf-8")
    return body


def scrub_cassette_request(request: Any) -> Any:
    """vcrpy hook: the URL (secrets outside the filtered parameters too) and the body, redacted."""
    request.uri = redact_url(request.uri)
    request.body = _scrub_body(request.body)
    return request


def scrub_cassette_response(response: dict) -> dict:
    """vcrpy hook: a text response body, with any registered secret it echoes, masked."""
    body = response.get("body") or {}
    if "string" in body:
        body["string"] = _scrub_body(body["string"])
    return response


@dataclass
class Reply:
    status: int = 200
    body: bytes | str = b""
    headers: Mapping[str, str] = field(default_factory=dict)
    raise_exc: BaseException | None = None  #: raise this instead of answering (a timeout, a reset)

    def body_bytes(self) -> bytes:
        return self.body.encode() if isinstance(self.body, str) else self.body

    @classmethod
    def json(cls, data: Any, status: int = 200) -> "Reply":
        """A JSON answer of *data* (bytes are sent as they are: a body already written)."""
        return cls(status, data if isinstance(data, bytes) else json.dumps(data).encode(), {"Content-Type": "application/json"})

    @classmethod
    def pdf(cls, body: bytes) -> "Reply":
        return cls(200, body, {"Content-Type": "application/pdf"})


Script = Callable[[requests.PreparedRequest], Reply]


def _answer(route: Reply | Callable[[Any], Reply] | None, request: Any) -> Reply:
    """A route's answer to *request*: a reply as it is, a handler's, or 404 where no route is."""
    if route is None:
        return Reply(404, b"not found", {"Content-Type": "text/plain"})
    return route if isinstance(route, Reply) else route(request)


class ScriptedAdapter(HTTPAdapter):
    """Answers from ``{url_or_path: Reply | [Reply, ...] | callable}``; ``calls`` lists ``(monotonic, url)``."""

    def __init__(self, routes: Mapping[str, Reply | list[Reply] | Script], clock: Clock | None = None) -> None:
        super().__init__()
        self.routes = {k: (list(v) if isinstance(v, list) else v) for k, v in routes.items()}
        self.clock = clock
        self.calls: list[tuple[float, str]] = []
        self._lock = threading.Lock()

    def _reply_for(self, request: requests.PreparedRequest) -> Reply:
        url = request.url or ""
        parts = urlsplit(url)
        bare = f"{parts.scheme}://{parts.netloc}{parts.path}"
        with self._lock:
            route = self.routes.get(url, self.routes.get(bare, self.routes.get(parts.path)))
            if isinstance(route, list):  # one reply after the other; the last one stays
                route = route.pop(0) if len(route) > 1 else route[0]
        return _answer(route, request)

    def send(self, request: requests.PreparedRequest, stream: bool = False, timeout: Any = None, verify: Any = True,
             cert: Any = None, proxies: Any = None) -> requests.Response:
        now = self.clock.monotonic() if self.clock else time.monotonic()
        with self._lock:
            self.calls.append((now, request.url or ""))
        reply = self._reply_for(request)
        if reply.raise_exc is not None:
            raise reply.raise_exc
        body = reply.body_bytes()
        headers = {"Content-Length": str(len(body)), **dict(reply.headers)}
        raw = HTTPResponse(body=io.BytesIO(body), headers=headers, status=reply.status, reason="scripted",
                           preload_content=False)
        response = self.build_response(request, raw)
        response.encoding = "utf-8"
        if not stream:
            _ = response.content
        return response

    def urls(self) -> list[str]:
        return [u for _, u in self.calls]


def scripted_session(routes: Mapping[str, Reply | list[Reply] | Script],
                     clock: Clock | None = None) -> tuple[requests.Session, ScriptedAdapter]:
    """A session whose http and https traffic is answered by a :class:`ScriptedAdapter`."""
    adapter = ScriptedAdapter(routes, clock)
    session = requests.Session()
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session, adapter


Handler = Callable[["Request"], Reply]


@dataclass(frozen=True)
class Request:
    path: str
    query: str
    headers: Mapping[str, str]
    arrived: float  #: time.monotonic() when the request line was read
    method: str = "GET"
    body: bytes = b""  #: a POST's body (Semantic Scholar's batch, NCBI's long id lists)


class LoopbackHost:
    """A real HTTP server on a loopback address, answering from Python handlers; ``log`` has ``(time.monotonic(), path)``."""

    def __init__(self, address: str = "127.0.0.1", routes: Mapping[str, Reply | Handler] | None = None, port: int = 0) -> None:
        if not address.startswith("127.") and address not in ("::1", "localhost"):
            raise ValueError(f"LoopbackHost only binds loopback addresses, not {address!r}")
        self.routes: dict[str, Reply | Handler] = dict(routes or {})
        self.log: list[tuple[float, str]] = []
        log_lock = self._lock = threading.Lock()
        host = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                # one segment: Nagle and delayed ACKs would add ~40 ms to every keep-alive response
                self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def do_POST(self) -> None:  # noqa: N802 - idempotent reads sent as POST
                length = int(self.headers.get("Content-Length") or 0)
                self.do_GET(method="POST", body=self.rfile.read(length) if length > 0 else b"")

            def do_GET(self, method: str = "GET", body: bytes = b"") -> None:  # noqa: N802
                arrived = time.monotonic()
                parts = urlsplit(self.path)
                with log_lock:
                    host.log.append((arrived, parts.path))
                route = host.routes.get(parts.path, host.routes.get("*"))
                reply = _answer(route, Request(parts.path, parts.query, dict(self.headers), arrived, method, body))
                body = reply.body_bytes()
                self.send_response(reply.status)
                headers = {"Content-Length": str(len(body)), **dict(reply.headers)}
                for name, value in headers.items():
                    self.send_header(name, value)
                self._headers_buffer.append(b"\r\n" + body)  # type: ignore[attr-defined]  # one write for head and body
                try:
                    self.flush_headers()
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                pass

        self._server = ThreadingHTTPServer((address, port), _Handler)
        self._server.daemon_threads = True
        self.address = address
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://{self.address}:{self.port}"

    def url(self, path: str) -> str:
        return self.base_url + path

    def start(self) -> "LoopbackHost":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "LoopbackHost":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def arrivals(self, path_prefix: str = "") -> list[float]:
        with self._lock:
            return [t for t, p in self.log if p.startswith(path_prefix)]

    def hits(self, path: str | None = None) -> int:
        with self._lock:
            return sum(1 for _, p in self.log if path is None or p == path)


def gaps(times: Iterable[float]) -> list[float]:
    ordered = sorted(times)
    return [b - a for a, b in zip(ordered, ordered[1:])]
