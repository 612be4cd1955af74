"""Raw-socket loopback servers that misbehave on purpose, for tests/test_hostile.py.

:class:`RawServer` accepts connections on a loopback address and hands each
socket to a handler ``f(conn, request_bytes, stop_event)``; it can trickle,
close mid-header, send a 10 MB header line — things ``http.server`` will not.
Every thread it starts ends when it is stopped.
"""

from __future__ import annotations

import socket
import struct
import threading
import zlib


class RawServer:
    def __init__(self, address: str, handler) -> None:  # noqa: ANN001
        self.handler = handler
        self.stopping = threading.Event()
        self.requests: list[bytes] = []
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((address, 0))
        self._sock.listen(16)
        self._sock.settimeout(0.05)
        self.address = address
        self.port = self._sock.getsockname()[1]
        self._threads: list[threading.Thread] = []
        self._accepting = threading.Thread(target=self._accept, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://{self.address}:{self.port}"

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self._sock.accept()
            except (TimeoutError, socket.timeout):
                continue
            except OSError:
                return
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(5)
            request = b""
            while b"\r\n\r\n" not in request:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                request += chunk
            self.requests.append(request.split(b"\r\n", 1)[0])
            self.handler(conn, request, self.stopping)
        except OSError:
            pass
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def __enter__(self) -> "RawServer":
        self._accepting.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self._accepting.join(5)
        self._sock.close()
        for thread in self._threads:
            thread.join(5)


def head(status: str = "200 OK", headers: dict[str, str] | None = None) -> bytes:
    lines = [f"HTTP/1.1 {status}"] + [f"{k}: {v}" for k, v in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def trickle(body: bytes, every_s: float, status: str = "200 OK", content_type: str = "application/pdf"):
    """A handler sending *body* one byte every *every_s* seconds (until stopped)."""

    def handle(conn, request, stopping) -> None:  # noqa: ANN001
        conn.sendall(head(status, {"Content-Type": content_type, "Content-Length": str(len(body))}))
        for i in range(len(body)):
            if stopping.wait(every_s):
                return
            conn.sendall(body[i : i + 1])

    return handle


def gzip_bomb(decoded_bytes: int) -> bytes:
    """*decoded_bytes* zeros (a multiple of 1 MiB), gzip-compressed (about 1 MB on the wire per GiB).

    Each MiB is deflated once and ended with a full flush, which empties the compressor's window: every later MiB
    deflates to the same bytes, so the stream is built by repeating them (a second, not the ten that deflating a
    GiB takes) and closed with an empty last block and the gzip trailer (CRC-32 and length of all the zeros)."""
    block = bytes(1 << 20)
    count = decoded_bytes >> 20
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)  # raw deflate: the gzip header and trailer are ours
    first = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    repeated = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(count):
        crc = zlib.crc32(block, crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"  # gzip, deflate, no name, no time, best, unknown OS
    body = first + repeated * (count - 1) if count else b""
    return header + body + compressor.flush() + struct.pack("<II", crc, (count << 20) & 0xFFFFFFFF)


def once(payload: bytes):
    """A handler sending *payload* as is, then closing."""

    def handle(conn, request, stopping) -> None:  # noqa: ANN001
        conn.sendall(payload)

    return handle
