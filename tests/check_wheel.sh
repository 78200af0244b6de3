#!/bin/sh
# `pip install` of a built wheel in a fresh virtualenv gives a working `wattsched` without pybatsim:
# it generates a platform and a workload, runs EASY and energyBud with shutdown on them, and computes metrics.
# Usage: sh tests/check_wheel.sh [python3]   (run by .ci/run; needs the package registry)
set -eu
PYTHON=${1:-python3}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PYTHON" -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install -q --upgrade pip
"$tmp/venv/bin/python" -m pip wheel -q --no-deps -w "$tmp/dist" "$root"
"$tmp/venv/bin/python" -m pip install -q "$tmp"/dist/wattsched-*.whl
cd "$tmp"
w="$tmp/venv/bin/wattsched"
"$w" platform --hosts 8 --output p.xml
"$w" synth --hosts 8 --seed 1 --days 0.5 --output w.json
"$w" run p.xml w.json -s easy-backfill -e out/easy -q --json > easy.json
"$w" run p.xml w.json -s energy-bud -o '{"budget_fraction": 0.6, "window_end_s": 20000, "shutdown": true}' -e out/bud -q > /dev/null
"$w" metrics out/bud --json > bud.json
"$tmp/venv/bin/python" - <<'PY'
import importlib.util, json
easy, bud = json.load(open("easy.json")), json.load(open("bud.json"))
assert easy["nb_jobs"] == bud["nb_jobs"] > 0, (easy, bud)
assert importlib.util.find_spec("pybatsim") is None, "pybatsim must not be needed"
from wattsched import api
result = api.simulate("p.xml", "w.json", "easy-backfill")
assert result.metrics["nb_jobs"] == easy["nb_jobs"] and len(result.jobs) == easy["nb_jobs"]
print(f"wheel ok: {easy['nb_jobs']} jobs, EASY utilization {easy['utilization']:.3f}")
PY
