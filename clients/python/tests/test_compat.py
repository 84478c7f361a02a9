"""The package promises Python 3.9 and later, and this run may be on a later one: its grammar
is checked against 3.9's, and no annotation is evaluated when a module loads (3.9 cannot
evaluate ``int | None``)."""

from __future__ import annotations

import ast
from pathlib import Path

import cloud_emulator

MODULES = sorted(Path(cloud_emulator.__file__).parent.glob("*.py"))


def test_every_module_is_python_3_9() -> None:
    assert len(MODULES) >= 6
    for module in MODULES:
        source = module.read_text()
        ast.parse(source, filename=str(module), feature_version=(3, 9))
        assert "from __future__ import annotations" in source, f"{module.name}: annotations would be evaluated on import"


def test_the_package_is_typed() -> None:
    assert (Path(cloud_emulator.__file__).parent / "py.typed").exists()
