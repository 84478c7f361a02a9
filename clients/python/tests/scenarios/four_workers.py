"""One scenario that four xdist workers run at once, each in its own sandbox (the plugin's
``emulator`` fixture): choose how grid 101's next start ends, start it on a fast clock, wait
for the settled state. Each worker chooses a different outcome, so a worker that saw another's
choice, clock or start would end in the wrong state. test_plugin.py runs this file with
``-n 4`` (four tests: one per worker); it is not collected by the package's own run.
"""

from __future__ import annotations

import json
import urllib.request

import pytest

from cloud_emulator import EmulatorClient

OUTCOMES = ["ALLOCATE_FAILED", "CHECKED_WITH_FAILURES", "ALLOCATED_WITH_FAILURES", "CHECKED"]
GRID = "/concerto/services/rest/CloudService/v1/grid/101"


def call(url: str, method: str = "GET", body: object = None) -> dict:
    data = None if body is None else json.dumps(body).encode()
    headers = {"X-Auth-Token": "demo-token", **({"Content-Type": "application/json"} if data else {})}
    with urllib.request.urlopen(urllib.request.Request(url, data=data, method=method, headers=headers), timeout=30) as res:
        return json.loads(res.read())


@pytest.mark.parametrize("run", range(4))
def test_the_same_scenario_in_every_worker(run: int, emulator: EmulatorClient, emulator_root: EmulatorClient, request: pytest.FixtureRequest) -> None:
    workerinput = request.config.workerinput  # type: ignore[attr-defined]
    index = int(workerinput["workerid"][2:])
    prefix = emulator.sandbox_name.rsplit("-", 1)[0]  # type: ignore[union-attr]
    everyone = {f"{prefix}-gw{i}" for i in range(int(workerinput["workercount"]))}

    # Together: every worker's sandbox exists before any starts its grid (the default world's
    # stream says when one is made; the list is read once the stream is open, and again on each).
    def all_here() -> bool:
        return everyone <= {s["name"] for s in emulator_root.sandboxes()["sandboxes"]}

    emulator_root.wait_for(match=lambda e: all_here(), kind="sandbox", types="sandbox.created", ready=all_here, timeout=60)

    outcome = OUTCOMES[index % len(OUTCOMES)]
    emulator.set_next_start("grid", 101, outcome)
    # A hundred emulated ms per real ms: the start settles within a fraction of a second of real time.
    emulator.set_clock(scale=100, frozen=False)
    assert call(f"{emulator.url}{GRID}/action", "POST", {"action": "start"})["state"] == "ALLOCATING"
    reached = emulator.wait_for("grid", 101, OUTCOMES, timeout=60)

    assert reached.state == outcome
    assert call(f"{emulator.url}{GRID}")["state"] == outcome
    assert emulator.clock()["scale"] == 100
    assert emulator.count_requests(method="POST", path=f"{GRID}/action") == 1
    # The default world saw none of it.
    assert call(f"{emulator_root.url}{GRID}")["state"] == "LOADED"
