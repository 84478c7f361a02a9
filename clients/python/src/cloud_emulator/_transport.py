"""HTTP for the client: one request per connection, standard library only (http.client)."""

from __future__ import annotations

import http.client
import json
import socket
from typing import Any, Dict, Mapping, Optional, Tuple
from urllib.parse import urlsplit

from .errors import EmulatorError


def connect(url: str, timeout: Optional[float]) -> Tuple[http.client.HTTPConnection, str]:
    """A connection to the URL's host (not yet opened), and the path (with query) to ask it for."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"the emulator's URL must be http:// or https://, got {url!r}")
    host = parts.hostname or "localhost"
    conn: http.client.HTTPConnection
    if parts.scheme == "https":
        conn = http.client.HTTPSConnection(host, parts.port, timeout=timeout)
    else:
        conn = http.client.HTTPConnection(host, parts.port, timeout=timeout)
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    return conn, target


class Opened:
    """A sent request and its response, headers read and body not yet, with the socket under them."""

    def __init__(self, conn: http.client.HTTPConnection, response: http.client.HTTPResponse, sock: Optional[socket.socket]) -> None:
        self.conn = conn
        self.response = response
        # Kept here: http.client lets go of the connection's socket once a response says it closes it.
        self.sock = sock

    def set_read_timeout(self, seconds: Optional[float]) -> None:
        """Bounds the next reads (None: wait as long as it takes)."""
        if self.sock is not None:
            self.sock.settimeout(seconds)

    def shutdown(self) -> None:
        """Ends the connection: a read blocked on it returns, and the emulator knows at once."""
        if self.sock is not None:
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self) -> None:
        self.shutdown()
        self.response.close()
        self.conn.close()
        if self.sock is not None:
            self.sock.close()


def open_response(
    method: str,
    url: str,
    headers: Mapping[str, str],
    body: Optional[bytes],
    timeout: Optional[float],
) -> Opened:
    """Sends a request and answers its response, headers read and body not yet.

    No answer at all (refused, reset, timed out) is an EmulatorError with status 0.
    """
    conn, target = connect(url, timeout)
    try:
        conn.connect()
        sock: Optional[socket.socket] = conn.sock
        conn.request(method, target, body=body, headers=dict(headers))
        return Opened(conn, conn.getresponse(), sock)
    except (OSError, http.client.HTTPException) as err:
        conn.close()
        raise EmulatorError(0, f"{method} {url}: no answer ({err})") from err


def error_of(method: str, path: str, status: int, reason: str, text: str) -> EmulatorError:
    """The EmulatorError of a failed answer: the emulator's own message when it sent its JSON error body."""
    body: Optional[Dict[str, Any]] = None
    try:
        parsed = json.loads(text)
        if isinstance(parsed, dict) and isinstance(parsed.get("message"), str):
            body = parsed
    except ValueError:
        # Not the emulator's JSON error (a proxy's page, say): the text itself is the message.
        pass
    message = body["message"] if body is not None else (text[:500] or reason)
    return EmulatorError(status, f"{method} {path}: {status} {message}", body)


def request_json(
    method: str,
    url: str,
    path: str,
    headers: Mapping[str, str],
    body: Optional[bytes],
    timeout: Optional[float],
) -> Any:
    """One call: its JSON answer (None for 204 or an empty body), or an EmulatorError."""
    opened = open_response(method, url, headers, body, timeout)
    res = opened.response
    try:
        try:
            raw = res.read()
        except (OSError, http.client.HTTPException) as err:
            raise EmulatorError(0, f"{method} {url}: the answer broke off ({err})") from err
    finally:
        opened.close()
    text = raw.decode("utf-8", errors="replace")
    if res.status >= 400:
        raise error_of(method, path, res.status, res.reason, text)
    if res.status == 204 or text == "":
        return None
    try:
        return json.loads(text)
    except ValueError as err:
        raise EmulatorError(res.status, f"{method} {path}: the answer is not JSON: {text[:200]}") from err
