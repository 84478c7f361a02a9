"""pytest plugin: a sandbox of the emulator per xdist worker (or per test), reset before each
test, and the sandbox's journal in the report of a failed test.

Installed with the package (entry point ``pytest11``). The emulator's URL comes from
``--emulator-url``, else the environment variable ``CLOUD_EMULATOR_URL``, else the ini
option ``emulator_url``; its admin token from ``--emulator-admin-token`` or
``CLOUD_EMULATOR_ADMIN_TOKEN``.

Fixtures:

- ``emulator``: an :class:`EmulatorClient` bound to this worker's sandbox
  (``<prefix>-<worker id>``: ``pytest-gw0``, ``pytest-gw1``..., ``pytest-main`` without
  xdist), reset before the test. With ``@pytest.mark.emulator_fresh``, a sandbox of the
  test's own instead (as ``emulator_fresh``).
- ``emulator_fresh``: a client bound to a new sandbox for this test alone, made from the seed
  and deleted when the test ends.
- ``emulator_root``: a client of the emulator's default world (sandbox management, the
  default world's event stream), session-wide.
- ``emulator_url``: the URL, session-wide (override it to start an emulator yourself).
"""

from __future__ import annotations

import os
import uuid
from datetime import datetime, timezone
from typing import Any, Dict, Generator, List, Optional

import pytest

from .client import EmulatorClient
from .errors import EmulatorError

ENV_URL = "CLOUD_EMULATOR_URL"
ENV_ADMIN_TOKEN = "CLOUD_EMULATOR_ADMIN_TOKEN"

#: Where an item keeps the clients of its sandboxes, for the report of a failure.
_CLIENTS_KEY = pytest.StashKey[List[EmulatorClient]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("cloud-emulator", "cloud emulator")
    group.addoption("--emulator-url", dest="emulator_url", default=None, help=f"URL of the running emulator (default: ${ENV_URL}, else the ini option emulator_url)")
    group.addoption("--emulator-admin-token", dest="emulator_admin_token", default=None, help=f"the emulator's ADMIN_TOKEN (default: ${ENV_ADMIN_TOKEN})")
    group.addoption(
        "--emulator-sandbox-prefix",
        dest="emulator_sandbox_prefix",
        default=None,
        help="first part of the sandbox names, <prefix>-<worker id> (default: pytest); give each run its own when runs share an emulator",
    )
    group.addoption(
        "--emulator-journal-entries",
        dest="emulator_journal_entries",
        type=int,
        default=None,
        help="how many of the sandbox's last requests a failed test's report shows (default: 50; 0: none)",
    )
    parser.addini("emulator_url", "URL of the running emulator", default=None)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "emulator_fresh: the emulator fixture gives this test a sandbox of its own, made from the seed and deleted after it")


def _url(config: pytest.Config) -> Optional[str]:
    given = config.getoption("emulator_url") or os.environ.get(ENV_URL) or config.getini("emulator_url")
    return str(given) if given else None


def _worker_id(config: pytest.Config) -> str:
    """The xdist worker's id (gw0, gw1, ...), or ``main`` in a run without workers."""
    workerinput: Optional[Dict[str, Any]] = getattr(config, "workerinput", None)
    return str(workerinput["workerid"]) if workerinput else "main"


def _prefix(config: pytest.Config) -> str:
    return str(config.getoption("emulator_sandbox_prefix") or "pytest")


@pytest.fixture(scope="session")
def emulator_url(pytestconfig: pytest.Config) -> str:
    """The emulator's URL: --emulator-url, $CLOUD_EMULATOR_URL or the ini option emulator_url."""
    url = _url(pytestconfig)
    if not url:
        pytest.fail(f"no emulator to test against: give --emulator-url, or set {ENV_URL}", pytrace=False)
    return url


@pytest.fixture(scope="session")
def emulator_root(emulator_url: str, pytestconfig: pytest.Config) -> EmulatorClient:
    """A client of the emulator's default world."""
    token = pytestconfig.getoption("emulator_admin_token") or os.environ.get(ENV_ADMIN_TOKEN)
    return EmulatorClient(emulator_url, admin_token=token)


@pytest.fixture(scope="session")
def emulator_worker_sandbox(emulator_root: EmulatorClient, pytestconfig: pytest.Config) -> EmulatorClient:
    """This worker's sandbox, made (or made afresh) from the seed once per worker."""
    name = f"{_prefix(pytestconfig)}-{_worker_id(pytestconfig)}"
    return emulator_root.create_sandbox(name)


def _remember(request: pytest.FixtureRequest, client: EmulatorClient) -> None:
    request.node.stash.setdefault(_CLIENTS_KEY, []).append(client)


@pytest.fixture
def emulator_fresh(emulator_root: EmulatorClient, request: pytest.FixtureRequest) -> Generator[EmulatorClient, None, None]:
    """A sandbox for this test alone: made from the seed, deleted when the test ends."""
    name = f"{_prefix(request.config)}-{_worker_id(request.config)}-{uuid.uuid4().hex[:12]}"
    client = emulator_root.create_sandbox(name)
    _remember(request, client)
    yield client
    try:
        emulator_root.delete_sandbox(name)
    except EmulatorError as err:
        if err.status != 404:
            raise


@pytest.fixture
def emulator(request: pytest.FixtureRequest) -> EmulatorClient:
    """A client bound to this worker's sandbox, reset to the seed; with @pytest.mark.emulator_fresh, the test's own sandbox."""
    if request.node.get_closest_marker("emulator_fresh") is not None:
        fresh: EmulatorClient = request.getfixturevalue("emulator_fresh")
        return fresh
    client: EmulatorClient = request.getfixturevalue("emulator_worker_sandbox")
    client.reset()
    _remember(request, client)
    return client


def _describe(entry: Dict[str, Any]) -> str:
    at = datetime.fromtimestamp(entry.get("time", 0) / 1000, tz=timezone.utc).strftime("%H:%M:%S.%f")[:-3]
    target = entry.get("path", "")
    if entry.get("query"):
        target += "?" + str(entry["query"])
    line = f"#{entry.get('id')} {at} {entry.get('method')} {target} -> {entry.get('status')}"
    if entry.get("faulted"):
        line += f" (fault {', '.join(entry['faulted'])})"
    body = entry.get("body")
    if body:
        text = str(body).replace("\n", " ")
        line += f"\n    {text[:300]}{'...' if len(text) > 300 else ''}"
    return line


def journal_text(client: EmulatorClient, entries: int) -> str:
    """The sandbox's last ``entries`` requests, oldest first, one line each (and its body below)."""
    try:
        page = client.journal(limit=entries)
    except EmulatorError as err:
        return f"(the journal could not be read: {err})"
    listed = list(reversed(page.get("entries", [])))
    if not listed:
        return "(no request reached the sandbox)"
    head = f"the last {len(listed)} of {page.get('total')} requests, oldest first (emulated times, UTC):"
    return "\n".join([head, *(_describe(dict(e)) for e in listed)])


@pytest.hookimpl(hookwrapper=True)  # type: ignore[misc]  # pluggy's decorator is untyped in older pytest
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    # At teardown a test's own sandbox is gone already (and a read would make it again).
    if not report.failed or report.when == "teardown":
        return
    entries = item.config.getoption("emulator_journal_entries")
    entries = 50 if entries is None else entries
    if entries <= 0:
        return
    for client in item.stash.get(_CLIENTS_KEY, []):
        report.sections.append((f"emulator journal: sandbox {client.sandbox_name}", journal_text(client, entries)))
