"""Bad input, one class at a time (issue 18): every class ends with exit status 2, exactly one stderr line
naming the file (or option) and the field, no traceback and no file left in the output folder.

The first case of each class runs the ``wattsched`` command in a subprocess; the others go through the same
entry point (:func:`wattsched.cli.main`) in this process, which is faster and catches exactly the same way.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PLATFORM = ROOT / "platforms" / "taurus_16.xml"
WORKLOAD = ROOT / "workloads" / "demo_taurus16.json"


def one_job(**fields) -> dict:
    job = {"id": 1, "subtime": 0, "res": 1, "profile": "p", "walltime": 100}
    job.update(fields)
    return {"nb_res": 1, "jobs": [job], "profiles": {"p": {"type": "delay", "delay": 10}}}


def write(tmp_path: Path, name: str, content: str | dict) -> str:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(path)


def check(proc: subprocess.CompletedProcess, *needles: str) -> str:
    """Exit 2, one line ``wattsched: error: ...`` holding every needle, no traceback."""
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("wattsched: error: ") or lines[0].startswith("wattsched "), lines[0]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def command(*args: str, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "wattsched", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


@pytest.fixture
def cli(capsys):
    """``cli(*args)``: the command's entry point in this process, as a CompletedProcess."""
    from wattsched.cli import main

    def run(*args: str) -> subprocess.CompletedProcess:
        capsys.readouterr()
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's usage errors
            code = int(exc.code or 0)
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(list(args), code, out, err)

    return run


def run_args(workload: str, out: Path, *extra: str) -> list[str]:
    return ["run", str(PLATFORM), workload, "-e", str(out / "run"), "-q", *extra]


# ------------------------------------------------------------------------------------- numbers
def test_integer_beyond_the_float_range_in_a_workload(tmp_path):
    text = json.dumps(one_job()).replace('"subtime": 0', '"subtime": 1' + "0" * 400)
    out = tmp_path / "out"
    check(command(*run_args(write(tmp_path, "w.json", text), out)), "w.json", "jobs[0].subtime", "401 digits")
    assert not out.exists()


@pytest.mark.parametrize(("where", "value", "needles"), [
    ('"delay": 10', '"delay": 1e400', ["profiles.p.delay", "beyond the range of a double"]),
    ('"res": 1', '"res": 1' + "0" * 5000, ["jobs[0].res", "5001 digits", "beyond the range of a double"]),
    ('"walltime": 100', '"walltime": 100, "user": -1e999', ["jobs[0].user", "beyond the range"]),
    ('"walltime": 100', '"walltime": 100, "user": NaN', ["jobs[0].user", "NaN"]),
])
def test_numbers_in_a_workload(tmp_path, cli, where, value, needles):
    out = tmp_path / "out"
    text = json.dumps(one_job()).replace(where, value)
    check(cli(*run_args(write(tmp_path, "w.json", text), out)), "w.json", *needles)
    assert not out.exists()


@pytest.mark.parametrize(("options", "needles"), [
    ('{"budget_j": 1%s, "window_end_s": 100}' % ("0" * 400), ["budget_j", "401 digits"]),
    ('{"budget_j": 1%s, "window_end_s": 100}' % ("0" * 5000), ["-o", "beyond the range of a double"]),
    ('{"budget_fraction": NaN, "window_end_s": 100}', ["budget_fraction", "NaN"]),
    ('{"budget_fraction": 0.5, "window_end_s": Infinity}', ["window_end_s", "Infinity"]),
])
def test_numbers_in_options(tmp_path, cli, options, needles):
    out = tmp_path / "out"
    check(cli(*run_args(str(WORKLOAD), out, "-s", "energy-bud", "-o", options)), *needles)
    assert not out.exists()


# ------------------------------------------------------------------------------------- nb_res
@pytest.mark.parametrize(("doc_nb_res", "needle"), [
    (None, "missing"), (-4, "-4"), (0, "got 0"), ("4", '"4"'), (4.0, "4.0"), (True, "true"), (2 ** 31, "2147483648"),
])
def test_nb_res_as_batsim_reads_it(tmp_path, cli, doc_nb_res, needle):
    """Batsim's loader refuses a workload whose ``nb_res`` is missing, not a JSON integer, or not positive; the
    run went on silently."""
    doc = one_job()
    if doc_nb_res is None:
        del doc["nb_res"]
    else:
        doc["nb_res"] = doc_nb_res
    out = tmp_path / "out"
    check(cli(*run_args(write(tmp_path, "w.json", doc), out)), "w.json", "nb_res", needle)
    assert not out.exists()


# ------------------------------------------------------------------------------------- text
@pytest.mark.parametrize("where", ["id", "profile", "user"])
def test_half_a_surrogate_pair_in_a_workload_string(tmp_path, cli, where):
    """JSON may spell half of a UTF-16 pair ("\\ud800"); such a string has no UTF-8, so the outputs could not be
    written: refused at reading, naming the field (the pair's two halves together are fine)."""
    doc = one_job(user="u")
    job = doc["jobs"][0]
    if where == "profile":
        doc["profiles"] = {"p\ud800": doc["profiles"]["p"]}
        job["profile"] = "p\ud800"
    else:
        job[where] = "x\udc00"
    text = json.dumps(doc, ensure_ascii=True)
    out = tmp_path / "out"
    check(cli(*run_args(write(tmp_path, "w.json", text), out)), "w.json", "surrogate")
    assert not out.exists()
    job = dict(doc["jobs"][0], id="\ud83d\ude00", profile="p", user="u")
    fine = {"nb_res": 1, "jobs": [job], "profiles": {"p": {"type": "delay", "delay": 10}}}
    assert cli(*run_args(write(tmp_path, "ok.json", json.dumps(fine, ensure_ascii=True)), out)).returncode == 0


# ------------------------------------------------------------------------------------- nesting
def test_deeply_nested_json(tmp_path):
    text = '{"jobs": [], "profiles": {}, "x": ' + "[" * 100000 + "]" * 100000 + "}"
    check(command(*run_args(write(tmp_path, "w.json", text), tmp_path / "out")), "w.json", "nested too deeply",
          "WATTSCHED_LIMIT_NESTING")
    assert not (tmp_path / "out").exists()


def test_nesting_bounds(tmp_path, cli):
    chain = {"p0": {"type": "delay", "delay": 1}}
    for i in range(1, 3000):
        chain[f"p{i}"] = {"type": "composed", "seq": [f"p{i - 1}"]}
    reversed_chain = dict(reversed(chain.items()))  # read from the top: no recursion either
    for name, profiles in (("chain.json", chain), ("reversed.json", reversed_chain)):
        doc = {"jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "p2999"}], "profiles": profiles}
        check(cli(*run_args(write(tmp_path, name, doc), tmp_path / "out")), name, ".seq",
              "composed profiles nested too deeply", "WATTSCHED_LIMIT_PROFILE_DEPTH")
    check(cli(*run_args(str(WORKLOAD), tmp_path / "out", "-o", "[" * 50000)), "-o", "nested too deeply")
    zones = '<?xml version="1.0"?><platform version="4.1">' + "".join(f'<zone id="z{i}" routing="Full">'
                                                                          for i in range(3000))
    zones += '<host id="h" speed="1Gf"/>' + "</zone>" * 3000 + "</platform>"
    check(cli("run", write(tmp_path, "deep.xml", zones), str(WORKLOAD), "-e", str(tmp_path / "out" / "r")),
          "deep.xml", "zones nested too deeply")
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------------- sizes and estimates
def test_repeat_count_refused_before_anything_is_expanded(tmp_path):
    doc = one_job()
    doc["profiles"] = {"q": {"type": "delay", "delay": 1}, "p": {"type": "composed", "seq": ["q"], "repeat": 10**12}}
    start = time.monotonic()
    check(command(*run_args(write(tmp_path, "w.json", doc), tmp_path / "out")), "w.json", "profile 'p'.repeat",
          "1e+12 atomic parts", "WATTSCHED_LIMIT_PROFILE_PARTS")
    assert time.monotonic() - start < 30


@pytest.mark.parametrize(("args", "needles"), [
    (["synth", "--hosts", "16", "--seed", "1", "--days", "1e9"], ["days", "WATTSCHED_LIMIT_DAYS"]),
    (["synth", "--hosts", "10000000000", "--seed", "1"], ["hosts", "WATTSCHED_LIMIT_HOSTS"]),
    (["synth", "--hosts", "16", "--seed", "1", "--load", "1e9"], ["jobs", "WATTSCHED_LIMIT_JOBS"]),
    (["lightesp", "--copies", "1000000000"], ["copies", "WATTSCHED_LIMIT_JOBS"]),
    (["lightesp", "--period", "1e300"], ["period_s", "WATTSCHED_LIMIT_TIME_S"]),
    (["platform", "--hosts", "100000000", "--flat"], ["hosts", "WATTSCHED_LIMIT_HOSTS"]),
])
def test_generated_sizes(tmp_path, cli, args, needles):
    start = time.monotonic()
    check(cli(*args, "--output", str(tmp_path / "out" / "x")), *needles)
    assert time.monotonic() - start < 10
    assert not (tmp_path / "out").exists()


def test_cluster_radical_counted_before_hosts_are_built(tmp_path, cli):
    xml = ('<?xml version="1.0"?><platform version="4.1"><zone id="z" routing="Full"><cluster id="c" prefix="h" '
           'suffix="" radical="0-99999999999" speed="1Gf" bw="1GBps" lat="0"/></zone></platform>')
    check(cli("run", write(tmp_path, "p.xml", xml), str(WORKLOAD), "-e", str(tmp_path / "o" / "r")),
          "p.xml", "cluster 'c'.radical", "1e+11 compute hosts", "WATTSCHED_LIMIT_HOSTS")


def test_bounds_are_raised_by_environment_variables(tmp_path):
    doc = one_job()
    doc["profiles"] = {"q": {"type": "delay", "delay": 1}, "p": {"type": "composed", "seq": ["q"], "repeat": 50}}
    path = write(tmp_path, "w.json", doc)
    check(command(*run_args(path, tmp_path / "a"), env={"WATTSCHED_LIMIT_PROFILE_PARTS": "10"}), "50 atomic parts")
    assert command(*run_args(path, tmp_path / "b"), env={"WATTSCHED_LIMIT_PROFILE_PARTS": "100"}).returncode == 0
    check(command(*run_args(path, tmp_path / "c"), env={"WATTSCHED_LIMIT_PROFILE_PARTS": "lots"}),
          "WATTSCHED_LIMIT_PROFILE_PARTS", "'lots'")


# -------------------------------------------------------------------- hangs that are refused
@pytest.mark.parametrize(("options", "needles"), [
    ('{"budget_fraction": 0.5, "window_end_s": 86400, "monitoring_period_s": 1e-6}',
     ["monitoring_period_s", "1e-06", "WATTSCHED_LIMIT_MIN_PERIOD_S"]),
    ('{"budget_fraction": 0.5, "window_start_s": -1e308, "window_end_s": 86400}', ["window_start_s", "-1e+308"]),
    ('{"budget_fraction": 0.5, "window_start_s": -5, "window_end_s": 86400}', ["window_start_s", "out of range"]),
])
def test_option_values_that_would_hang(tmp_path, cli, options, needles):
    start = time.monotonic()
    check(cli(*run_args(str(WORKLOAD), tmp_path / "out", "-s", "energy-bud", "-o", options)), *needles)
    assert time.monotonic() - start < 10


def test_a_period_that_would_hang_through_the_command(tmp_path):
    check(command(*run_args(str(WORKLOAD), tmp_path / "out", "-s", "esc", "-o", '{"period_s": 0.000001}')),
          "period_s", "esc", "WATTSCHED_LIMIT_MIN_PERIOD_S")


# ----------------------------------------------------------------------------- NaN and tau
@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    from wattsched.experiments.runner import run_simulation

    folder = tmp_path_factory.mktemp("finished")
    run_simulation(PLATFORM, WORKLOAD, folder / "out")
    return folder


@pytest.mark.parametrize(("args", "needles"), [
    (["--tau", "nan"], ["--tau", "nan"]),
    (["--tau", "0"], ["--tau"]),
    (["--window", "nan,5"], ["--window", "finite"]),
    (["--window=-inf,5"], ["--window", "finite"]),
    (["--max-power", "inf"], ["--max-power"]),
])
def test_metrics_numbers(finished_run, cli, args, needles):
    check(cli("metrics", str(finished_run / "out"), *args), *needles)


def test_metrics_numbers_through_the_command(finished_run):
    check(command("metrics", str(finished_run / "out"), "--tau", "-1"), "--tau")


@pytest.mark.parametrize("kwargs", [{"tau_s": math_nan} for math_nan in (float("nan"),)] +
                         [{"tau_s": 0.0}, {"window": (float("-inf"), 5.0)}, {"window": (5.0, float("nan"))},
                          {"max_power_w": float("nan")}, {"nb_hosts": 0}])
def test_metrics_api_refuses_what_the_cli_refuses(finished_run, kwargs):
    from wattsched.analysis.metrics import compute_metrics
    from wattsched.base.errors import OptionError

    with pytest.raises(OptionError) as info:
        compute_metrics(finished_run / "out", **kwargs)
    assert next(iter(kwargs)).split("_")[0] in str(info.value)


# -------------------------------------------------------------------------- result folders
def blank_field(text: str, line: int, field: int) -> str:
    """``text`` with field ``field`` of line ``line`` (1 = header) emptied: a job that ran without a start."""
    lines = text.splitlines()
    fields = lines[line - 1].split(",")
    fields[field] = ""
    lines[line - 1] = ",".join(fields)
    return "\n".join(lines) + "\n"


def mangled_copy(finished_run: Path, tmp_path: Path, kind: str, edit) -> str:
    folder = tmp_path / "run"
    folder.mkdir()
    for path in finished_run.iterdir():
        (folder / path.name).write_text(path.read_text())
    target = folder / f"out_{kind}.csv"
    target.write_text(edit(target.read_text()))
    return str(folder / "out")


@pytest.mark.parametrize(("kind", "edit", "needles"), [
    ("consumed_energy", lambda t: t.replace("\n", "\n5,\n", 3).replace("\n5,\n", "\n", 2), ["line", "2 fields"]),
    ("consumed_energy", lambda t: t.splitlines()[0] + "\n", ["a header but no rows", "jobs ran"]),
    ("jobs", lambda t: "\n".join(t.splitlines()[:2] + ["1,w0"] + t.splitlines()[2:]) + "\n", ["line 3", "fields"]),
    ("schedule", lambda t: t.replace(",16,", ",0,"), ["nb_computing_machines", "'0'"]),
    ("jobs", lambda t: blank_field(t, 3, 8), ["line 3, column 'starting_time'", "not a finite number"]),
])
def test_mangled_result_folders(finished_run, tmp_path, cli, kind, edit, needles):
    prefix = mangled_copy(finished_run, tmp_path, kind, edit)
    check(cli("metrics", prefix), f"out_{kind}.csv", *needles)


def test_mangled_result_folder_through_the_command(finished_run, tmp_path):
    prefix = mangled_copy(finished_run, tmp_path, "consumed_energy", lambda t: t.splitlines()[0] + "\n")
    check(command("metrics", prefix), "out_consumed_energy.csv", "no rows")


# ------------------------------------------------------------------------- output locations
def test_output_parent_is_a_file(tmp_path):
    (tmp_path / "file").write_text("x")
    check(command("run", str(PLATFORM), str(WORKLOAD), "-e", str(tmp_path / "file" / "out")),
          "file", "is a file, not a folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_output_locations(tmp_path, cli):
    (tmp_path / "file").write_text("x")
    (tmp_path / "adir").mkdir()
    (tmp_path / "taken_jobs.csv").mkdir()
    before = sorted(p.name for p in tmp_path.iterdir())
    check(cli("run", str(PLATFORM), str(WORKLOAD), "-e", str(tmp_path / "adir")), "is a folder", "adir/out")
    check(cli("run", str(PLATFORM), str(WORKLOAD), "-e", str(tmp_path) + "/"), "is a folder")
    check(cli("run", str(PLATFORM), str(WORKLOAD), "-e", str(tmp_path / "taken")), "taken_jobs.csv", "is a folder")
    check(cli("synth", "--hosts", "4", "--seed", "1", "--days", "0.01", "--output", str(tmp_path / "adir")),
          "adir")
    check(cli("plot", str(WORKLOAD), "-d", str(tmp_path / "file")), "")  # not an output folder: refused first
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert list((tmp_path / "adir").iterdir()) == []


def test_unwritable_output_location(tmp_path, cli):
    """A read-only place (``/proc`` is one even for root; a folder without write permission for others)."""
    check(cli("run", str(PLATFORM), str(WORKLOAD), "-e", "/proc/wattsched-test/out"), "/proc", "cannot write")
    if os.geteuid() != 0:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        check(cli("run", str(PLATFORM), str(WORKLOAD), "-e", str(ro / "out")), "cannot write")
        assert list(ro.iterdir()) == []


def test_unwritable_output_is_refused_before_the_simulation(tmp_path, monkeypatch):
    """The check comes first: the simulation (here one that would fail) never starts."""
    from wattsched.base.errors import OutputError
    from wattsched.experiments import runner

    def no_simulation(*args, **kwargs):
        raise AssertionError("the simulation started")

    monkeypatch.setattr(runner, "Simulation", no_simulation)
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputError, match="is a file"):
        runner.run_simulation(PLATFORM, WORKLOAD, tmp_path / "file" / "out")


def test_failed_run_creates_no_folder(tmp_path, cli):
    """A run that fails during the simulation leaves no folder it would have created."""
    doc = one_job(res=40)  # more hosts than the platform: rejected, not an error
    out = tmp_path / "new" / "deeper"
    assert cli(*run_args(write(tmp_path, "w.json", doc), out)).returncode == 0
    assert (out / "run_jobs.csv").exists()
    out2 = tmp_path / "other" / "deeper"
    check(cli(*run_args(str(WORKLOAD), out2, "-s", "energy-bud", "-o", '{"budget_j": 1, "window_end_s": 100}')),
          "budget")
    assert not (tmp_path / "other").exists()


# ------------------------------------------------------------------------------------- ids
@pytest.mark.parametrize(("job_id", "what"), [("a,b", "comma"), ('a"b', "double quote"), ("a\nb", "line break")])
def test_ids_batsim_csv_cannot_carry(tmp_path, cli, job_id, what):
    out = tmp_path / "out"
    check(cli(*run_args(write(tmp_path, "w.json", one_job(id=job_id)), out)), "jobs[0].id", what, "unquoted")
    assert not out.exists()


def test_profile_name_with_a_comma(tmp_path):
    doc = one_job(profile="p,x")
    doc["profiles"] = {"p,x": {"type": "delay", "delay": 10}}
    out = tmp_path / "out"
    check(command(*run_args(write(tmp_path, "w.json", doc), out)), "profile 'p,x'", "comma")
    assert not out.exists()


def test_odd_ids_batsim_can_carry_run_and_parse(tmp_path, cli):
    """Spaces, semicolons, single quotes, unicode: written as they are, read back by the metrics."""
    doc = one_job(id="é; x 'y'")
    doc["jobs"].append({"id": "ü", "subtime": 1, "res": 2, "profile": "p", "walltime": 50})
    proc = cli(*run_args(write(tmp_path, "w.json", doc), tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    from wattsched.analysis.outputs import read_jobs

    jobs = read_jobs(tmp_path / "out" / "run_jobs.csv")
    assert sorted(jobs["job_id"]) == sorted(["é; x 'y'", "ü"])


# --------------------------------------------------------------- the Python API's contract
def test_runner_raises_the_projects_error_types(tmp_path):
    from wattsched.base.errors import InputError, OptionError, OutputError
    from wattsched.experiments.runner import run_simulation

    with pytest.raises(InputError, match=r"jobs\[0\]\.id"):
        run_simulation(PLATFORM, one_job(id="a,b"), tmp_path / "out")
    with pytest.raises(InputError, match="subtime"):
        run_simulation(PLATFORM, one_job(subtime=10**400), tmp_path / "out")
    with pytest.raises(OptionError, match="monitoring_period_s"):
        run_simulation(PLATFORM, WORKLOAD, tmp_path / "out", scheduler="energy-bud",
                       options={"budget_fraction": 0.5, "window_end_s": 10.0, "monitoring_period_s": 1e-9})
    with pytest.raises(OutputError):
        run_simulation(PLATFORM, WORKLOAD, tmp_path)
    assert list(tmp_path.iterdir()) == []
