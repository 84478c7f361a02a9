"""The event stream and wait_for: no sleep anywhere; time moves by the emulator's clock, and
every wait ends on an event."""

from __future__ import annotations

import socket
from typing import List

import pytest

from cloud_emulator import EmulatorClient, EmulatorError, Event

GRID_START = ["ALLOCATING", "ALLOCATED", "CHECKING", "CHECKED"]


def test_wait_for_reaches_checked_on_a_fast_clock(emulator: EmulatorClient, service) -> None:
    # A thousand emulated ms per real ms: the grid's 12 s start takes about 12 ms of real time.
    emulator.set_clock(scale=1000, frozen=False)
    service.start_grid(101)
    reached = emulator.wait_for("grid", 101, "CHECKED", timeout=30)
    assert reached.state == "CHECKED"
    assert reached.at is not None
    assert service.grid_state(101) == "CHECKED"


def test_wait_for_answers_at_once_a_state_already_reached(emulator: EmulatorClient) -> None:
    emulator.freeze()
    reached = emulator.wait_for("grid", 101, ["LOADED", "CHECKED"], timeout=5)
    assert reached.state == "LOADED"
    assert reached.at == emulator.lifecycle("grid", 101)["since"]


def test_wait_for_gives_up_after_its_timeout(emulator: EmulatorClient, service) -> None:
    # A frozen clock: the start stays ALLOCATING, and the wait ends on its timeout.
    emulator.freeze()
    service.start_grid(101)
    with pytest.raises(EmulatorError) as waited:
        emulator.wait_for("grid", 101, "CHECKED", timeout=0.3)
    assert waited.value.status == 0
    assert "grid 101 to be CHECKED" in waited.value.message


def test_wait_for_an_event_that_matches(emulator: EmulatorClient, service) -> None:
    emulator.freeze()
    service.start_grid(101)
    advanced = []

    def ready() -> bool:
        # Called once the stream is open: what happens from here on is seen.
        advanced.append(emulator.advance_until_settled("grid", 101))
        return False

    event = emulator.wait_for(
        match=lambda e: e.get("state") == "CHECKED",
        kind="grid",
        id=101,
        types="transition",
        ready=ready,
        timeout=30,
    )
    assert event is not None and event["resourceId"] == 101 and event["view"]["state"] == "CHECKED"
    assert event["at"] == advanced[0]["now"]
    # ready() answering true: nothing to wait for.
    assert emulator.wait_for(match=lambda e: False, ready=lambda: True, timeout=5) is None


def test_subscribe_sees_every_step_in_order(emulator: EmulatorClient, service) -> None:
    emulator.freeze()
    with emulator.subscribe(kind="grid", id=101, types="transition") as stream:
        service.start_grid(101)
        emulator.advance_until_settled("grid", 101)
        states = []
        for event in stream:
            states.append(event["state"])
            if event["state"] == "CHECKED":
                break
    assert states == GRID_START


def test_a_broken_stream_resumes_after_the_last_event_read(emulator: EmulatorClient, service) -> None:
    emulator.freeze()
    with emulator.subscribe(kind="grid", id=101, types="transition") as stream:
        service.start_grid(101)
        first = stream.get(timeout=30)
        assert first is not None and first["state"] == "ALLOCATING"
        # The connection breaks under the reader; the steps taken meanwhile are not lost.
        stream._opened.sock.shutdown(socket.SHUT_RDWR)  # type: ignore[union-attr]
        emulator.advance_until_settled("grid", 101)
        rest: List[Event] = []
        while not rest or rest[-1]["state"] != "CHECKED":
            event = stream.get(timeout=30)
            assert event is not None, f"no event after {rest}"
            rest.append(event)
    assert [e["state"] for e in rest] == GRID_START[1:]
    # Each once, in order (other events of the world, filtered out, have ids in between).
    ids = [first["id"], *(e["id"] for e in rest)]
    assert ids == sorted(set(ids))


def test_get_times_out_then_goes_on(emulator: EmulatorClient, service) -> None:
    emulator.freeze()
    with emulator.subscribe(kind="grid", id=101) as stream:
        assert stream.get(timeout=0.2) is None
        assert not stream.ended
        service.start_grid(101)
        event = stream.get(timeout=30)
        assert event is not None and event["type"] == "transition" and event["state"] == "ALLOCATING"


def test_events_generator_resumes_from_an_id(emulator: EmulatorClient, service) -> None:
    emulator.freeze()
    # While this stream is open, the world records its events; a later reader resumes from any of them.
    with emulator.subscribe(kind="grid", id=101, types="transition") as stream:
        service.start_grid(101)
        first = stream.get(timeout=30)
        assert first is not None
        emulator.advance_until_settled("grid", 101)
        states = []
        for event in emulator.events(kind="grid", id=101, types="transition", last_event_id=first["id"], timeout=30):
            states.append(event["state"])
            if event["state"] == "CHECKED":
                break
    assert states == GRID_START[1:]


def test_a_bad_filter_is_an_error(emulator: EmulatorClient) -> None:
    with pytest.raises(EmulatorError) as bad:
        emulator.subscribe(kind="gird")
    assert bad.value.status == 400 and "unknown kind 'gird'" in bad.value.message


def test_wait_for_an_alert_by_its_uid(emulator: EmulatorClient, service) -> None:
    def fire() -> bool:
        # After the stream opened: another alert's fire, then this one's.
        assert service.call("POST", "/concerto/mpulse/api/alerts/5f0c7a2e-9d41-4b7a-8c3e-1a2b3c4d5e6f/fire", {"message": "other"})[0] == 204
        assert service.call("POST", "/concerto/mpulse/api/alerts/demo-alert/fire", {"message": "Checkout is down"})[0] == 204
        return False

    fired = emulator.wait_for(match=lambda e: e["type"] == "alert.fired", kind="alert", id="demo-alert", ready=fire, timeout=30)
    assert fired is not None and fired["resourceId"] == "demo-alert" and fired["entry"]["message"] == "Checkout is down"
    # Fired already: the check made once the stream is open answers, and nothing is awaited.
    assert emulator.wait_for(match=lambda e: False, kind="alert", id="demo-alert", ready=lambda: emulator.alert("demo-alert")["state"] == "firing", timeout=5) is None


def test_the_stream_ends_when_its_sandbox_is_deleted(emulator: EmulatorClient) -> None:
    name = f"{emulator.sandbox_name}-gone"
    doomed = emulator.create_sandbox(name)
    with doomed.subscribe() as stream:
        emulator.delete_sandbox(name)
        # No reconnection (which would make the sandbox again): the iteration just ends.
        assert list(stream) == []
        assert stream.ended
    assert name not in [s["name"] for s in emulator.sandboxes()["sandboxes"]]
