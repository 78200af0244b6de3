"""Hunt 9: bad inputs of the studies, the generators and the Python API that still gave a traceback, a silent
accept or a half-made output folder.

* ``reproduce upas --machines ctc,ctc`` prepared the inputs, then stopped on "two runs of the sweep have the same
  name", the ``inputs`` folder left behind; ``reproduce efs --parts ''`` (or ``lightesp,,table1``) said "unknown
  part(s) ; parts: ...", naming nothing.
* A grid's ``seeds: [1, 1]`` made its synthetic workloads, then stopped on the same two run names without naming
  the grid's field, the ``inputs`` folder left behind.
* A window beyond any simulated time (``[0, 1e308]``) in a grid, a runs file, ``api.simulate(window=...)`` or
  ``compute_metrics`` gave a ``window_energy_j`` of inf (with a numpy overflow warning); only ``--window`` was
  bounded.
* ``api.simulate(dynamic_jobs="false")`` enabled dynamic jobs (a non-empty string is true); ``progress`` and
  ``api.sweep(force=...)`` took any value the same way.
* ``wattsched platform --prefix $'a\\x01'`` wrote an XML file ``wattsched run`` refuses (a control character is not
  XML); a ``--suffix`` holding a byte that is not UTF-8 gave a traceback (UnicodeEncodeError).
* ``wattsched beta --speed 1e308`` wrote ``"cpu": Infinity``; ``--base-speed 1e-300`` gave a traceback
  (OverflowError) and ``--base-speed 1e-3`` wrote walltimes ``wattsched run`` refuses.
* ``wattsched lightesp --users different-workloads --efficiencies 1,2,3`` ignored the efficiencies silently.
* ``wattsched reproduce eamc --help`` read "50 %% jobs" (a description is not %-formatted, only option helps are).
* ``wattsched serve --timeout 1e308`` (and ``run --connect ... --timeout 1e308``) gave a traceback (OverflowError:
  the wait counted in milliseconds).
* ``wattsched platform --node upas --top-power 1e300`` wrote a platform ``wattsched run`` refuses (its energy over
  the time bound is beyond a double).
* SIGTERM during ``api.simulate`` killed the process at once, its temporary outputs (or temporary folder) left
  behind; now they are removed first, then the process ends by SIGTERM (a handler of the caller's own is kept).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import textwrap
import warnings
from pathlib import Path

import pytest

from tests.bad_inputs_checks import refused, usage_error
from wattsched.cli import build_parser, main

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = Path(__file__).parent / "fixtures" / "batsim-reference"

MASTER = '<host id="master_host" speed="100Mf"/>'
HOST = '<host id="h{i}" speed="100Mf"><prop id="wattage_per_state" value="95:190"/></host>'
WORKLOAD = {"nb_res": 2, "profiles": {"a": {"type": "delay", "delay": 10}},
            "jobs": [{"id": 1, "subtime": 0, "res": 2, "profile": "a", "walltime": 100}]}


@pytest.fixture
def inputs(tmp_path) -> tuple[Path, Path]:
    platform = tmp_path / "p.xml"
    platform.write_text("<?xml version='1.0'?>\n<platform version=\"4.1\">\n<zone id=\"AS0\" routing=\"Full\">\n"
                        f"{MASTER}{HOST.format(i=0)}{HOST.format(i=1)}\n</zone>\n</platform>\n")
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps(WORKLOAD))
    return platform, workload


# ------------------------------------------------------------------------------------- reproduce name lists
@pytest.mark.parametrize("argv,needle", [
    (["efs", "--parts", ""], "got an empty value"),
    (["efs", "--parts", "lightesp,,table1"], "an empty name in 'lightesp,,table1'"),
    (["efs", "--parts", "table1,table1"], "'table1' is given twice"),
    (["efs", "--traces", "sdsc,sdsc"], "'sdsc' is given twice"),
    (["upas", "--machines", "ctc,ctc"], "'ctc' is given twice"),
    (["energy-budget", "--machines", "curie,curie"], "'curie' is given twice"),
])
def test_a_study_name_list_with_an_empty_or_repeated_name_is_refused_first(tmp_path, capsys, argv, needle):
    """was: ``upas --machines ctc,ctc`` made the inputs then failed on two runs of one name; ``efs --parts ''`` said
    "unknown part(s) ; parts: ..."."""
    out = tmp_path / "r"
    usage_error(capsys, ["reproduce", *argv, "--out", str(out), "-j", "1"], f"argument {argv[1]}", needle)
    assert not out.exists()


def test_no_help_shows_a_doubled_percent_sign():
    """argparse %-formats option helps, not descriptions: "50 %%" in a description is printed as it is."""
    def helps(parser: argparse.ArgumentParser):
        yield parser.prog, parser.format_help()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in dict.fromkeys(action.choices.values()):
                    yield from helps(sub)

    doubled = [prog for prog, text in helps(build_parser()) if "%%" in text]
    assert not doubled


# ------------------------------------------------------------------------------------------- grid seeds
def test_a_seed_given_twice_in_a_grid_is_refused_by_its_field(inputs, tmp_path, capsys):
    """was: its synthetic workloads made, then "two runs of the sweep have the same name", ``inputs`` left."""
    platform, _ = inputs
    grid = tmp_path / "g.yaml"
    grid.write_text(f"platforms: [{platform}]\nworkloads: [{{synth: {{hosts: 2, days: 0.01}}}}]\n"
                    "seeds: [1, 2, 1]\nschedulers: [fcfs]\n")
    refused(capsys, ["sweep", str(grid), "--out", str(tmp_path / "s"), "-j", "1", "-q"],
            f"{grid}: seeds[2]: the same seed as seeds[0], 1")
    assert not (tmp_path / "s").exists()


# --------------------------------------------------------------------------------- windows beyond any time
BEYOND = "0,1e+308 is beyond any simulated time"


def test_a_grid_window_beyond_any_simulated_time_is_refused(inputs, tmp_path, capsys):
    platform, workload = inputs
    grid = tmp_path / "g.yaml"
    grid.write_text(f"platforms: [{platform}]\nworkloads: [{workload}]\nschedulers: [fcfs]\nwindow: [0, 1.0e+308]\n")
    refused(capsys, ["sweep", str(grid), "--out", str(tmp_path / "s"), "-j", "1", "-q"], f"{grid}: window: {BEYOND}")
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize("field,entry", [("window", {"window": [0, 1e308]}),
                                         ("extra_windows.budget", {"extra_windows": {"budget": [0, 1e308]}})])
def test_a_runs_file_window_beyond_any_simulated_time_is_refused(inputs, tmp_path, capsys, field, entry):
    platform, workload = inputs
    runs = tmp_path / "runs.json"
    runs.write_text(json.dumps([{"name": "a", "platform": str(platform), "workload": str(workload),
                                 "scheduler": "fcfs", "options": {}, "prefix": str(tmp_path / "s" / "a" / "out"),
                                 **entry}]))
    refused(capsys, ["sweep", str(runs), "--out", str(tmp_path / "s"), "-j", "1", "-q"],
            f"{runs}: run 0: {field}: {BEYOND}")
    assert not (tmp_path / "s").exists()


def test_the_api_and_the_metrics_refuse_a_window_beyond_any_simulated_time(inputs, tmp_path):
    from wattsched import api
    from wattsched.analysis.metrics import compute_metrics

    platform, workload = inputs
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(api.OptionError, match=f"^window {re.escape(BEYOND)}"):
            api.simulate(str(platform), str(workload), "fcfs", out=tmp_path / "o" / "out", window=(0, 1e308))
        assert not (tmp_path / "o").exists()
        with pytest.raises(api.OptionError, match=f"^metrics: window {re.escape(BEYOND)}"):
            compute_metrics(REFERENCE / "fcfs-compute", window=(0.0, 1e308))
        assert compute_metrics(REFERENCE / "fcfs-compute", window=(0.0, 1e10))["window_energy_j"] < 1e300


# ------------------------------------------------------------------------------------------- API flags
@pytest.mark.parametrize("keyword,value", [("dynamic_jobs", "false"), ("dynamic_jobs", 0), ("progress", "no")])
def test_simulate_refuses_a_flag_that_is_not_true_or_false(inputs, tmp_path, keyword, value):
    """was: ``dynamic_jobs="false"`` enabled dynamic jobs."""
    from wattsched import api

    platform, workload = inputs
    with pytest.raises(api.OptionError, match=f"^{keyword} must be True or False, got "):
        api.simulate(str(platform), str(workload), "fcfs", out=tmp_path / "o" / "out", **{keyword: value})
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("keyword,value,expected", [("force", "yes", "True or False"),
                                                    ("progress", 3, "True or False or None")])
def test_sweep_refuses_a_flag_that_is_not_true_or_false(inputs, tmp_path, keyword, value, expected):
    from wattsched import api

    platform, workload = inputs
    grid = {"platforms": [str(platform)], "workloads": [str(workload)], "schedulers": ["fcfs"]}
    with pytest.raises(api.OptionError, match=f"^{keyword} must be {expected}, got "):
        api.sweep(grid, tmp_path / "s", workers=1, **{keyword: value})
    assert not (tmp_path / "s").exists()


def test_numpy_bools_are_flags(inputs, tmp_path):
    import numpy as np

    from wattsched import api

    platform, workload = inputs
    result = api.simulate(str(platform), str(workload), "fcfs", dynamic_jobs=np.bool_(False), progress=np.bool_(False))
    assert result.metrics["nb_jobs"] == 1


# --------------------------------------------------------------------------------------------- platform
@pytest.mark.parametrize("option,value,shown", [("--prefix", "a\x01", "a\\x01"), ("--suffix", "\udcff", "\\udcff")])
def test_platform_refuses_host_names_xml_cannot_hold(tmp_path, capsys, option, value, shown):
    """was: an XML file ``run`` refuses (a control character); a traceback for a byte that is not UTF-8."""
    out = tmp_path / "p.xml"
    refused(capsys, ["platform", "--hosts", "2", "--flat", option, value, "--output", str(out)],
            f"host name {option[2:]} '{shown}' must not contain", "control characters")
    assert not out.exists()


def test_platform_takes_host_names_in_any_script(tmp_path, capsys):
    out = tmp_path / "p.xml"
    assert main(["platform", "--hosts", "2", "--flat", "--prefix", "nœud-", "--output", str(out)]) == 0
    assert 'id="nœud-1"' in out.read_text(encoding="utf-8")


# ------------------------------------------------------------------------------------------------- beta
def test_beta_refuses_a_speed_whose_flops_overflow(inputs, tmp_path, capsys):
    """was: ``"cpu": Infinity`` written."""
    _, workload = inputs
    out = tmp_path / "b.json"
    refused(capsys, ["beta", str(workload), "--seed", "1", "--speed", "1e308", "--output", str(out)],
            "speed_flops (--speed) 1e+308: job '1' of 10 s")
    assert not out.exists()


@pytest.mark.parametrize("base,shown", [("1e-300", "run inf s"), ("1e-3", "run 1e+13 s")])
def test_beta_refuses_a_base_speed_giving_a_walltime_beyond_any_simulated_time(tmp_path, capsys, base, shown):
    """was: a traceback (OverflowError) for 1e-300; walltimes ``run`` refuses for 1e-3."""
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 2, "profiles": {"a": {"type": "parallel_homogeneous", "cpu": 1e10,
                                                                   "com": 0}},
                                    "jobs": [{"id": 1, "subtime": 0, "res": 2, "profile": "a"}]}))
    out = tmp_path / "b.json"
    refused(capsys, ["beta", str(workload), "--seed", "1", "--base-speed", base, "--output", str(out)],
            f"base_speed_flops (--base-speed) {float(base):g}: job '1', without walltime, would {shown}",
            "beyond any simulated time")
    assert not out.exists()
    assert main(["beta", str(workload), "--seed", "1", "--base-speed", "1e3", "--output", str(out)]) == 0
    assert json.loads(out.read_text())["jobs"][0]["walltime"] == 60 * (1e7 // 60 + 1)  # the next whole minute


# --------------------------------------------------------------------------------------------- lightesp
def test_lightesp_refuses_efficiencies_it_would_ignore(tmp_path, capsys):
    out = tmp_path / "w.json"
    refused(capsys, ["lightesp", "--users", "different-workloads", "--efficiencies", "1,2,3", "--output", str(out)],
            "--efficiencies: only with --users same-workload")
    assert not out.exists()
    assert main(["lightesp", "--copies", "1", "--users", "different-workloads", "--output", str(out)]) == 0


@pytest.mark.parametrize("argv", [["serve", "-s", "fcfs", "--timeout", "1e308"],
                                  ["run", "p.xml", "w.json", "--connect", "tcp://127.0.0.1:1", "--timeout", "1e11"]])
def test_a_timeout_beyond_the_time_bound_is_a_usage_error(capsys, argv):
    usage_error(capsys, argv, "argument --timeout", "longer than any wait", "WATTSCHED_LIMIT_TIME_S")


def test_a_generated_platform_that_run_refuses_is_not_written(capsys, tmp_path):
    out = tmp_path / "p.xml"
    refused(capsys, ["platform", "--node", "upas", "--hosts", "4", "--top-power", "1e300", "--output", str(out)],
            "--top-power 1e+300", "wattage_per_state", "beyond the largest number a double holds")
    assert not out.exists()
    assert main(["platform", "--node", "upas", "--hosts", "4", "--top-power", "150", "--output", str(out)]) == 0
    assert out.exists()


SIGTERM_IN_API = textwrap.dedent("""
    import os, signal, sys, time
    import wattsched.simulator.outputs as outputs
    first = outputs.consumed_energy_lines
    def stopped(sim):  # the fourth of the five files: three are written, the run is then stopped
        yield from first(sim)
        os.kill(os.getpid(), signal.SIGTERM)
        if sys.argv[1] == "default":
            time.sleep(5)
    outputs.consumed_energy_lines = stopped
    from wattsched import api
    if sys.argv[1] == "handled":  # the caller's own handler is left alone
        signal.signal(signal.SIGTERM, lambda signum, frame: print("caller's handler"))
    api.simulate(sys.argv[2], sys.argv[3], "fcfs", out=sys.argv[4] if len(sys.argv) > 4 else None)
    print("ended")
""")


@pytest.mark.parametrize("out", [True, False])
def test_sigterm_in_api_simulate_cleans_up_then_terminates(tmp_path, out):
    """was: killed at once, the temporary ``.out_*.csv.XXXX`` files (or the temporary folder) left behind."""
    import signal
    import subprocess
    import sys

    platform, workload = tmp_path / "p.xml", tmp_path / "w.json"
    platform.write_text(f'<?xml version="1.0"?><platform version="4.1"><zone id="z" routing="Full">{MASTER}'
                        + "".join(HOST.format(i=i) for i in range(2)) + "</zone></platform>")
    workload.write_text(json.dumps(WORKLOAD))
    folder = tmp_path / "out"
    folder.mkdir()
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    argv = ["default", str(platform), str(workload)] + ([str(folder / "run")] if out else [])
    done = subprocess.run([sys.executable, "-c", SIGTERM_IN_API, *argv], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(scratch)})
    assert done.returncode == -signal.SIGTERM, done.stderr
    assert "ended" not in done.stdout
    assert list(folder.iterdir()) == [] and list(scratch.iterdir()) == []  # no temporary file, no temporary folder


def test_sigterm_with_a_handler_of_the_caller_is_left_to_it(tmp_path):
    import subprocess
    import sys

    platform, workload = tmp_path / "p.xml", tmp_path / "w.json"
    platform.write_text(f'<?xml version="1.0"?><platform version="4.1"><zone id="z" routing="Full">{MASTER}'
                        + "".join(HOST.format(i=i) for i in range(2)) + "</zone></platform>")
    workload.write_text(json.dumps(WORKLOAD))
    done = subprocess.run([sys.executable, "-c", SIGTERM_IN_API, "handled", str(platform), str(workload),
                           str(tmp_path / "run")], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["caller's", "handler", "ended"]
