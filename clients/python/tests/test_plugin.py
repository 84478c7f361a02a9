"""The pytest plugin, in pytest runs of their own (pytester, in a subprocess) against this
run's emulator: what a user's test suite sees."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from cloud_emulator import EmulatorClient, EmulatorError

SCENARIO = Path(__file__).parent / "scenarios" / "four_workers.py"


def run(pytester: pytest.Pytester, emulator_url: str, prefix: str, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "-p",
        "cloud_emulator.pytest_plugin",
        "-p",
        "no:cacheprovider",
        f"--emulator-url={emulator_url}",
        f"--emulator-sandbox-prefix={prefix}",
        *args,
        timeout=180,
    )


def test_a_failed_test_shows_its_sandbox_journal(pytester: pytest.Pytester, emulator_url: str) -> None:
    prefix = f"p{uuid.uuid4().hex[:8]}"
    pytester.makepyfile(
        test_journal="""
        import urllib.error, urllib.request

        def get(url):
            try:
                urllib.request.urlopen(urllib.request.Request(url, headers={"X-Auth-Token": "demo-token"}))
            except urllib.error.HTTPError:
                pass

        def test_fails(emulator):
            get(emulator.urls.provisioning + "/grid/999")
            assert False, "fails on purpose"

        def test_passes(emulator):
            get(emulator.urls.provisioning + "/grid/101")
        """
    )
    result = run(pytester, emulator_url, prefix)
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    # One section, the failed test's, with its own request (the passing test's came after a reset).
    assert out.count(f"emulator journal: sandbox {prefix}-main") == 1
    result.stdout.fnmatch_lines(["*the last 1 of 1 requests*", "*GET /concerto/services/rest/CloudService/v1/grid/999 -> 404*"])
    assert "/grid/101" not in out


def test_reset_between_tests_and_a_sandbox_per_test(pytester: pytest.Pytester, emulator_url: str, emulator_root: EmulatorClient) -> None:
    prefix = f"p{uuid.uuid4().hex[:8]}"
    pytester.makepyfile(
        test_isolation=f"""
        import pytest

        def test_a_adds_a_fault(emulator):
            assert emulator.sandbox_name == "{prefix}-main"
            emulator.add_fault(path="/concerto/*", action={{"status": 503}})

        def test_b_starts_from_the_seed(emulator):
            assert emulator.faults() == []

        @pytest.mark.emulator_fresh
        def test_c_marked_gets_its_own_sandbox(emulator, emulator_root):
            assert emulator.sandbox_name.startswith("{prefix}-main-")
            assert emulator.sandbox_name in [s["name"] for s in emulator_root.sandboxes()["sandboxes"]]
            with open("fresh.txt", "w") as f:
                f.write(emulator.sandbox_name)

        def test_d_the_fixture_beside_the_worker_sandbox(emulator, emulator_fresh):
            assert emulator.sandbox_name == "{prefix}-main"
            assert emulator_fresh.sandbox_name.startswith("{prefix}-main-")
            emulator_fresh.add_fault(path="/concerto/*", action={{"status": 503}})
            assert emulator.faults() == []
        """
    )
    result = run(pytester, emulator_url, prefix)
    result.assert_outcomes(passed=4)
    # The test's own sandbox is gone with it; the worker's stays for the next run to reuse.
    fresh = (pytester.path / "fresh.txt").read_text()
    with pytest.raises(EmulatorError) as gone:
        emulator_root.get_sandbox(fresh)
    assert gone.value.status == 404
    assert emulator_root.get_sandbox(f"{prefix}-main")["name"] == f"{prefix}-main"


def test_without_an_emulator_url_the_tests_say_so(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLOUD_EMULATOR_URL", raising=False)
    pytester.makepyfile(test_none="def test_needs_it(emulator):\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "cloud_emulator.pytest_plugin", "-p", "no:cacheprovider", timeout=120)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*no emulator to test against: give --emulator-url, or set CLOUD_EMULATOR_URL*"])


def test_four_workers_run_the_same_scenario_at_once(pytester: pytest.Pytester, emulator_url: str, emulator_root: EmulatorClient) -> None:
    prefix = f"p{uuid.uuid4().hex[:8]}"
    pytester.makepyfile(test_scenario=SCENARIO.read_text())
    result = run(pytester, emulator_url, prefix, "-n", "4")
    result.assert_outcomes(passed=4)
    # Seen from outside: four sandboxes, each grid 101 ended as its own worker chose.
    outcomes = ["ALLOCATE_FAILED", "CHECKED_WITH_FAILURES", "ALLOCATED_WITH_FAILURES", "CHECKED"]
    for index, outcome in enumerate(outcomes):
        sandbox = emulator_root.sandbox(f"{prefix}-gw{index}")
        assert sandbox.lifecycle("grid", 101)["state"] == outcome
        # One start of grid 101 each (the demo seed's timeline makes requests of its own, to grid 105 and the alerts).
        assert sandbox.count_requests(method="POST", path="/concerto/services/rest/CloudService/v1/grid/101/action") == 1
