"""Hunt 49: bad inputs and degenerate cases of the Python API, the sweeps and the generators that still end in a
traceback (or an HTTP 500) instead of the contract's one line.

Each test below failed on the code it was written against (the traceback, the raw ESC, the silent accept) and
passes since the fixes:

* h49_1: a count beyond a double (an integer of 401 digits) given to ``wattsched platform --hosts``, ``synth --hosts``
  / ``--users``, ``lightesp --copies``, ``eamc-workload --jobs``, ``swf --hosts``, a platform's ``<cluster
  radical="0-1000…0">``, ``api.taurus_platform`` or the web page's generator forms: ``OverflowError: int too large
  to convert to float`` from :func:`wattsched.base.validate.check_count`, which formats the count with ``:.3g``
  (a float conversion) to say it is beyond the bound.
* h49_2: ``api.simulate(window=(0, 10**400))``, ``tau_s=10**400``, ``max_power_w=10**400`` and
  ``api.synthetic_workload(days=10**400)`` / ``load=10**400``: ``OverflowError`` from ``float()`` in
  ``api._check_window`` / ``api._positive`` / ``synthetic_workload`` (``0 < 10**400 < math.inf`` is True).
* h49_3: ``api.sweep({... "window": [0, 10**400]})`` (and ``tau_s``, ``max_power_w``): ``OverflowError`` from
  ``math.isfinite`` in ``wattsched.experiments.grid._finite`` (a YAML grid file is refused by its loader; a dict
  built in Python is not).
* h49_4: a runs file's run ``name`` (or a grid input's file name, which makes the run's label) holding an ESC or a
  line break is printed raw by the sweep's progress lines and failure report (``run a`` / ``<ESC>[31mred failed:``):
  a file drives the terminal and splits a line, where job ids and file names are printed escaped.
* h49_5: a ``_consumed_energy.csv`` cut at a row boundary before its job-end (``e``) rows is read without a word by
  ``metrics`` and ``node-stats``: one job computing 100 s gives ``total_energy_j`` 0 and a ``window_energy_j`` above
  it; Batsim writes one ``e`` row at each job end (every recording), as one ``s`` row at each start, which is checked.
* h49_6: ``web --port``, ``sweep -j`` and the like given an integer of 401 digits printed it whole in their error
  line: now cut, with its number of digits.

Checked and found clean (not repeated here): degenerate workloads (no job, one job, every job wider than the
platform, walltime -1/absent/1e-9, all jobs at one subtime, subtimes of 9e9 s, delays of 1e-9 and 1e9 s, a delay of 0
refused) under every preset and ~700 ``compose`` combinations of order × backfill × placement × admission × power on
Taurus and UPAS platforms of 4 hosts (frequency ``upas`` with extreme thresholds, ESC with ``period_s`` 1 and
``idle_s`` 0, budgets whose window is past the workload's end): no hang, no traceback, five outputs each; budgets
windows empty or reversed refused; ``metrics``/``plot``/``paraver``/``node-stats``/``regress`` on runs of no job,
of rejected jobs only, of jobs of 1e-9 s; huge integers in workload JSON, ``-o`` JSON and option dicts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bad_inputs_checks import refused, two_host_inputs, usage_error
from wattsched import api

ROOT = Path(__file__).resolve().parent.parent
TINY_SWF = ROOT / "tests" / "fixtures" / "swf" / "tiny.swf"
#: An integer beyond a double (±1.8e308): 1 and 400 zeros.
HUGE = 10 ** 400
HUGE_TEXT = str(HUGE)

ONE_JOB = {"nb_res": 2, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "p", "walltime": 100}],
           "profiles": {"p": {"type": "delay", "delay": 10}}}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> tuple[Path, Path]:
    return two_host_inputs(tmp_path_factory.mktemp("inputs"), ONE_JOB)


# ------------------------------------------------------------------------- h49_1: check_count of a huge integer
@pytest.mark.parametrize("argv, field", [
    (["platform", "--hosts", HUGE_TEXT], "hosts"),
    (["platform", "--node", "esc", "--hosts", HUGE_TEXT], "hosts"),
    (["synth", "--hosts", HUGE_TEXT, "--seed", "1"], "hosts"),
    (["synth", "--hosts", "4", "--seed", "1", "--days", "0.1", "--users", HUGE_TEXT], "users"),
    (["lightesp", "--copies", HUGE_TEXT], "copies"),
    (["eamc-workload", "--jobs", HUGE_TEXT], "jobs"),
    (["swf", str(TINY_SWF), "--hosts", HUGE_TEXT], "hosts"),
    (["run", "{radical}", "{workload}"], "radical"),
], ids=["platform", "platform-esc", "synth-hosts", "synth-users", "lightesp-copies", "eamc-jobs", "swf-hosts",
        "run-cluster-radical"])
def test_h49_1_a_count_beyond_a_double_is_one_line_not_an_overflow(capsys, tmp_path, inputs, argv, field):
    platform, workload = inputs
    radical = tmp_path / "radical.xml"
    radical.write_text(api.taurus_platform(2).replace('radical="0-1"', f'radical="0-{HUGE_TEXT}"'))
    assert HUGE_TEXT in radical.read_text()
    made = tmp_path / "made"
    argv = [a.replace("{radical}", str(radical)).replace("{workload}", str(workload)) for a in argv]
    argv += ["-e", str(made / "out"), "-q"] if argv[0] == "run" else ["--output", str(made / "out.txt")]
    refused(capsys, argv, field)
    assert not made.exists()


@pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")
def test_h49_1_the_api_and_the_web_page_refuse_such_a_count_too(tmp_path):
    from starlette.testclient import TestClient

    from wattsched.web.app import create_app

    with pytest.raises(api.OptionError):
        api.taurus_platform(HUGE)
    with pytest.raises(api.OptionError):
        api.synthetic_workload(4, seed=1, days=0.1, users=HUGE)
    with TestClient(create_app(tmp_path / "ws", processes=False), raise_server_exceptions=False) as client:
        response = client.post("/inputs/platform", data={"hosts": HUGE_TEXT})
        assert response.status_code == 400, response.status_code
        response = client.post("/inputs/workload", data={"hosts": HUGE_TEXT, "seed": "1", "days": "0.2"})
        assert response.status_code == 400, response.status_code


# ---------------------------------------------------------- h49_2: the API's own numbers beyond a double
@pytest.mark.parametrize("call", [
    lambda p, w: api.simulate(p, w, window=(0, HUGE)),
    lambda p, w: api.simulate(p, w, window=(-HUGE, 10)),
    lambda p, w: api.simulate(p, w, tau_s=HUGE),
    lambda p, w: api.simulate(p, w, max_power_w=HUGE),
    lambda p, w: api.synthetic_workload(4, seed=1, days=HUGE),
    lambda p, w: api.synthetic_workload(4, seed=1, load=HUGE),
], ids=["window-end", "window-start", "tau_s", "max_power_w", "synth-days", "synth-load"])
def test_h49_2_api_numbers_beyond_a_double_are_option_errors(inputs, call):
    with pytest.raises(api.OptionError):
        call(*inputs)


# ---------------------------------------------------------- h49_3: a grid dict's numbers beyond a double
@pytest.mark.parametrize("key, value", [("window", [0, HUGE]), ("tau_s", HUGE), ("max_power_w", HUGE)],
                         ids=["window", "tau_s", "max_power_w"])
def test_h49_3_a_grid_dicts_number_beyond_a_double_is_an_input_error(tmp_path, inputs, key, value):
    platform, workload = inputs
    grid = {"platforms": [str(platform)], "workloads": [str(workload)], "schedulers": ["fcfs"], key: value}
    with pytest.raises(api.InputError) as error:
        api.sweep(grid, tmp_path / "study", workers=1, progress=False)
    assert key in str(error.value)
    assert not (tmp_path / "study").exists()


# ---------------------------------------------------------- h49_4: a run's name printed raw by the sweep
def test_h49_4_a_run_name_with_control_characters_cannot_drive_the_terminal(capsys, tmp_path, inputs):
    from wattsched.cli import main

    platform, workload = inputs
    name = "a\nrun \x1b[2J\x1b[31mred"
    runs = tmp_path / "runs.json"
    runs.write_text(json.dumps([{"name": name, "platform": str(platform), "workload": str(workload),
                                 "scheduler": "no-such-scheduler", "options": {},
                                 "prefix": str(tmp_path / "r" / "out")}]))
    status = main(["sweep", str(runs), "--out", str(tmp_path / "study"), "-j", "1"])
    err = capsys.readouterr().err
    assert status in (1, 2), status
    assert "\x1b" not in err, err  # escaped (\x1b) or refused, as job ids are
    for line in err.splitlines():  # every line a progress line, a failure or the error: none a half name
        assert line.startswith(("runs ", "run ", "wattsched:")), line


# ---------------------------------------------------------- h49_5: an energy file cut before its job-end rows
@pytest.mark.parametrize("command", ["metrics", "node-stats"])
def test_h49_5_an_energy_file_cut_before_the_last_job_end_is_refused(capsys, tmp_path, inputs, command):
    platform, workload = inputs
    prefix = tmp_path / "run" / "out"
    api.simulate(platform, workload, "fcfs", out=prefix)  # one job of 10 s: rows 's' at 0, 'e' at 10
    energy = tmp_path / "run" / "out_consumed_energy.csv"
    lines = energy.read_text().splitlines()
    assert [line.split(",")[2] for line in lines[1:]] == ["s", "e"], lines
    energy.write_text("\n".join(lines[:-1]) + "\n")  # the job's end row gone: a truncated file
    refused(capsys, [command, str(prefix)], "out_consumed_energy.csv")


# ---------------------------------------------------------- h49_6: an integer option of 401 digits printed whole
@pytest.mark.parametrize("argv", [
    ["web", "--port", HUGE_TEXT], ["web", "--port", "-" + HUGE_TEXT], ["sweep", "runs.json", "-j", HUGE_TEXT],
    ["sweep", "runs.json", "-j", "-" + HUGE_TEXT], ["web", "--max-upload-mb", "-" + HUGE_TEXT],
], ids=["port", "port-negative", "workers", "workers-negative", "upload-negative"])
def test_h49_6_an_integer_option_beyond_a_double_is_cut_in_its_error_line(capsys, argv):
    err = usage_error(capsys, argv, "(an integer of 401 digits)")
    assert len(err) < 300, err
