"""The package's layers (docs/architecture.md §1), checked with import-linter, and its types, with mypy.

The contract is in setup.cfg (``[importlinter:contract:layers]``): each layer imports only the layers
below it, and the simulator, the schedulers, the platforms and the workloads (one layer) never import
each other. The second test shows that the check fails when a lower layer imports a higher one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint_imports(package_parent: Path, config: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` on the ``wattsched`` package found in ``package_parent``."""
    env = {**os.environ, "PYTHONPATH": str(package_parent)}
    return subprocess.run([str(LINT_IMPORTS), "--config", str(config), "--no-cache"], cwd=package_parent, env=env,
                          capture_output=True, text=True, timeout=120)


def test_every_layer_imports_only_the_layers_below_it():
    result = lint_imports(ROOT, ROOT / "setup.cfg")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "wattsched layers KEPT" in result.stdout


def test_a_lower_layer_importing_a_higher_one_breaks_the_contract(tmp_path):
    shutil.copytree(ROOT / "wattsched", tmp_path / "wattsched", symlinks=False,
                    ignore=shutil.ignore_patterns("__pycache__", "*.xml", "*.json"))
    shutil.copy(ROOT / "setup.cfg", tmp_path / "setup.cfg")
    assert lint_imports(tmp_path, tmp_path / "setup.cfg").returncode == 0
    errors = tmp_path / "wattsched" / "schedulers" / "pieces.py"
    errors.write_text(errors.read_text() + "\nfrom wattsched.simulator import engine  # a sibling layer\n")
    result = lint_imports(tmp_path, tmp_path / "setup.cfg")
    assert result.returncode != 0 and "wattsched layers BROKEN" in result.stdout
    assert "wattsched.schedulers.pieces -> wattsched.simulator.engine" in result.stdout


def test_mypy_is_clean_on_the_package():
    from mypy import api

    stdout, stderr, status = api.run(["--config-file", str(ROOT / "setup.cfg"), "--cache-dir",
                                      str(ROOT / ".mypy_cache"), "-p", "wattsched"])
    assert status == 0, stdout + stderr
