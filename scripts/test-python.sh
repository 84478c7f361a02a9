#!/usr/bin/env bash
# The Python package's tests (npm run test:python): clients/python/tests, with pytest and
# four xdist workers, against the built server (rebuilt first when stale), which the tests
# start themselves on a free port. The package is first built into a wheel and installed,
# without network, into a virtual environment over the system's packages (pytest and
# pytest-xdist come from there), so that the tests load it, and its pytest plugin through
# its entry point, as a user's installation does. Without venv, setuptools or wheel, the
# tests import the package from clients/python/src instead, saying so. First, where mypy is
# installed, the package's annotations are checked (mypy --strict).
#
# Settings (environment):
#   PYTHON   the interpreter (default: /usr/bin/python3 when there is one, else python3)
# Arguments go to pytest, e.g. npm run test:python -- -k wait_for
set -euo pipefail
cd "$(dirname "$0")/.."

python=${PYTHON:-}
if [[ -z $python ]]; then
  if [[ -x /usr/bin/python3 ]]; then python=/usr/bin/python3; else python=python3; fi
fi
if ! "$python" -c 'import pytest, xdist' 2>/dev/null; then
  echo "test:python: $python has no pytest or pytest-xdist (Debian: apt-get install python3-pytest python3-pytest-xdist)" >&2
  exit 1
fi

# The package's annotations hold (mypy --strict, as Python 3.9 reads them), where mypy is installed.
if "$python" -c 'import mypy' 2>/dev/null; then
  "$python" -m mypy --strict --python-version 3.9 --no-error-summary clients/python/src/cloud_emulator
else
  echo "test:python: no mypy for $python (Debian: python3-mypy): the annotations are not checked" >&2
fi

node scripts/build.mjs --if-stale

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Built from a copy, so that the build leaves nothing in the checkout.
mkdir "$work/package"
cp -r clients/python/pyproject.toml clients/python/README.md clients/python/src "$work/package/"

if "$python" -m venv --system-site-packages "$work/venv" >/dev/null 2>&1 && "$work/venv/bin/python" -c 'import setuptools, wheel' 2>/dev/null; then
  "$work/venv/bin/python" -m pip wheel -q --no-deps --no-build-isolation --no-index -w "$work/wheel" "$work/package"
  "$work/venv/bin/python" -m pip install -q --no-deps --no-index "$work"/wheel/*.whl
  run=("$work/venv/bin/python" -m pytest)
else
  echo "test:python: no venv, setuptools or wheel for $python: the tests import the package from clients/python/src (not installed)" >&2
  export PYTHONPATH=$PWD/clients/python/src${PYTHONPATH:+:$PYTHONPATH}
  run=("$python" -m pytest -p cloud_emulator.pytest_plugin)
fi

cd clients/python
"${run[@]}" -n 4 -p no:cacheprovider "$@"
