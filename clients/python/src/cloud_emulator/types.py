"""The shapes of the control API's answers that tests read most, as TypedDicts.

They follow the schemas the emulator validates with (docs/control-api.md); an answer is a
plain ``dict`` at run time. Answers not typed here (the state export, compositions, alerts'
history...) are ``Dict[str, Any]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Literal, Optional, TypedDict, Union

#: A resource with a lifecycle, as the control API's lifecycle routes name it.
ResourceKind = Literal["grid", "cloudServer", "rsdb", "environment"]
#: A resource with a lifecycle, as the event stream names it (``instance``: a composition instance).
LifecycleKind = Literal["grid", "server", "rsdb", "environment", "instance"]
#: ``keep`` or ``real``: what a reset or an import does with the clock.
ClockMode = Literal["keep", "real"]

JSON = Dict[str, Any]


class ClockStatus(TypedDict, total=False):
    now: int
    iso: str
    scale: float
    frozen: bool
    nextTransitionAt: int


class AdvanceResult(ClockStatus, total=False):
    advancedMs: int


class Health(TypedDict, total=False):
    status: str
    now: int
    uptimeSeconds: float
    clock: ClockStatus
    counts: Dict[str, int]
    faultRules: int
    stateFile: str
    persistence: JSON
    seed: JSON


class ResetResult(TypedDict):
    status: str
    clock: ClockStatus
    counts: Dict[str, int]


class ReplaceResult(TypedDict):
    status: str
    counts: Dict[str, int]


class Step(TypedDict):
    state: str
    at: int


class NextStartInfo(TypedDict):
    outcome: str
    once: bool


class CurrentStart(TypedDict):
    outcome: str
    startedAt: int


class ResourceLifecycle(TypedDict, total=False):
    kind: str
    id: int
    name: str
    state: str
    isFinal: bool
    since: int
    next: Step
    settlesAt: int
    nextStart: NextStartInfo
    currentStart: CurrentStart
    skips: List[str]


class NextStart(TypedDict):
    kind: str
    id: int
    outcome: Optional[str]


class FaultRule(TypedDict, total=False):
    id: str
    method: str
    path: str
    header: JSON
    action: JSON
    times: int
    remaining: int
    untilMs: int
    expiresAt: int
    probability: float
    seed: int
    scope: str
    createdAt: int
    matched: int
    fired: int
    active: bool


class JournalRecord(TypedDict, total=False):
    sandbox: str
    id: int
    time: int
    method: str
    path: str
    query: str
    headers: Dict[str, Union[str, List[str]]]
    body: str
    bodyCut: bool
    bodyDropped: str
    headersCut: bool
    status: int
    responseSize: int
    durationMs: float
    faulted: List[str]


class JournalList(TypedDict, total=False):
    size: int
    total: int
    entries: List[JournalRecord]
    next: int


class SandboxInfo(TypedDict):
    name: str
    createdAt: int
    lastUsedAt: int
    counts: Dict[str, int]


class SandboxList(TypedDict):
    sandboxes: List[SandboxInfo]
    max: int
    mode: str


class Event(TypedDict, total=False):
    """One event of the stream: its ``data``, parsed (see docs/control-api.md#events)."""

    id: int
    type: str
    at: int
    kind: str
    resourceId: Union[int, str]
    state: str
    view: Any
    entry: JSON
    viewOmitted: bool
    #: ``stream.reset``: the world's last event id.
    lastId: int
    #: ``clock.changed``: the clock's scale, and whether it is frozen.
    rate: float
    frozen: bool


@dataclass(frozen=True)
class Reached:
    """What :meth:`EmulatorClient.wait_for` found: the state, since when (emulated epoch ms, when known), and the resource's view when known."""

    state: str
    at: Optional[int] = None
    view: Any = None
