"""The control client against the emulator, each test in its worker's sandbox (the plugin's
``emulator`` fixture), on the demo seed."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from cloud_emulator import EmulatorClient, EmulatorError

CLOUD = "/concerto/services/rest/CloudService/v1"


def test_health_reset_and_the_bound_sandbox(emulator: EmulatorClient, emulator_root: EmulatorClient) -> None:
    assert emulator.sandbox_name is not None and emulator.sandbox_name.startswith("pytest-")
    assert emulator.url == f"{emulator.root_url}/sandbox/{emulator.sandbox_name}"
    assert emulator.urls.provisioning == f"{emulator.url}{CLOUD}"
    assert emulator.urls.rum == f"{emulator.url}/concerto/mpulse"
    assert emulator.health()["status"] == "ok"
    reset = emulator.reset()
    assert reset["status"] == "reset" and reset["counts"]["grids"] == 5
    # Sandbox management goes to the default world, whichever sandbox the client is bound to.
    names = [s["name"] for s in emulator.sandboxes()["sandboxes"]]
    assert emulator.sandbox_name in names
    assert emulator.get_sandbox(emulator.sandbox_name)["name"] == emulator.sandbox_name
    assert emulator_root.sandbox(emulator.sandbox_name).url == emulator.url


def test_errors_carry_status_message_and_body(emulator: EmulatorClient) -> None:
    with pytest.raises(EmulatorError) as bad:
        emulator.set_next_start("grid", 101, "RUNNING")
    assert bad.value.status == 400
    assert "unknown start outcome 'RUNNING' for a grid" in bad.value.message
    assert bad.value.body is not None and bad.value.body["statusCode"] == 400
    with pytest.raises(EmulatorError) as missing:
        emulator.lifecycle("grid", 999)
    assert missing.value.status == 404 and "grid 999 does not exist" in str(missing.value)
    with pytest.raises(EmulatorError) as nobody:
        # A port nothing listens on (the emulator's own, and a path that is not served, would answer).
        EmulatorClient("http://127.0.0.1:9").health()
    assert nobody.value.status == 0 and nobody.value.body is None


def test_clock(emulator: EmulatorClient) -> None:
    frozen = emulator.freeze()
    assert frozen["frozen"] is True
    before = frozen["now"]
    assert emulator.advance(60_000)["now"] == before + 60_000
    assert emulator.advance_to(before + 120_000)["now"] == before + 120_000
    moved = emulator.advance_to(datetime.fromtimestamp((before + 180_000) / 1000, tz=timezone.utc))
    assert moved["now"] == before + 180_000
    assert emulator.advance_to_next()["advancedMs"] == 0  # nothing is scheduled
    assert emulator.set_scale(60)["scale"] == 60
    assert emulator.unfreeze()["frozen"] is False
    settled = emulator.set_clock(scale=1, frozen=True)
    assert (settled["scale"], settled["frozen"]) == (1, True)
    assert emulator.clock()["now"] == settled["now"]
    with pytest.raises(EmulatorError) as both:
        emulator.advance_by(ms=1, to="next")
    assert both.value.status == 400 and "exactly one of ms, to or until" in both.value.message


def test_next_start_and_advance_until_settled(emulator: EmulatorClient, service) -> None:
    emulator.freeze()
    assert emulator.set_next_start("grid", 101, "ALLOCATE_FAILED") == {"kind": "grid", "id": 101, "outcome": "ALLOCATE_FAILED"}
    assert emulator.lifecycle("grid", 101)["nextStart"] == {"outcome": "ALLOCATE_FAILED", "once": True}
    emulator.set_next_start("environment", 301, "PROCESS_FAILED")
    emulator.clear_next_start("environment", 301)
    assert emulator.lifecycle("environment", 301)["nextStart"]["once"] is False
    service.start_grid(101)
    emulator.advance_until_settled("grid", 101)
    assert emulator.lifecycle("grid", 101)["state"] == "ALLOCATE_FAILED"
    assert service.grid_state(101) == "ALLOCATE_FAILED"
    assert any(r["kind"] == "grid" and r["id"] == 101 for r in emulator.lifecycles()["resources"])


def test_environment_and_server_scenarios(emulator: EmulatorClient, service) -> None:
    emulator.freeze()
    with pytest.raises(EmulatorError) as loaded:
        emulator.externally_terminate(301)
    assert loaded.value.status == 400 and "only a RUNNING environment" in loaded.value.message
    status, _ = service.call("POST", f"{CLOUD}/environment/301/action", {"action": "start"})
    assert status == 202
    emulator.advance_until_settled("environment", 301)
    assert emulator.externally_terminate(301)["state"] == "EXTERNALLY_TERMINATED"
    assert emulator.fail_cloud_server(58201)["state"] == "FAILED"


def test_faults(emulator: EmulatorClient, service) -> None:
    rule = emulator.add_fault(path=f"{CLOUD}/*", action={"status": 503}, times=1)
    assert emulator.fault(rule["id"])["path"] == f"{CLOUD}/*"
    assert [r["id"] for r in emulator.faults()] == [rule["id"]]
    assert service.call("GET", f"{CLOUD}/grid/101")[0] == 503
    assert service.call("GET", f"{CLOUD}/grid/101")[0] == 200
    emulator.delete_fault(rule["id"])
    emulator.add_fault({"id": "slow", "path": "/concerto/mpulse/*", "action": {"status": 500}})
    emulator.clear_faults()
    assert emulator.faults() == []
    with pytest.raises(EmulatorError) as gone:
        emulator.fault("slow")
    assert gone.value.status == 404


def test_journal(emulator: EmulatorClient, service) -> None:
    service.call("POST", "/concerto/mpulse/api/annotations/v1", {"title": "Deploy 42", "text": "from the pipeline", "start": 1})
    service.call("GET", f"{CLOUD}/grid/999")
    assert emulator.count_requests(method="POST", path="/concerto/mpulse/api/annotations/*", body_json={"title": "Deploy 42"}) == 1
    assert emulator.count_requests(body_contains="Deploy 42", header={"X-Auth-Token": "demo-token"}) == 1
    assert emulator.count_requests(status="4xx") == 1
    found = emulator.find_requests(path="/concerto/*", limit=1)
    assert len(found) == 1 and found[0]["path"] == f"{CLOUD}/grid/999"
    page = emulator.journal(method="POST", limit=10)
    assert [e["path"] for e in page["entries"]] == ["/concerto/mpulse/api/annotations/v1"]
    assert emulator.journal(path_prefix="/concerto/services", status=404)["entries"][0]["status"] == 404
    emulator.clear_journal()
    assert emulator.count_requests() == 0


def test_alerts_compositions_users_incidents(emulator: EmulatorClient, service) -> None:
    assert any(a["uid"] == "demo-alert" for a in emulator.alerts())
    assert emulator.set_alert_enabled("demo-alert", False)["enabled"] is False
    assert service.call("POST", "/concerto/mpulse/api/alerts/demo-alert/fire", {"message": "down"})[0] == 409
    emulator.set_alert_enabled("demo-alert", True)
    assert service.call("POST", "/concerto/mpulse/api/alerts/demo-alert/fire", {"message": "Checkout is down"})[0] == 204
    assert emulator.alert("demo-alert")["history"][-1]["message"] == "Checkout is down"
    outbox = emulator.deliveries(alert="demo-alert", limit=1)
    assert outbox["deliveries"][0]["channel"] == "email" and outbox["deliveries"][0]["status"] == "stored"
    assert outbox["deliveries"][0]["payload"]["text"].startswith("Checkout is down")

    compositions = emulator.compositions()
    assert compositions and emulator.composition_instances() == []
    name = compositions[0]["path"]
    assert emulator.set_next_play(name, "Failed", message="boom") == {"compositionName": name, "outcome": "Failed", "message": "boom"}

    assert emulator.users()["tokens"][0]["token"] == "demo-token"

    domain = emulator.apps()[0]["domainId"]
    incident = emulator.add_incident(domainId=domain, startAgoMs=3_600_000, endAgoMs=0, loadTimeFactor=2.5)
    assert incident["loadTimeFactor"] == 2.5
    assert incident["id"] in [i["id"] for i in emulator.incidents()]
    emulator.delete_incident(incident["id"])
    assert incident["id"] not in [i["id"] for i in emulator.incidents()]


def test_state_export_and_import(emulator: EmulatorClient) -> None:
    state = emulator.export_state()
    grid = next(g for g in state["grids"] if g["id"] == 101)
    grid["name"] = "Imported grid"
    assert emulator.import_state(state)["status"] == "replaced"
    assert emulator.lifecycle("grid", 101)["name"] == "Imported grid"
    with pytest.raises(EmulatorError) as refused:
        emulator.import_state({"grids": [{"id": "x"}]})
    assert refused.value.status == 400 and refused.value.body is not None and refused.value.body["problems"]
    emulator.reset()
    assert emulator.lifecycle("grid", 101)["name"] == "Load Test Grid - US East"


def test_sandboxes_are_worlds_of_their_own(emulator_root: EmulatorClient, emulator: EmulatorClient, service) -> None:
    name = f"{emulator.sandbox_name}-other"
    other = emulator.create_sandbox(name)
    try:
        assert other.sandbox_name == name and other.url.endswith(f"/sandbox/{name}")
        other.freeze()
        other.add_fault(path="/concerto/*", action={"status": 503})
        # This test's sandbox and the default world know nothing of the other's fault.
        assert emulator.faults() == []
        assert emulator_root.faults() == []
        assert service.call("GET", f"{CLOUD}/grid/101")[0] == 200
        assert emulator_root.get_sandbox(name)["counts"]["grids"] == 5
    finally:
        emulator.delete_sandbox(name)
    with pytest.raises(EmulatorError) as gone:
        emulator_root.get_sandbox(name)
    assert gone.value.status == 404


def test_the_admin_token(admin_emulator_url: str) -> None:
    with pytest.raises(EmulatorError) as refused:
        EmulatorClient(admin_emulator_url).clock()
    assert refused.value.status == 401 and "Authorization" in refused.value.message
    with pytest.raises(EmulatorError) as wrong:
        EmulatorClient(admin_emulator_url, admin_token="nope").subscribe(kind="grid")
    assert wrong.value.status == 401 and "the admin token is wrong" in wrong.value.message
    root = EmulatorClient(admin_emulator_url, admin_token="test-admin")
    # The token goes with every call: a bound client's, the sandbox management's, the event stream's.
    sandbox = root.create_sandbox("admin-test")
    sandbox.freeze()
    assert sandbox.wait_for("grid", 101, "LOADED", timeout=10).state == "LOADED"
    assert [s["name"] for s in sandbox.sandboxes()["sandboxes"]] == ["admin-test"]
