"""The package's tests run against an emulator this file starts: the built server of this
repository (``node dist/cli/cli.js``, run ``npm run build`` first) with the demo seed, on a
free port, once for the whole run. Under xdist the controller starts it and the workers find
it in ``CLOUD_EMULATOR_URL``, so that every worker talks to the same emulator, each in its own
sandbox. Given ``--emulator-url`` or ``CLOUD_EMULATOR_URL``, the tests use that emulator instead
(it must serve the demo seed).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Iterator, Optional

import pytest

from cloud_emulator import EmulatorClient

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[3]
CLI = REPO / "dist" / "cli" / "cli.js"


class Server:
    """``node dist/cli/cli.js --port 0``, its URL read from the line it logs once it listens."""

    def __init__(self, **settings: str) -> None:
        node = shutil.which("node")
        if node is None:
            raise pytest.UsageError("the tests start the emulator with node, which is not on PATH")
        if not CLI.exists():
            raise pytest.UsageError(f"{CLI} is missing: run npm run build first")
        env = {**os.environ, "LOG_LEVEL": "info", "PORT": "0", "HOST": "127.0.0.1"}
        env.pop("ADMIN_TOKEN", None)
        env.update(settings)
        self.process = subprocess.Popen(
            [node, str(CLI), "--port", "0", "--host", "127.0.0.1"],
            cwd=str(REPO),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.url: Optional[str] = None
        self.log: list[str] = []
        self._ready = threading.Event()
        # Read its log to the end, so that the pipe never fills and stops it.
        threading.Thread(target=self._read, daemon=True).start()
        if not self._ready.wait(60) or self.url is None:
            self.stop()
            raise pytest.UsageError("the emulator did not start within 60 s:\n" + "".join(self.log[-20:]))

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if len(self.log) < 1000:
                self.log.append(line)
            if self.url is None:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict) and record.get("msg") == "cloud-emulator ready":
                    self.url = record["url"]
                    self._ready.set()
        self._ready.set()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


_server: Optional[Server] = None


def pytest_configure(config: pytest.Config) -> None:
    global _server
    # The pytest runs that test the plugin import the package as this run does (installed, or from src/).
    import cloud_emulator

    found = str(Path(cloud_emulator.__file__).resolve().parents[1])
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in [found, os.environ.get("PYTHONPATH", "")] if p)
    # xdist's workers find the controller's emulator in the environment they inherit.
    if hasattr(config, "workerinput") or config.getoption("emulator_url") or os.environ.get("CLOUD_EMULATOR_URL"):
        return
    _server = Server()
    os.environ["CLOUD_EMULATOR_URL"] = _server.url or ""


def pytest_unconfigure(config: pytest.Config) -> None:
    global _server
    if _server is not None:
        _server.stop()
        os.environ.pop("CLOUD_EMULATOR_URL", None)
        _server = None


@pytest.fixture(scope="session")
def admin_emulator_url() -> "Iterator[str]":
    """An emulator of its own with ADMIN_TOKEN=test-admin, for the tests of the token."""
    server = Server(ADMIN_TOKEN="test-admin")
    try:
        yield server.url or ""
    finally:
        server.stop()


class Service:
    """The system under test's side: plain HTTP calls to an emulated interface, with the demo seed's token."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url

    def call(self, method: str, path: str, body: object = None) -> "tuple[int, object]":
        import urllib.error
        import urllib.request

        data = None if body is None else json.dumps(body).encode()
        headers = {"X-Auth-Token": "demo-token"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(f"{self.base_url}{path}", data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as res:
                text = res.read().decode()
                return res.status, json.loads(text) if text else None
        except urllib.error.HTTPError as err:
            text = err.read().decode()
            return err.code, json.loads(text) if text else None

    def start_grid(self, grid_id: int) -> object:
        status, body = self.call("POST", f"/concerto/services/rest/CloudService/v1/grid/{grid_id}/action", {"action": "start"})
        assert status == 202, body
        return body

    def grid_state(self, grid_id: int) -> str:
        status, body = self.call("GET", f"/concerto/services/rest/CloudService/v1/grid/{grid_id}")
        assert status == 200, body
        return str(body["state"])  # type: ignore[index]


@pytest.fixture
def service(emulator: EmulatorClient) -> Service:
    """Calls to the emulated interfaces of this test's sandbox."""
    return Service(emulator.url)
