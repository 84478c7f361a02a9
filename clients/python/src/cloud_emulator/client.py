"""A typed client of the emulator's control API (/_emulator), standard library only.

    emu = EmulatorClient("http://localhost:8080", admin_token=os.environ.get("ADMIN_TOKEN"))
    emu.reset()
    emu.advance(60_000)
    assert emu.count_requests(method="POST", path="/concerto/mpulse/api/annotations/*") == 1

It mirrors the TypeScript client (``cloud-emulator/client``): one method per control call,
with Python names; every failed call raises :class:`EmulatorError`.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import datetime
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Literal,
    Mapping,
    Optional,
    Sequence,
    Union,
    overload,
)
from urllib.parse import quote, urlencode

from . import _transport
from .errors import EmulatorError
from .events import EventStream
from .types import (
    JSON,
    AdvanceResult,
    ClockMode,
    ClockStatus,
    Event,
    FaultRule,
    Health,
    JournalList,
    JournalRecord,
    LifecycleKind,
    NextStart,
    Reached,
    ReplaceResult,
    ResetResult,
    ResourceKind,
    ResourceLifecycle,
    SandboxInfo,
    SandboxList,
)

#: The base path of each interface and of the control API, as the server's path table has them.
PATHS: Dict[str, str] = {
    "provisioning": "/concerto/services/rest/CloudService/v1",
    "repository": "/concerto/services/rest/RepositoryService/v1",
    "annotations": "/concerto/mpulse/api/annotations/v1",
    "alerts": "/concerto/mpulse/api/alerts",
    "compositions": "/concerto/services/rest/composition/instances/v1",
    "results": "/concerto/services/rest/Results/v1",
    "query": "/concerto/mpulse/api/v2",
    "control": "/_emulator",
    "concerto": "/concerto",
    "downloads": "/concerto/downloads",
}

#: The control API's name of each lifecycle kind of the event stream (GET /_emulator/lifecycles/<kind>/<id>).
_LIFECYCLE_ROUTE: Dict[str, str] = {"grid": "grid", "server": "cloudServer", "rsdb": "rsdb", "environment": "environment"}

#: Events after which a waited-for resource's state is read again: the world changed under the stream, or events were missed.
_READ_AGAIN = {"world.reset", "world.imported", "world.reloaded", "stream.reset"}

Scalar = Union[str, int]
OneOrMany = Union[str, Sequence[str], None]


@dataclass(frozen=True)
class Urls:
    """Base URLs of the interfaces, for configuring the system under test (a sandbox's, for a bound client)."""

    provisioning: str
    repository: str
    annotations: str
    alerts: str
    compositions: str
    results: str
    query: str
    control: str
    concerto: str
    downloads: str
    #: The mPulse root (``/concerto/mpulse``).
    rum: str


def _segment(value: Scalar) -> str:
    """One path segment, escaped."""
    return quote(str(value), safe="")


def _list_param(value: Union[Scalar, Iterable[Scalar], None]) -> Optional[str]:
    if value is None:
        return None
    if isinstance(value, (str, int)):
        return str(value)
    return ",".join(str(v) for v in value)


def _drop_none(fields: Mapping[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


class EmulatorClient:
    """A client of one emulator, optionally bound to one of its sandboxes.

    ``base_url`` is where the emulator runs (``http://localhost:8080``); ``admin_token`` its
    ``ADMIN_TOKEN``, sent as ``Authorization: Bearer`` on every call; ``sandbox`` binds the
    client to ``/sandbox/<name>``; ``headers`` are added to every call; ``timeout`` bounds
    each call (seconds; not the event stream, whose waits have their own).
    """

    def __init__(
        self,
        base_url: str,
        *,
        admin_token: Optional[str] = None,
        sandbox: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
        timeout: float = 30.0,
    ) -> None:
        #: Base URL of the emulator itself, without a sandbox.
        self.root_url: str = base_url.rstrip("/")
        #: The sandbox this client is bound to, if any.
        self.sandbox_name: Optional[str] = sandbox
        #: Base URL this client works on: the root URL, or the sandbox's under it.
        self.url: str = self.root_url if sandbox is None else f"{self.root_url}/sandbox/{_segment(sandbox)}"
        self.admin_token = admin_token
        self.headers: Dict[str, str] = dict(headers or {})
        self.timeout = timeout

    def __repr__(self) -> str:
        bound = "" if self.sandbox_name is None else f", sandbox={self.sandbox_name!r}"
        return f"EmulatorClient({self.root_url!r}{bound})"

    @property
    def urls(self) -> Urls:
        """Base URLs of the interfaces (and of the control API), under this client's sandbox if bound."""
        return Urls(**{name: f"{self.url}{path}" for name, path in PATHS.items()}, rum=f"{self.url}/concerto/mpulse")

    def sandbox(self, name: str) -> "EmulatorClient":
        """A client of the same emulator, bound to the sandbox ``name``."""
        return EmulatorClient(self.root_url, admin_token=self.admin_token, sandbox=name, headers=self.headers, timeout=self.timeout)

    # ---- health, reset, state -----------------------------------------------------------

    def health(self) -> Health:
        return self._call("GET", "/health")  # type: ignore[no-any-return]

    def reset(self, clock: Optional[ClockMode] = None) -> ResetResult:
        """Back to the seed: stores, tokens, clock settings, faults and journal (``clock="real"``: and to real time)."""
        return self._call("POST", "/reset", query={"clock": clock})  # type: ignore[no-any-return]

    def export_state(self) -> JSON:
        """The whole state, in the fixture format."""
        return self._call("GET", "/state")  # type: ignore[no-any-return]

    def import_state(self, state: Mapping[str, Any], clock: Optional[ClockMode] = None) -> ReplaceResult:
        """Replaces the whole state; refused (EmulatorError 400) when invalid, and the old state kept."""
        return self._call("PUT", "/state", body=state, query={"clock": clock})  # type: ignore[no-any-return]

    # ---- clock --------------------------------------------------------------------------

    def clock(self) -> ClockStatus:
        return self._call("GET", "/clock")  # type: ignore[no-any-return]

    def advance(self, ms: int) -> AdvanceResult:
        """Moves emulated time forward by ``ms``; every lifecycle follows at once."""
        return self.advance_by(ms=ms)

    def advance_to(self, instant: Union[int, str, datetime]) -> AdvanceResult:
        """Moves emulated time to an instant (epoch ms, ISO 8601 text or an aware datetime)."""
        to: Union[int, str] = round(instant.timestamp() * 1000) if isinstance(instant, datetime) else instant
        return self.advance_by(to=to)

    def advance_to_next(self) -> AdvanceResult:
        """Moves emulated time to the next lifecycle transition (``advancedMs`` 0 when none is scheduled)."""
        return self.advance_by(to="next")

    def advance_until_settled(self, kind: Union[ResourceKind, Literal["compositionInstance"]], id: Scalar) -> AdvanceResult:
        """Moves emulated time until a resource's lifecycle has settled (``compositionInstance``: ``id`` its instanceID)."""
        return self.advance_by(until={"kind": kind, "id": id})

    def advance_by(
        self,
        *,
        ms: Optional[int] = None,
        to: Union[int, str, None] = None,
        until: Optional[Mapping[str, Any]] = None,
    ) -> AdvanceResult:
        """The raw advance call: exactly one of ``ms``, ``to``, ``until``."""
        return self._call("POST", "/clock/advance", body=_drop_none({"ms": ms, "to": to, "until": until}))  # type: ignore[no-any-return]

    def set_clock(self, *, scale: Optional[float] = None, frozen: Optional[bool] = None) -> ClockStatus:
        """Changes the clock's scale and/or freezes it."""
        return self._call("PUT", "/clock", body=_drop_none({"scale": scale, "frozen": frozen}))  # type: ignore[no-any-return]

    def set_scale(self, scale: float) -> ClockStatus:
        """Emulated ms per real ms: 1 real time, 60 a minute per second, 0 stopped."""
        return self.set_clock(scale=scale)

    def freeze(self) -> ClockStatus:
        return self.set_clock(frozen=True)

    def unfreeze(self) -> ClockStatus:
        return self.set_clock(frozen=False)

    # ---- timeline ------------------------------------------------------------------

    def get_timeline(self) -> Dict[str, Any]:
        """The world's timeline: its steps (each done or not), offsetMs, next, lengthMs, recording."""
        return self._call("GET", "/timeline")  # type: ignore[no-any-return]

    def set_timeline(self, steps: Sequence[Mapping[str, Any]]) -> Dict[str, Any]:
        """Replaces the timeline with these steps ({"at": "+30s", "name"?, "request": {...}}); it starts now."""
        return self._call("PUT", "/timeline", body={"steps": list(steps)})  # type: ignore[no-any-return]

    def seek_timeline(self, to: Union[str, int]) -> Dict[str, Any]:
        """The world as playing the timeline from its start to ``to`` ("+4m", or ms) makes it."""
        return self._call("POST", "/timeline/seek", body={"to": to})  # type: ignore[no-any-return]

    def record_timeline(self, on: bool) -> Dict[str, Any]:
        """Records what is done from now on as steps (True), or stops (False)."""
        return self._call("POST", "/timeline/record", body={"on": on})  # type: ignore[no-any-return]

    def export_timeline(self) -> Dict[str, Any]:
        """The timeline as a fixture file ({"timeline": {"steps": [...]}})."""
        return self._call("GET", "/timeline/fixture")  # type: ignore[no-any-return]

    # ---- users -------------------------------------------------------------------------

    def users(self) -> JSON:
        """Whom a client can sign in as in this world: its users (with passwords) and its seed's tokens that never expire."""
        return self._call("GET", "/users")  # type: ignore[no-any-return]

    # ---- lifecycle scenarios ------------------------------------------------------------

    def lifecycles(self) -> JSON:
        """The lifecycle tables, default durations, and every resource's position."""
        return self._call("GET", "/lifecycles")  # type: ignore[no-any-return]

    def lifecycle(self, kind: ResourceKind, id: int) -> ResourceLifecycle:
        return self._call("GET", f"/lifecycles/{_segment(kind)}/{_segment(id)}")  # type: ignore[no-any-return]

    def set_next_start(self, kind: ResourceKind, id: int, outcome: str) -> NextStart:
        """Chooses how the next start of a grid, environment or RSDB ends (e.g. ``ALLOCATE_FAILED``)."""
        return self._call("PUT", f"/lifecycles/{_segment(kind)}/{_segment(id)}/next-start", body={"outcome": outcome})  # type: ignore[no-any-return]

    def clear_next_start(self, kind: ResourceKind, id: int) -> None:
        """Forgets a chosen next-start outcome."""
        self._call("DELETE", f"/lifecycles/{_segment(kind)}/{_segment(id)}/next-start")

    def externally_terminate(self, environment_id: int) -> ResourceLifecycle:
        """A RUNNING test environment becomes EXTERNALLY_TERMINATED now."""
        return self._call("POST", f"/lifecycles/environment/{_segment(environment_id)}/externally-terminate")  # type: ignore[no-any-return]

    def fail_cloud_server(self, id: int) -> ResourceLifecycle:
        """A cloud server becomes FAILED now."""
        return self._call("POST", f"/lifecycles/cloudServer/{_segment(id)}/fail")  # type: ignore[no-any-return]

    # ---- alerts -------------------------------------------------------------------------

    def alerts(self) -> List[JSON]:
        return self._call("GET", "/alerts")  # type: ignore[no-any-return]

    def alert(self, uid: str) -> JSON:
        """One alert, with the history of what each fire and clear carried, and its latest deliveries."""
        return self._call("GET", f"/alerts/{_segment(uid)}")  # type: ignore[no-any-return]

    def set_alert_enabled(self, uid: str, enabled: bool) -> JSON:
        return self._call("PATCH", f"/alerts/{_segment(uid)}", body={"enabled": enabled})  # type: ignore[no-any-return]

    def deliveries(
        self,
        *,
        alert: Optional[str] = None,
        channel: Optional[str] = None,
        status: Optional[str] = None,
        limit: Optional[int] = None,
        before: Optional[int] = None,
    ) -> JSON:
        """One page of the outbox of alert deliveries, newest first; ``next`` in the answer is the ``before`` of the next page."""
        query = {"alert": alert, "channel": channel, "status": status, "limit": limit, "before": before}
        return self._call("GET", "/deliveries", query=query)  # type: ignore[no-any-return]

    # ---- compositions -------------------------------------------------------------------

    def compositions(self) -> List[JSON]:
        """The compositions of the seed: full path, length, virtual users and load servers."""
        return self._call("GET", "/compositions")  # type: ignore[no-any-return]

    def composition_instances(self) -> List[JSON]:
        """Every composition instance not unloaded (and the last unloaded ones), with its result's live counts."""
        return self._call("GET", "/compositions/instances")  # type: ignore[no-any-return]

    def set_next_play(
        self,
        composition_name: str,
        outcome: Optional[str],
        *,
        after_ms: Optional[int] = None,
        error_factor: Optional[float] = None,
        message: Optional[str] = None,
    ) -> JSON:
        """How the next play of a composition ends (``Completed``, ``Failed``, ``Stopped``); ``None``: as its fixture says."""
        body = {"compositionName": composition_name, "outcome": outcome, **_drop_none({"afterMs": after_ms, "errorFactor": error_factor, "message": message})}
        return self._call("PUT", "/compositions/next-play", body=body)  # type: ignore[no-any-return]

    # ---- faults -------------------------------------------------------------------------

    def add_fault(self, rule: Optional[Mapping[str, Any]] = None, **fields: Any) -> FaultRule:
        """Adds a fault rule: ``add_fault({"path": "/concerto/mpulse/*", "action": {"status": 503}, "times": 1})``, or the same fields as keywords."""
        return self._call("POST", "/faults", body={**(rule or {}), **fields})  # type: ignore[no-any-return]

    def faults(self) -> List[FaultRule]:
        return self._call("GET", "/faults")  # type: ignore[no-any-return]

    def fault(self, id: str) -> FaultRule:
        return self._call("GET", f"/faults/{_segment(id)}")  # type: ignore[no-any-return]

    def delete_fault(self, id: str) -> None:
        self._call("DELETE", f"/faults/{_segment(id)}")

    def clear_faults(self) -> None:
        self._call("DELETE", "/faults")

    # ---- incidents (the Query API's data) -------------------------------------------------

    def add_incident(self, incident: Optional[Mapping[str, Any]] = None, **fields: Any) -> JSON:
        """Bends a domain's real-user numbers between two times: ``add_incident(domainId=1, startAgoMs=3_600_000, loadTimeFactor=3)``."""
        return self._call("POST", "/incidents", body={**(incident or {}), **fields})  # type: ignore[no-any-return]

    def incidents(self) -> List[JSON]:
        return self._call("GET", "/incidents")  # type: ignore[no-any-return]

    def delete_incident(self, id: int) -> None:
        self._call("DELETE", f"/incidents/{_segment(id)}")

    def apps(self) -> List[JSON]:
        """The apps of the Query API: each domain with its app key (``domainId``, ``name``, ``apiKey``)."""
        return self._call("GET", "/apps")  # type: ignore[no-any-return]

    # ---- journal ------------------------------------------------------------------------

    def journal(
        self,
        *,
        method: Optional[str] = None,
        path_prefix: Optional[str] = None,
        status: Union[int, str, None] = None,
        limit: Optional[int] = None,
        before: Optional[int] = None,
        include: Optional[str] = None,
    ) -> JournalList:
        """One page of recent requests, newest first; ``next`` in the answer is the ``before`` of the next page."""
        query = {"method": method, "pathPrefix": path_prefix, "status": status, "limit": limit, "before": before, "include": include}
        return self._call("GET", "/journal", query=query)  # type: ignore[no-any-return]

    def clear_journal(self) -> None:
        self._call("DELETE", "/journal")

    def count_requests(
        self,
        *,
        method: Optional[str] = None,
        path: Optional[str] = None,
        query: Optional[Mapping[str, str]] = None,
        header: Optional[Mapping[str, str]] = None,
        body_contains: Optional[str] = None,
        body_json: Any = None,
        status: Union[int, str, None] = None,
        before: Optional[int] = None,
        include: Optional[str] = None,
    ) -> int:
        """How many requests held in the journal match (``path`` a glob: ``*`` any run of characters, ``?`` one).

        Follows the cursor of a count that stops at its work bound, adding the counts up.
        """
        matcher = _matcher(method, path, query, header, body_contains, body_json, status, include)
        total = 0
        while True:
            answer = self._call("POST", "/journal/count", body=_drop_none({**matcher, "before": before}))
            total += int(answer["count"])
            if answer.get("next") is None:
                return total
            before = answer["next"]

    def find_requests(
        self,
        *,
        method: Optional[str] = None,
        path: Optional[str] = None,
        query: Optional[Mapping[str, str]] = None,
        header: Optional[Mapping[str, str]] = None,
        body_contains: Optional[str] = None,
        body_json: Any = None,
        status: Union[int, str, None] = None,
        before: Optional[int] = None,
        include: Optional[str] = None,
        limit: Optional[int] = None,
    ) -> List[JournalRecord]:
        """The requests held that match, newest first, with their headers and bodies (at most ``limit``)."""
        matcher = _matcher(method, path, query, header, body_contains, body_json, status, include)
        found: List[JournalRecord] = []
        while True:
            left = None if limit is None else limit - len(found)
            answer = self._call("POST", "/journal/find", body=_drop_none({**matcher, "limit": left, "before": before}))
            found.extend(answer["entries"])
            if answer.get("next") is None or (limit is not None and len(found) >= limit):
                return found
            before = answer["next"]

    # ---- sandboxes (managed through the emulator's default sandbox) -----------------------

    def sandboxes(self) -> SandboxList:
        return self._call("GET", "/sandboxes", root=True)  # type: ignore[no-any-return]

    def create_sandbox(
        self,
        name: str,
        state: Optional[Mapping[str, Any]] = None,
        clock: Optional[ClockMode] = None,
    ) -> "EmulatorClient":
        """Creates (or replaces) the sandbox ``name``, seeded like the emulator or from ``state``, and returns a client bound to it."""
        self._call("PUT", f"/sandboxes/{_segment(name)}", body=state, query={"clock": clock}, root=True)
        return self.sandbox(name)

    def get_sandbox(self, name: str) -> SandboxInfo:
        return self._call("GET", f"/sandboxes/{_segment(name)}", root=True)  # type: ignore[no-any-return]

    def delete_sandbox(self, name: str) -> None:
        self._call("DELETE", f"/sandboxes/{_segment(name)}", root=True)

    # ---- events --------------------------------------------------------------------------

    def subscribe(
        self,
        *,
        kind: OneOrMany = None,
        id: Union[Scalar, Iterable[Scalar], None] = None,
        types: OneOrMany = None,
        last_event_id: Optional[int] = None,
        reconnects: int = 3,
    ) -> EventStream:
        """Opens ``GET /_emulator/events`` now, with its filters, and answers the open stream.

        Events that happen from this call on are delivered, however late they are read. A
        broken connection is opened again with ``Last-Event-ID`` (at most ``reconnects``
        times in a row). Close it, or use it in a ``with`` block.
        """
        query = {"kind": _list_param(kind), "id": _list_param(id), "types": _list_param(types)}

        def opener(after: Optional[int]) -> _transport.Opened:
            return self._open_stream(query, after)

        return EventStream(opener, reconnects=reconnects, last_event_id=last_event_id)

    def events(
        self,
        *,
        kind: OneOrMany = None,
        id: Union[Scalar, Iterable[Scalar], None] = None,
        types: OneOrMany = None,
        last_event_id: Optional[int] = None,
        timeout: Optional[float] = None,
    ) -> Iterator[Event]:
        """The world's changes as they happen, parsed: a generator over the event stream.

            for event in emu.events(kind="grid", types="transition", timeout=10):
                print(event["state"])

        The stream opens at the first ``next()``. It ends when the emulator ends the stream, or
        once ``timeout`` seconds (real time) have passed; closing the generator closes the
        stream. A ``stream.reset`` event says that events were missed.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self.subscribe(kind=kind, id=id, types=types, last_event_id=last_event_id) as stream:
            while True:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return
                event = stream.get(left)
                if event is None:
                    return
                yield event

    @overload
    def wait_for(
        self,
        kind: LifecycleKind,
        id: Scalar,
        state: Union[str, Iterable[str]],
        *,
        timeout: float = 30.0,
    ) -> Reached: ...

    @overload
    def wait_for(
        self,
        *,
        match: Callable[[Event], bool],
        kind: OneOrMany = None,
        id: Union[Scalar, Iterable[Scalar], None] = None,
        types: OneOrMany = None,
        ready: Optional[Callable[[], bool]] = None,
        timeout: float = 30.0,
    ) -> Optional[Event]: ...

    def wait_for(
        self,
        kind: Any = None,
        id: Any = None,
        state: Union[str, Iterable[str], None] = None,
        *,
        match: Optional[Callable[[Event], bool]] = None,
        types: OneOrMany = None,
        ready: Optional[Callable[[], bool]] = None,
        timeout: float = 30.0,
    ) -> Union[Reached, Optional[Event]]:
        """Returns once something has happened, without polling: one stream, read as events come.

        A resource reaching a state (a grid, server, RSDB, environment, or a composition
        instance by its instanceID), at once when it already is::

            emu.wait_for("grid", 101, "CHECKED", timeout=5)        # -> Reached(state, at, view)
            emu.wait_for("grid", 101, ["CHECKED", "ALLOCATE_FAILED"])

        The stream opens first, then the state is read once, so a transition in between is
        not missed; the state is read again after a reset, an import or missed events.

        Or the first event that ``match`` accepts, with the stream's filters; ``ready``, when
        given, is called once the stream is open, and when it answers true nothing is awaited
        (the call returns None)::

            emu.wait_for(match=lambda e: e["type"] == "alert.fired", kind="alert")

        Raises :class:`EmulatorError` with status 0 after ``timeout`` seconds of real time, or
        when the emulator ends the stream first.
        """
        deadline = time.monotonic() + timeout
        if match is not None:
            if state is not None:
                raise TypeError("wait_for: give either a state or match, not both")
            return self._wait_for_event(match, kind, id, types, ready, deadline, timeout)
        if kind is None or id is None or state is None:
            raise TypeError("wait_for: give kind, id and state (or match=)")
        wanted = {state} if isinstance(state, str) else set(state)
        key = str(id)
        describe = f"{kind} {key} to be {' or '.join(sorted(wanted))}"
        with self.subscribe(kind=kind, id=key) as stream:
            now = self._current_state(kind, key)
            if now.state in wanted:
                return now
            while True:
                event = stream.get(max(deadline - time.monotonic(), 0))
                if event is None:
                    raise self._wait_error(stream, describe, timeout)
                if event.get("type") == "transition" and event.get("state") in wanted:
                    return Reached(state=event["state"], at=event.get("at"), view=event.get("view"))
                if event.get("type") in _READ_AGAIN:
                    read = self._current_state(kind, key)
                    if read.state in wanted:
                        return read

    def _wait_for_event(
        self,
        match: Callable[[Event], bool],
        kind: OneOrMany,
        id: Union[Scalar, Iterable[Scalar], None],
        types: OneOrMany,
        ready: Optional[Callable[[], bool]],
        deadline: float,
        timeout: float,
    ) -> Optional[Event]:
        with self.subscribe(kind=kind, id=id, types=types) as stream:
            if ready is not None and ready():
                return None
            while True:
                event = stream.get(max(deadline - time.monotonic(), 0))
                if event is None:
                    raise self._wait_error(stream, "an event that matches", timeout)
                if match(event):
                    return event

    @staticmethod
    def _wait_error(stream: EventStream, describe: str, timeout: float) -> EmulatorError:
        if stream.ended:
            return EmulatorError(0, f"the event stream ended while waiting for {describe}")
        return EmulatorError(0, f"waited {timeout:g} s for {describe}")

    def _current_state(self, kind: str, id: str) -> Reached:
        """A resource's state now, from the control API (one read)."""
        if kind == "instance":
            for instance in self.composition_instances():
                if instance.get("instanceID") == id:
                    return Reached(state=instance["state"], view=instance)
            raise EmulatorError(404, f"no composition instance '{id}'")
        route = _LIFECYCLE_ROUTE.get(kind)
        if route is None:
            raise ValueError(f"wait_for: kind must be one of grid, server, rsdb, environment, instance (got {kind!r})")
        position = self._call("GET", f"/lifecycles/{route}/{_segment(id)}")
        return Reached(state=position["state"], at=position.get("since"))

    # ---- the one way out ----------------------------------------------------------------

    def _url_of(self, path: str, query: Optional[Mapping[str, Any]] = None, root: bool = False) -> str:
        url = f"{self.root_url if root else self.url}{PATHS['control']}{path}"
        if query:
            params = {k: ("true" if v is True else "false" if v is False else str(v)) for k, v in query.items() if v is not None}
            if params:
                url += "?" + urlencode(params)
        return url

    def _headers(self, accept: str, has_body: bool) -> Dict[str, str]:
        headers = {"Accept": accept, **self.headers}
        if self.admin_token is not None:
            headers["Authorization"] = f"Bearer {self.admin_token}"
        if has_body:
            headers["Content-Type"] = "application/json"
        return headers

    def _call(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        query: Optional[Mapping[str, Any]] = None,
        root: bool = False,
    ) -> Any:
        url = self._url_of(path, query, root)
        data = None if body is None else json.dumps(body).encode("utf-8")
        return _transport.request_json(method, url, path, self._headers("application/json", data is not None), data, self.timeout)

    def _open_stream(self, query: Mapping[str, Any], after: Optional[int]) -> _transport.Opened:
        return self._stream("GET", "/events", query=query, after=after)

    def _stream(self, method: str, path: str, *, query: Mapping[str, Any], after: Optional[int]) -> _transport.Opened:
        """Opens an event stream: the response once its status is known to be good, its body not yet read."""
        url = self._url_of(path, query)
        headers = self._headers("text/event-stream", False)
        if after is not None:
            headers["Last-Event-ID"] = str(after)
        opened = _transport.open_response(method, url, headers, None, self.timeout)
        res = opened.response
        if res.status >= 400:
            try:
                text = res.read().decode("utf-8", errors="replace")
            finally:
                opened.close()
            raise _transport.error_of(method, path, res.status, res.reason, text)
        return opened


def _matcher(
    method: Optional[str],
    path: Optional[str],
    query: Optional[Mapping[str, str]],
    header: Optional[Mapping[str, str]],
    body_contains: Optional[str],
    body_json: Any,
    status: Union[int, str, None],
    include: Optional[str],
) -> Dict[str, Any]:
    """A journal matcher in the control API's names."""
    return _drop_none(
        {
            "method": method,
            "path": path,
            "query": query,
            "header": header,
            "bodyContains": body_contains,
            "bodyJson": body_json,
            "status": status,
            "include": include,
        }
    )
