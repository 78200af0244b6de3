"""Hunt 43: the same schedule whatever the path.

Every preset registered for pybatsim (setup.cfg) and a few compositions were run four or five ways on small
inputs of their platform kind (``wattsched run -s NAME``; ``wattsched serve`` + ``run --connect``; pybatsim's
launcher + ``run --connect``; the pybatsim class in process, ``run -s wattsched.schedulers.adapter:Class``; ``serve``
of that class) and the five CSVs compared with ``wattsched regress``: all identical, but for what these tests keep
fixed:

* H43-1: the class of a preset that re-registers jobs (UPAS, the EAMC presets, ``compose`` with their pieces), run
  in process (``-s wattsched.schedulers.adapter:Upas``, ``api.simulate(..., Upas)``), stopped at SIMULATION_BEGINS:
  "Batsim must accept dynamic jobs ... ('wattsched run' enables them itself)", which it did for ``-s upas`` only.
  The pybatsim handler now shows the preset's policy as the translator does.
* H43-2: pybatsim's launcher reads ``-o`` with ``json.load``: a key given twice kept its last value (``wattsched
  run`` and ``serve`` refuse it), a JSON list of pairs ran as the object, ``null`` ran with the defaults, and a
  number or a string ended in a traceback of ``dict(options)``. The preset's class reads the launcher's ``-o`` text
  again as ``wattsched run`` reads it: the same one-line errors (``pybatsim: error: ...``), an ``@FILE``'s errors
  naming the file.
* H43-3: ``run --connect`` checked the jobs' applications against the shipped EAR model, so a scheduler served
  with ``-o '{"ear_model": DIR}'`` of other applications could not be driven at all (refused before connecting),
  while ``run -s`` with the same options ran it. The scheduler listening judges the applications with its model.
* H43-4: the Docker image's entry point handed ``WATTSCHED_OPTIONS=@FILE`` to pybatsim's launcher, which opens the
  file itself: a file not mounted into the container ended in pybatsim's traceback. Refused on one line first.

Also checked, nothing to fix: every message of the serve and pybatsim-launcher paths equal (a recording proxy, seven
presets and compositions); ``-o @FILE`` and ``ipc://`` endpoints; the compose files' configs (docker-compose 1.29).
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pybatsim")

from wattsched.base.errors import OptionError  # noqa: E402
from wattsched.experiments.runner import run_simulation  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
EAMC = ROOT / "tests" / "fixtures" / "eamc"
UPAS_PLATFORM = ROOT / "platforms" / "upas_16.xml"
EAR_DATA = ROOT / "energy_models" / "data" / "eamc"

# pybatsim 4.0.0a0 logs each dynamic job registered again ("already in the job list") with Logger.warn, deprecated
pytestmark = pytest.mark.filterwarnings("ignore:The 'warn' method is deprecated:DeprecationWarning")


def free_endpoint() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{s.getsockname()[1]}"


def first_jobs(source: Path, target: Path, count: int, **changes: object) -> Path:
    """The first ``count`` jobs of a workload; ``changes``: fields set on every third job."""
    data = json.loads(source.read_text())
    data["jobs"] = data["jobs"][:count]
    for job in data["jobs"][::3]:
        job.update(changes)
    target.write_text(json.dumps(data))
    return target


def same_outputs(a: Path, b: Path) -> None:
    """The five CSVs equal, but the wall-clock columns of ``_schedule.csv``."""
    for name in ("jobs", "machine_states", "consumed_energy", "pstate_changes"):
        assert Path(f"{a}_{name}.csv").read_text() == Path(f"{b}_{name}.csv").read_text(), name
    rows = []
    for prefix in (a, b):
        keys, values = Path(f"{prefix}_schedule.csv").read_text().splitlines()
        row = dict(zip(keys.split(","), values.split(",")))
        row.pop("scheduling_time"), row.pop("simulation_time")
        rows.append(row)
    assert rows[0] == rows[1]


# ----------------------------------------------------------------------------------------------- H43-1
@pytest.mark.parametrize("preset, cls, options, inputs", [
    ("upas", "Upas", {}, "upas"),
    ("compose", "Compose", {"frequency": "upas", "wq_threshold": None}, "upas"),
    ("eamc-base", "EamcBase", {}, "eamc"),
    ("eamc-priority-inc", "EamcPriorityInc", {"t_weight": 1.5}, "eamc"),
])
def test_preset_class_in_process_turns_dynamic_jobs_on_as_the_preset(tmp_path, preset, cls, options, inputs) -> None:
    if inputs == "upas":
        platform = UPAS_PLATFORM
        workload = first_jobs(ROOT / "workloads" / "demo_upas16.json", tmp_path / "w.json", 40)
    else:
        platform, workload = EAMC / "platform.xml", first_jobs(EAMC / "workload.json", tmp_path / "w.json", 40)
    run_simulation(platform, workload, tmp_path / "preset", scheduler=preset, options=options)
    run_simulation(platform, workload, tmp_path / "class", scheduler=f"wattsched.schedulers.adapter:{cls}",
                   options=options)
    same_outputs(tmp_path / "class", tmp_path / "preset")
    assert "resized" in (tmp_path / "class_jobs.csv").read_text()  # jobs were re-registered


def test_pybatsim_handler_shows_a_presets_policy_only() -> None:
    from pybatsim.schedulers.easyBackfill import EasyBackfill as PybatsimEasy

    from wattsched.schedulers.adapter import Upas, pybatsim_handler
    from wattsched.schedulers.protocol import needs_dynamic_jobs

    ours = Upas({})
    handler = pybatsim_handler(ours)
    assert getattr(handler, "policy") is ours.policy and needs_dynamic_jobs(handler)
    assert not hasattr(pybatsim_handler(PybatsimEasy({})), "policy")


def test_cli_run_of_the_upas_class_needs_no_flag(tmp_path, caplog) -> None:
    from wattsched.cli import main

    workload = first_jobs(ROOT / "workloads" / "demo_upas16.json", tmp_path / "w.json", 30)
    assert main(["run", str(UPAS_PLATFORM), str(workload), "-s", "wattsched.schedulers.adapter:Upas",
                 "-e", str(tmp_path / "out"), "-q", "--json"]) == 0
    assert "wattsched.schedulers.adapter:Upas lowers jobs' gears: dynamic jobs enabled" in caplog.text


# ----------------------------------------------------------------------------------------------- H43-2
def launch(monkeypatch, argv: list[str]):
    """pybatsim's own launcher (``pybatsim.cmdline.main``) building the scheduler; the simulation is not started
    (no socket): returns the scheduler it built."""
    import pybatsim.cmdline

    built = []
    monkeypatch.setattr(pybatsim.cmdline, "legacy_launch_scheduler", lambda scheduler, **_: built.append(scheduler))
    pybatsim.cmdline.main(argv)
    return built[0]


def wattsched_error(text: str) -> str:
    """The error of ``wattsched run -o TEXT`` (parsing and the preset's checks), without its prefix."""
    from wattsched.cli.common import naming_options_file, scheduler_options
    from wattsched.schedulers.presets import build

    with pytest.raises(OptionError) as caught:
        with naming_options_file(text):
            build("fcfs", scheduler_options(text))
    return str(caught.value)


@pytest.mark.parametrize("text", [
    '{"placement": "best-fit", "placement": "first-fit"}',
    '[["placement", "best-fit"]]',
    "null",
    "5",
    '"ab"',
    '{"placement": NaN}',
    '{"placement": 1e400}',
    '{"placement": "worst-fit"}',
    '{"placment": "best-fit"}',
])
def test_pybatsim_launcher_reads_options_as_wattsched_run(monkeypatch, capsys, text) -> None:
    expected = wattsched_error(text)
    with pytest.raises(SystemExit) as ended:
        launch(monkeypatch, ["-t", "-1", "-o", text, "fcfs"])
    assert ended.value.code == 2
    assert capsys.readouterr().err == f"pybatsim: error: {expected}\n"


def test_pybatsim_launcher_options_file_named_in_its_errors(monkeypatch, capsys, tmp_path) -> None:
    for content in ('{"placement": "best-fit", "placement": "x"}', '{"placement": "worst-fit"}'):
        path = tmp_path / "options.json"
        path.write_text(content)
        expected = wattsched_error(f"@{path}")
        assert expected.startswith(f"{path}: ")
        with pytest.raises(SystemExit):
            launch(monkeypatch, ["-o", f" @{path}", "fcfs"])  # pybatsim strips the text before reading '@'
        assert capsys.readouterr().err == f"pybatsim: error: {expected}\n"


def test_pybatsim_launcher_options_still_reach_the_preset(monkeypatch, tmp_path) -> None:
    from wattsched.schedulers.adapter import EasyBackfill, Fcfs

    sched = launch(monkeypatch, ["-t", "-1", "--scheduler-options", '{"placement": "best-fit"}', "fcfs"])
    assert isinstance(sched, Fcfs) and sched.options == {"placement": "best-fit"}
    assert sched.policy.placement.name == "best-fit"
    (tmp_path / "o.json").write_text('{"placement": "non-contiguous"}')
    sched = launch(monkeypatch, [f"-o@{tmp_path / 'o.json'}", "easy-backfill"])
    assert isinstance(sched, EasyBackfill) and sched.policy.placement.name == "non-contiguous"
    assert launch(monkeypatch, ["fcfs"]).options == {}


def test_options_of_another_scheduler_under_the_launcher_are_its_own(monkeypatch) -> None:
    """Only the options object pybatsim read from -o is read again: a scheduler that builds one of ours with its
    own options (here, inside the launcher's call) keeps them."""
    import pybatsim.cmdline

    from wattsched.schedulers.adapter import EasyBackfill, Fcfs

    inner = []

    def built_inside(name, *, options):
        inner.append(EasyBackfill({"placement": "best-fit"}))
        return Fcfs(options)

    monkeypatch.setattr(pybatsim.cmdline, "get_scheduler_by_name", built_inside)
    monkeypatch.setattr(pybatsim.cmdline, "legacy_launch_scheduler", lambda scheduler, **_: None)
    pybatsim.cmdline.main(["-o", '{"placement": "non-contiguous"}', "fcfs"])
    assert inner[0].policy.placement.name == "best-fit"


def test_options_that_are_no_object_refused_in_python() -> None:
    from wattsched.schedulers.adapter import Fcfs

    for options in (5, "ab", [("placement", "best-fit")]):
        with pytest.raises(OptionError, match="must be a JSON object"):
            Fcfs(options)  # type: ignore[arg-type]
    assert Fcfs(None).policy is not None and Fcfs().options == {}


def test_real_pybatsim_launcher_refuses_a_duplicate_key_on_one_line() -> None:
    proc = subprocess.run([str(BIN / "pybatsim"), "-t", "-1", "-s", free_endpoint(), "easy-backfill", "-o",
                           '{"placement": "best-fit", "placement": "first-fit"}'],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == ["pybatsim: error: option -o: scheduler options at placement: duplicate key: "
                                        "give it once (JSON readers differ on which value counts: Batsim's takes the "
                                        "first, Python's the last)"]


# ----------------------------------------------------------------------------------------------- H43-3
def ear_model_with_app_9(folder: Path) -> Path:
    """The shipped EAR model plus an application 9 (app 2's signature)."""
    shutil.copytree(EAR_DATA, folder)
    lines = (folder / "apps").read_text().splitlines()
    lines[0] = "9"
    lines += ["9 " + line.split(" ", 1)[1] for line in lines[1:] if line.startswith("2 ")]
    (folder / "apps").write_text("\n".join(lines) + "\n")
    return folder


def test_run_connect_drives_a_scheduler_served_with_its_own_ear_model(tmp_path) -> None:
    from wattsched.cli import main

    model = ear_model_with_app_9(tmp_path / "ear9")
    options = {"ear_model": str(model), "t_weight": 1.5}
    platform = EAMC / "platform.xml"
    workload = first_jobs(EAMC / "workload.json", tmp_path / "w.json", 30, app=9)
    endpoint = free_endpoint()
    proc = subprocess.Popen([str(BIN / "wattsched"), "serve", "-s", "eamc-priority-inc", "-o", json.dumps(options),
                             "--bind", endpoint, "--timeout", "60"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        status = main(["run", str(platform), str(workload), "--connect", endpoint, "--timeout", "60",
                       "--enable-dynamic-jobs", "--acknowledge-dynamic-jobs", "-e", str(tmp_path / "zmq"), "-q",
                       "--json"])
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert status == 0 and proc.returncode == 0, out
    run_simulation(platform, workload, tmp_path / "here", scheduler="eamc-priority-inc", options=options)
    same_outputs(tmp_path / "zmq", tmp_path / "here")


def test_run_connect_still_checks_the_jobs_eamc_fields(tmp_path, capsys) -> None:
    from wattsched.cli import main

    platform = EAMC / "platform.xml"
    for change, problem in (({"partitions": ["p3"]}, "the platform has no partition 'p3'"),
                            ({"app": 0}, "must be an application id")):
        workload = first_jobs(EAMC / "workload.json", tmp_path / "w.json", 10, **change)
        assert main(["run", str(platform), str(workload), "--connect", free_endpoint(), "--timeout", "1",
                     "-e", str(tmp_path / "out"), "-q"]) == 2
        err = capsys.readouterr().err
        assert problem in err and len(err.splitlines()) == 1, err


# ----------------------------------------------------------------------------------------------- H43-4
def test_docker_entrypoint_refuses_an_options_file_it_cannot_read_on_one_line(tmp_path) -> None:
    """The image's entry point runs pybatsim's launcher, which opened ``-o @FILE`` itself: a file not mounted into
    the container ended in pybatsim's traceback (FileNotFoundError, IsADirectoryError)."""
    import os

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ran = tmp_path / "ran"
    (bin_dir / "pybatsim").write_text(f'#!/bin/sh\ntouch "{ran}"\n')
    (bin_dir / "pybatsim").chmod(0o755)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "WATTSCHED_LINGER_S": "0"}
    for value in (f"@{tmp_path / 'missing.json'}", f"@{tmp_path}", "@"):
        proc = subprocess.run(["sh", str(ROOT / "docker" / "entrypoint.sh")], env={**env, "WATTSCHED_OPTIONS": value},
                              capture_output=True, text=True, timeout=30)
        assert proc.returncode == 2 and not ran.exists()
        assert proc.stderr.splitlines() == [f"wattsched-entrypoint: error: WATTSCHED_OPTIONS={value}: no readable file "
                                            f"{value[1:]} in the container (mount it, or give the options as JSON "
                                            "text)"]
    (tmp_path / "options.json").write_text("{}")
    proc = subprocess.run(["sh", str(ROOT / "docker" / "entrypoint.sh")],
                          env={**env, "WATTSCHED_OPTIONS": f"@{tmp_path / 'options.json'}"}, timeout=30)
    assert proc.returncode == 0 and ran.exists()
