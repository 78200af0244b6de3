"""Bad inputs hunt 38: the conditions around the files (a full disk, a file size limit, closed standard streams,
memory too short to load a library, file names that are no UTF-8, special files in a grid).

* before: ``run``, ``plot``, ``regress --update`` and ``sweep`` on a full disk or beyond ``ulimit -f`` (EFBIG, ENOSPC)
  ended with an OSError traceback (matplotlib's, pyarrow's, ``shutil``'s); a sweep's ``results.csv`` was written and
  its ``results.parquet`` not; a reproduction's generated inputs and reports gave a traceback, its report was written
  in place (a half ``report.md``), and the EFS log decompressed left a ``.tmp`` file. Now one line naming the file
  (``cannot write OUT/out_jobs.csv: File too large``), and nothing of the files written together.
* before: standard output on a full disk or beyond the size limit (``wattsched synth ... > w.json``) gave a traceback,
  or Python's "Exception ignored" and status 120; with ``PYTHONUNBUFFERED=1`` (the Docker image) the output was cut
  short and the status 0. Now ``wattsched: error: standard output: cannot write: File too large``, status 2.
* before: a closed standard output (``>&-``) made ``synth`` end with an AttributeError traceback and ``metrics``
  print nothing with status 0; a closed standard error made ``run`` (its progress check) exit 1 without a word, and
  the errors went to standard output. Now a closed standard output is refused before any work, and without standard
  error the run goes on (its errors are lost, as with other tools, standard output stays clean).
* before: a file name that is no UTF-8 printed on standard output in a UTF-8 locale other than C (``plot -d``,
  ``paraver``, ``run -e``, ``regress --update``) raised UnicodeEncodeError once the files were written. Now escaped,
  as standard error writes it.
* before: a library that cannot be mapped for want of memory (``ulimit -v``: numpy's "failed to map segment from
  shared object") was an ImportError traceback. Now the out-of-memory line a MemoryError gives.
* before: a sweep or reproduction with ``-j 2`` under a low open-file limit (``ulimit -n 40``) printed Dask's workers'
  tracebacks by the thousand and waited for ever, or raised "Nanny failed to start.". Now a soft limit too low is
  raised up to the hard one, a hard limit too low refused in one line before Dask starts.
* before: ``run --per-user`` read the workload again once the outputs were written: deleted (or replaced) during a
  long run, the command failed after writing them. Now the users are read before the run.
* before: a grid entry naming a FIFO or a folder was refused as ``no file fifo``. Now what it is.

Checked and found clean: FIFOs and devices as every command's inputs and outputs, ``/proc`` and ``/sys`` files,
folders replaced by files, symbolic link loops and dangling links (inputs and outputs), outputs that are inputs
through links (hard and symbolic), names too long, names with a line break, SIGTERM and SIGINT while a run, a sweep
or a reproduction writes, a workload deleted during a sweep, ``| head``.
"""

from __future__ import annotations

import gzip
import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bad_inputs_checks import refused
from wattsched import api
from wattsched.base.errors import InputError
from wattsched.cli import main

ROOT = Path(__file__).resolve().parent.parent
PLATFORM = ROOT / "platforms" / "taurus_16.xml"
WORKLOAD = ROOT / "workloads" / "demo_taurus16.json"
ONE_JOB = {"nb_res": 2, "jobs": [{"id": "1", "subtime": 0, "res": 1, "profile": "p", "walltime": 100}],
           "profiles": {"p": {"type": "delay", "delay": 5}}}


def _child(argv: list, cwd: Path, *, fsize: int | None = None, close: tuple[int, ...] = (), stdout: object = None,
           env: dict[str, str] | None = None, code: str | None = None,
           nofile: tuple[int, int] | None = None) -> subprocess.CompletedProcess:
    """``wattsched ARGV`` (or ``python -c CODE``) in a child process whose files may not grow beyond ``fsize`` bytes
    (SIGXFSZ ignored, so that a write fails with EFBIG as on a full disk), which may open ``nofile`` files (soft and
    hard limits) and which starts without the file descriptors ``close``."""

    def setup() -> None:
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        if nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, nofile)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        for fd in close:
            os.close(fd)

    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONUNBUFFERED", "PYTHONIOENCODING")}
    environment["PYTHONPATH"] = str(ROOT)
    environment.update(env or {})
    command = [sys.executable, "-c", code] if code is not None else [sys.executable, "-m", "wattsched", *argv]
    return subprocess.run(command, cwd=cwd, env=environment, preexec_fn=setup, timeout=300,
                          stdout=stdout if stdout is not None else subprocess.PIPE,
                          stderr=subprocess.PIPE if 2 not in close else subprocess.DEVNULL)


def _one_error_line(done: subprocess.CompletedProcess, *needles: str) -> str:
    err = done.stderr.decode(errors="backslashreplace").strip()
    assert done.returncode == 2, err
    assert len(err.splitlines()) == 1 and err.startswith("wattsched: error:") and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, (needle, err)
    return err


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


@pytest.fixture(scope="module")
def run_outputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The outputs of the demo run on 16 hosts (``<folder>/out_*.csv``)."""
    folder = tmp_path_factory.mktemp("run")
    api.simulate(str(PLATFORM), str(WORKLOAD), "easy-backfill", out=str(folder / "out"))
    return folder


# ------------------------------------------------------------------ 1. files beyond the size limit (a full disk)
@pytest.mark.parametrize("argv, written", [
    (["run", str(PLATFORM), str(WORKLOAD), "-e", "new/out", "-q"], "new/out_jobs.csv"),
    (["plot", "{run}", "-d", "new"], "new/gantt.png"),
    (["regress", "{run}", "new", "--update"], "new/out_"),
])
def test_outputs_beyond_the_file_size_limit_are_one_line_and_leave_nothing(tmp_path, run_outputs, argv, written):
    done = _child([a.replace("{run}", str(run_outputs)) for a in argv], tmp_path, fsize=1000)
    _one_error_line(done, f"cannot write {written}", "File too large")
    assert not (tmp_path / "new").exists()


def test_a_sweep_beyond_the_file_size_limit_writes_both_tables_or_neither(tmp_path):
    """The runs (small) are written and kept (a sweep resumes); the parquet table (larger) is not, and neither is
    the CSV table beside it."""
    (tmp_path / "two.xml").write_text(api.taurus_platform(2))
    (tmp_path / "one.json").write_text(json.dumps(ONE_JOB))
    (tmp_path / "grid.yaml").write_text("platforms: [two.xml]\nworkloads: [one.json]\nschedulers: [fcfs]\n")
    done = _child(["sweep", "grid.yaml", "--out", "out", "-j", "1", "-q"], tmp_path, fsize=1500)
    _one_error_line(done, "cannot write out/results.parquet: File too large")
    files = _files(tmp_path / "out")
    assert files and all(name.startswith("runs/") for name in files), files
    assert not any(Path(name).name.startswith(".") for name in files), files


def test_a_generated_input_beyond_the_file_size_limit_names_it(tmp_path):
    (tmp_path / "grid.yaml").write_text("platforms: [{taurus: {hosts: 2}}]\nworkloads: [{synth: {hosts: 2, days: 1}}]\n"
                                        "seeds: [1]\nschedulers: [fcfs]\n")
    done = _child(["sweep", "grid.yaml", "--out", "out", "-j", "1", "-q"], tmp_path, fsize=300)
    _one_error_line(done, "platform.xml, the temporary file of the <platform XML text>: File too large")
    done = _child(["sweep", "grid.yaml", "--out", "out", "-j", "1", "-q"], tmp_path, fsize=2500)
    _one_error_line(done, "cannot write out/inputs/synth2-days1-s1.json: File too large")
    assert not any(Path(name).name.startswith(".") for name in _files(tmp_path / "out"))


def test_a_report_beyond_the_file_size_limit_is_one_error_naming_it(tmp_path):
    """A reproduction's inputs and reports are written by :func:`wattsched.base.fileio.write_if_changed`."""
    code = ("from wattsched.base.fileio import write_if_changed\n"
            "from wattsched.base.errors import OutputError\n"
            "try:\n    write_if_changed('report.md', 'x' * 5000)\n"
            "except OutputError as error:\n    print(error)\n")
    done = _child([], tmp_path, fsize=1000, code=code)
    assert done.stdout.decode().strip() == "cannot write report.md: File too large", done.stderr.decode()
    assert os.listdir(tmp_path) == []


def test_a_decompressed_log_beyond_the_file_size_limit_leaves_nothing(tmp_path):
    from wattsched.experiments.efs import _gunzip

    log = tmp_path / "log.swf.gz"
    log.write_bytes(gzip.compress(b"; a log\n" * 1000))
    _gunzip(log, tmp_path / "inputs" / "log.swf")  # (its folder made)
    assert (tmp_path / "inputs" / "log.swf").read_bytes() == b"; a log\n" * 1000
    code = ("from pathlib import Path\nfrom wattsched.experiments.efs import _gunzip\n"
            "from wattsched.base.errors import OutputError\n"
            "try:\n    _gunzip(Path('log.swf.gz'), Path('new/log.swf'))\n"
            "except OutputError as error:\n    print(error)\n")
    done = _child([], tmp_path, fsize=1000, code=code)
    assert done.stdout.decode().strip() == "cannot write new/log.swf: File too large", done.stderr.decode()
    assert not (tmp_path / "new").exists()
    (tmp_path / "plain.swf.gz").write_bytes(b"; not gzip\n")
    with pytest.raises(InputError, match=r"plain\.swf\.gz: cannot decompress"):
        _gunzip(tmp_path / "plain.swf.gz", tmp_path / "other" / "plain.swf")
    assert not (tmp_path / "other").exists()


# ------------------------------------------------------------------ 2. standard output that cannot be written
@pytest.mark.parametrize("unbuffered", [False, True])
@pytest.mark.parametrize("argv", [["schedulers"], ["synth", "--hosts", "16", "--seed", "1", "--days", "1"],
                                  ["lightesp", "--help"], ["metrics", "{run}"]])
def test_standard_output_beyond_the_file_size_limit_is_one_line(tmp_path, run_outputs, argv, unbuffered):
    """``PYTHONUNBUFFERED=1`` (as the Docker image sets it): the output was cut short and the status 0."""
    with open(tmp_path / "stdout.txt", "wb") as stdout:
        done = _child([a.replace("{run}", str(run_outputs)) for a in argv], tmp_path, fsize=200, stdout=stdout,
                      env={"PYTHONUNBUFFERED": "1"} if unbuffered else None)
    _one_error_line(done, "standard output: cannot write: File too large")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_standard_output_on_a_full_device_is_one_line(tmp_path):
    with open("/dev/full", "wb") as stdout:
        done = _child(["schedulers"], tmp_path, stdout=stdout)
    _one_error_line(done, "standard output: cannot write: No space left on device")


def test_a_closed_standard_output_is_refused_before_any_work(tmp_path):
    done = _child(["run", str(PLATFORM), str(WORKLOAD), "-e", "new/out", "-q"], tmp_path, close=(1,),
                  stdout=subprocess.DEVNULL)
    _one_error_line(done, "standard output is closed")
    assert not (tmp_path / "new").exists()


def test_without_standard_error_a_run_goes_on_and_errors_stay_off_standard_output(tmp_path):
    done = _child(["run", str(PLATFORM), str(WORKLOAD), "-e", "new/out"], tmp_path, close=(2,))
    assert done.returncode == 0 and b"outputs: new/out_*.csv" in done.stdout
    assert len(_files(tmp_path / "new")) == 5
    done = _child(["metrics", "missing"], tmp_path, close=(2,))
    assert done.returncode == 2 and done.stdout == b""


def test_a_file_name_that_is_no_utf8_is_printed_escaped(tmp_path, run_outputs):
    """``PYTHONIOENCODING=utf-8:strict``: standard output as in a UTF-8 locale other than C (en_US.UTF-8)."""
    folder = os.fsencode(tmp_path) + b"/n\xffx"
    done = _child(["paraver", str(run_outputs), "-d", folder], tmp_path, env={"PYTHONIOENCODING": "utf-8:strict"})
    assert done.returncode == 0, done.stderr.decode(errors="backslashreplace")
    assert done.stdout.decode().splitlines()[0].endswith("n\\udcffx/out.prv")
    assert len(os.listdir(folder)) == 3


def test_run_per_user_reads_the_users_before_the_run(capsys, tmp_path, monkeypatch):
    """A workload file deleted (or replaced) while a long run simulates: ``--per-user`` read it again once the outputs
    were written, and failed the command (``cannot read the workload``) leaving them."""
    from wattsched.experiments import runner

    workload = tmp_path / "users.json"
    workload.write_text(json.dumps({**ONE_JOB, "jobs": [{**ONE_JOB["jobs"][0], "user": "ann"}]}))
    (tmp_path / "two.xml").write_text(api.taurus_platform(2))
    simulate = runner.run_inprocess

    def deleting(*args, **kwargs):
        workload.unlink()
        return simulate(*args, **kwargs)

    monkeypatch.setattr(runner, "run_inprocess", deleting)
    status = main(["run", str(tmp_path / "two.xml"), str(workload), "-e", str(tmp_path / "o" / "out"), "-q",
                   "--per-user", "--json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert json.loads(out)["mean_stretch_user_ann"] == 1.0


# ------------------------------------------------------------------ 3. memory too short to load a library
def test_a_library_that_cannot_be_mapped_is_out_of_memory(capsys, monkeypatch):
    from wattsched.cli import describe

    def short(args):
        try:
            raise ImportError("libscipy_openblas64_.so: failed to map segment from shared object")
        except ImportError as error:
            raise ImportError("Error importing numpy: you should not try to import numpy from ...") from error

    monkeypatch.setattr(describe, "cmd_schedulers", short)
    refused(capsys, ["schedulers"], "out of memory while running 'schedulers'")

    def missing(args):
        raise ImportError("No module named 'nothing'")

    monkeypatch.setattr(describe, "cmd_schedulers", missing)
    with pytest.raises(ImportError, match="nothing"):
        main(["schedulers"])


# ------------------------------------------------------------------ 4. too few open files for Dask's workers
def test_a_sweep_with_too_few_open_files_for_its_workers_is_refused_before_dask_starts(tmp_path):
    """``ulimit -n 40`` and ``-j 2``: Dask's workers printed "Too many open files" tracebacks by the thousand and the
    sweep waited for ever (or raised "Nanny failed to start.")."""
    (tmp_path / "two.xml").write_text(api.taurus_platform(2))
    (tmp_path / "one.json").write_text(json.dumps(ONE_JOB))
    (tmp_path / "grid.yaml").write_text("platforms: [two.xml]\nworkloads: [one.json]\nschedulers: [fcfs, easy-backfill]\n")
    done = _child(["sweep", "grid.yaml", "--out", "out", "-j", "2", "-q"], tmp_path, nofile=(40, 40))
    _one_error_line(done, "workers (-j) 2: 40 open files at most (ulimit -n) is too few", "give -j 1")
    assert not (tmp_path / "out" / "results.csv").exists()


def test_a_low_soft_open_file_limit_is_raised_for_the_workers(tmp_path):
    code = ("import resource\nfrom wattsched.experiments.cluster import check_open_files, open_files_needed\n"
            "check_open_files(2)\nprint(resource.getrlimit(resource.RLIMIT_NOFILE)[0] >= open_files_needed(2))\n")
    done = _child([], tmp_path, code=code, nofile=(40, 4096))
    assert done.stdout.decode().strip() == "True", done.stderr.decode()


# ------------------------------------------------------------------ 5. special files in a grid
@pytest.mark.parametrize("kind, shown", [("fifo", "not a regular file (a FIFO, device or socket)"),
                                         ("folder", "it is a folder, not a file")])
def test_a_grid_entry_that_is_no_regular_file_says_what_it_is(capsys, tmp_path, monkeypatch, kind, shown):
    monkeypatch.chdir(tmp_path)
    if kind == "fifo":
        os.mkfifo("special")
    else:
        os.mkdir("special")
    (tmp_path / "one.json").write_text(json.dumps(ONE_JOB))
    (tmp_path / "grid.yaml").write_text("platforms: [special]\nworkloads: [one.json]\nschedulers: [fcfs]\n")
    refused(capsys, ["sweep", "grid.yaml", "--out", "out", "-q"], f"grid.yaml: platforms[0]: special: {shown}")
    assert not (tmp_path / "out").exists()
