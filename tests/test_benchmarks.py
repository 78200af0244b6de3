"""The benchmark scripts still run (at a toy size): they import the package's current API, so a moved
function breaks them silently otherwise. Their figures are measured by ``make bench``, not here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("script,args", [
    ("bench_engine_only.py", ["--jobs", "40", "--hosts", "16", "--repeat", "1"]),
    ("bench_simgrid_clock.py", ["--jobs", "40", "--hosts", "16"]),
    ("bench_presets.py", ["--jobs", "40", "--sizes", "16", "--only", "easy-backfill,energy-bud"]),
])
def test_a_benchmark_runs_at_a_toy_size(tmp_path, script, args):
    if script == "bench_presets.py":
        args = [*args, "--out", str(tmp_path / "presets.md")]
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
