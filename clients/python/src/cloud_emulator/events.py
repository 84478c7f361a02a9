"""The event stream (GET /_emulator/events) as an iterator of parsed events."""

from __future__ import annotations

import json
import queue
import re
import threading
from typing import Any, Callable, Dict, Iterator, Optional, Union

from ._transport import Opened
from .errors import EmulatorError
from .types import Event

#: Opens the stream, resuming after an event id when given.
Opener = Callable[[Optional[int]], Opened]

#: The comment the emulator opens a stream with: `: events of <world>, last id <n>`.
_OPENING = re.compile(r"^: events of .*, last id (\d+)$")


class _End:
    """Put in the queue once no event will come."""


_END = _End()


class EventStream(Iterator[Event]):
    """An open ``GET /_emulator/events`` stream; made by :meth:`EmulatorClient.subscribe`.

    Iterating it yields each event's data, parsed, as it comes, and stops when the emulator
    ends the stream (it closes, or the sandbox is deleted). :meth:`get` waits at most a given
    time. The stream is open from the moment it is made, and read as events come (by a thread
    of its own): an event that happens after that is delivered, however late it is asked for.
    When the connection breaks, the stream is opened again at once with ``Last-Event-ID``, so
    the events the emulator still holds are not lost; a ``stream.reset`` event says that some
    were. Close it (or use it in a ``with`` block) when done.
    """

    def __init__(self, opener: Opener, *, reconnects: int = 3, last_event_id: Optional[int] = None) -> None:
        self._opener = opener
        self._reconnects = reconnects
        #: The id of the last event handed out (None before the first).
        self.last_event_id: Optional[int] = last_event_id
        # The id a resume starts after: the last event read off the connection, or the world's last id when it opened.
        self._resume_after: Optional[int] = last_event_id
        self._queue: "queue.Queue[Union[Event, EmulatorError, _End]]" = queue.Queue()
        self._lock = threading.Lock()
        # Set by close(): ends a pause between two attempts to open the stream again.
        self._stop = threading.Event()
        self._closed = False
        self._ended = False
        # Opened here, so that a refusal (a bad filter, too many streams) is raised to the caller.
        self._opened: Optional[Opened] = opener(last_event_id)
        self._thread = threading.Thread(target=self._run, name="cloud-emulator-events", daemon=True)
        self._thread.start()

    @property
    def ended(self) -> bool:
        """Whether no event will come: the emulator ended the stream, it broke for good, or it was closed."""
        return self._ended or self._closed

    def close(self) -> None:
        """Closes the connection; iterating stops."""
        with self._lock:
            self._closed = True
            opened = self._opened
        self._stop.set()
        # The reader, woken, closes the rest.
        if opened is not None:
            opened.shutdown()

    def __enter__(self) -> "EventStream":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __iter__(self) -> "EventStream":
        return self

    def __next__(self) -> Event:
        event = self.get(None)
        if event is None:
            raise StopIteration
        return event

    def get(self, timeout: Optional[float] = None) -> Optional[Event]:
        """The next event; None when ``timeout`` seconds pass without one, or when no event will come (see :attr:`ended`).

        Raises :class:`EmulatorError` (status 0) when the stream broke and could not be opened again.
        """
        if self._ended or self._closed:
            return None
        try:
            item = self._queue.get(timeout=timeout)
        except queue.Empty:
            return None
        if isinstance(item, _End):
            self._ended = True
            return None
        if isinstance(item, EmulatorError):
            self._ended = True
            raise item
        if isinstance(item.get("id"), int):
            self.last_event_id = item["id"]
        return item

    # ---- the reader -----------------------------------------------------------------------

    def _run(self) -> None:
        failures = 0
        buffer = b""
        while True:
            with self._lock:
                opened = self._opened
            if opened is None:
                # A pause before opening again, longer after each failure in a row (0.1 s, 0.4 s, 0.9 s).
                if self._closed or self._stop.wait(0.1 * failures * failures):
                    break
                try:
                    fresh = self._opener(self._resume_after)
                except EmulatorError as err:
                    failures += 1
                    if failures > self._reconnects:
                        self._queue.put(err)
                        break
                    continue
                with self._lock:
                    if self._closed:
                        fresh.close()
                        break
                    self._opened = opened = fresh
                buffer = b""
            try:
                chunk = opened.response.read1(65536)
            except Exception as err:  # noqa: BLE001 - whatever broke the read, the stream is opened again
                if self._closed:
                    break
                # Broken: open again after the last event read.
                with self._lock:
                    self._opened = None
                opened.close()
                failures += 1
                if failures > self._reconnects:
                    self._queue.put(EmulatorError(0, f"GET /events: the stream broke ({err})"))
                    break
                continue
            if chunk == b"":
                # The emulator ended the stream: it closed, or the sandbox was deleted.
                break
            failures = 0
            try:
                buffer = self._frames(buffer + chunk)
            except ValueError as err:
                self._queue.put(EmulatorError(0, f"GET /events: an event that is not JSON ({err})"))
                break
        with self._lock:
            opened, self._opened = self._opened, None
        if opened is not None:
            opened.close()
        self._queue.put(_END)

    def _frames(self, buffer: bytes) -> bytes:
        """Queues the events of the whole frames in ``buffer``; answers what is left of it."""
        while True:
            end = buffer.find(b"\n\n")
            if end < 0:
                return buffer
            frame, buffer = buffer[:end], buffer[end + 2 :]
            # One `data` line per event; `id` and `event` repeat what it holds; comments (heartbeats) start with ':'.
            for line in frame.decode("utf-8").split("\n"):
                if line.startswith("data: "):
                    data: Dict[str, Any] = json.loads(line[6:])
                    if isinstance(data.get("id"), int):
                        self._resume_after = data["id"]
                    self._queue.put(data)  # type: ignore[arg-type]
                elif self._resume_after is None:
                    opening = _OPENING.match(line)
                    if opening:
                        self._resume_after = int(opening.group(1))
