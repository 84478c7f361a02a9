"""Python client of the cloud emulator's control API, with its event stream and a pytest plugin.

    from cloud_emulator import EmulatorClient

    emu = EmulatorClient("http://localhost:8080")
    emu.reset()
    emu.wait_for("grid", 101, "CHECKED", timeout=5)
"""

from __future__ import annotations

from .client import PATHS, EmulatorClient, Urls
from .errors import EmulatorError
from .events import EventStream
from .types import (
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

__version__ = "0.1.0"

__all__ = [
    "PATHS",
    "AdvanceResult",
    "ClockMode",
    "ClockStatus",
    "EmulatorClient",
    "EmulatorError",
    "Event",
    "EventStream",
    "FaultRule",
    "Health",
    "JournalList",
    "JournalRecord",
    "LifecycleKind",
    "NextStart",
    "Reached",
    "ReplaceResult",
    "ResetResult",
    "ResourceKind",
    "ResourceLifecycle",
    "SandboxInfo",
    "SandboxList",
    "Urls",
]
