"""Interruptions of the commands that run simulations on a local Dask cluster (``sweep -j 2``, ``web``): Ctrl-C at a
terminal (SIGINT to the whole process group) and a stop while runs are going.

Each test starts the command in a session of its own (its Dask worker processes in its process group, all killed
at the end whatever happens) and guards:

* ``test_ctrl_c_on_a_sweep_is_one_line``: SIGINT to the group while runs are going. Before, each Dask worker
  process took it and printed its traceback (``Process Dask Worker process (from Nanny): Traceback ...
  KeyboardInterrupt``) before ``wattsched: interrupted``; now the workers ignore SIGINT
  (:mod:`wattsched.experiments.cluster`, their Dask preload) and the sweep prints that one line, exit 130.
* ``test_ctrl_c_while_a_sweep_starts_its_workers_is_one_line``: SIGINT to the group as the first worker process
  starts. Before, the starting worker printed its traceback, and the sweep, interrupted inside Dask's start of the
  cluster, left it half-started for Dask to close at exit (``Exception ignored in atexit callback ...
  close_clusters ... AssertionError``, Dask's INFO lines); now the workers start with SIGINT blocked, and the
  Ctrl-C is held until the cluster has started, then closes it.
* ``test_a_sweep_stopped_while_a_run_writes_leaves_no_temporary_file``: SIGINT to the sweep alone while a worker
  writes a run's outputs (a task that writes for ever, the worker killed by Dask when the cluster closes). Before,
  the run's folder kept the temporary files ``.out_*.csv.XXXXXXXX`` of
  :func:`~wattsched.base.fileio.atomic_paths`; now the sweep removes them once the cluster is closed (those
  names only: another file of the folder stays).
* ``test_a_web_page_stopped_with_a_run_going_marks_it_interrupted``: SIGINT to the group of ``wattsched web`` with
  a run going. Before, the shutdown marked the run ``failed`` (``task cancelled``), then the still running task
  set it back to ``running`` (or ``done``, the error kept), and the worker processes printed their tracebacks; now
  the run ends ``interrupted`` with the error a restart gives, and nothing but Dask's one-line warning about the
  worker it killed is printed.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
PLATFORM = str(ROOT / "platforms" / "taurus_16.xml")

pytestmark = pytest.mark.skipif(not (hasattr(signal, "SIGINT") and hasattr(os, "killpg")),
                                reason="POSIX signals and process groups")


# ------------------------------------------------------------------------------------------ helpers
class Started:
    """A command started in a session of its own, the lines of its stderr collected as they come."""

    def __init__(self, argv: list[str]) -> None:
        # the command starts with SIGINT as a terminal's job has it, even when the tests run in a background job
        # (`make test &`, `nohup`), whose SIGINT is ignored and would be ignored by the command too (a child keeps an
        # ignored signal across exec): the three sweep tests then failed (exit 0, or no end)
        ignored = signal.getsignal(signal.SIGINT) == signal.SIG_IGN
        if ignored:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            self.process = subprocess.Popen(argv, cwd=ROOT, start_new_session=True, stdin=subprocess.DEVNULL,
                                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        finally:
            if ignored:
                signal.signal(signal.SIGINT, signal.SIG_IGN)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stderr:
            self.lines.append(line)

    def ctrl_c(self) -> None:
        """SIGINT to the whole process group, as a terminal's Ctrl-C."""
        os.killpg(self.process.pid, signal.SIGINT)

    def wait(self, timeout_s: float) -> tuple[int, str]:
        """Exit status and stderr."""
        status = self.process.wait(timeout=timeout_s)
        self._reader.join(timeout=5)
        return status, "".join(self.lines)

    def kill(self) -> None:
        """The command and every process of its group (Dask's workers, multiprocessing's resource tracker)."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.process.wait(timeout=10)
        self.process.stderr.close()


@contextmanager
def started(argv: list[str]) -> Iterator[Started]:
    command = Started(argv)
    try:
        yield command
    finally:
        command.kill()


def wait_for(condition: Callable[[], Any], timeout_s: float, what: str) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def long_workload(path: Path) -> Path:
    """Four years of submissions on 16 hosts: a run that lasts longer than the tests wait."""
    from wattsched.workloads.synthetic import synthetic_week

    path.write_text(json.dumps(synthetic_week(16, seed=1, duration_s=4 * 365 * 86400.0, target_load=0.9)))
    return path


def short_workload(path: Path) -> Path:
    """The first 30 jobs of the 16-host demo workload (a fraction of a second)."""
    full = json.loads((ROOT / "workloads" / "demo_taurus16.json").read_text())
    jobs = full["jobs"][:30]
    profiles = {k: v for k, v in full["profiles"].items() if k in {j["profile"] for j in jobs}}
    path.write_text(json.dumps({"nb_res": full["nb_res"], "jobs": jobs, "profiles": profiles}))
    return path


def runs_file(tmp_path: Path, workloads: dict[str, Path]) -> Path:
    """A sweep's runs file: one EASY run per workload, each writing ``out/<name>/out_*.csv``."""
    runs = [{"name": name, "platform": PLATFORM, "workload": str(workload), "scheduler": "easy-backfill",
             "options": {}, "prefix": str(tmp_path / "out" / name / "out")} for name, workload in workloads.items()]
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(runs))
    return path


def writing_for_ever(run: Any, force: bool, queue_name: str | None) -> None:
    """A sweep's Dask task (in place of ``sweep._dask_task``) that writes the run's outputs and never ends."""
    from wattsched.base.batsim_files import output_paths
    from wattsched.base.fileio import atomic_paths

    with atomic_paths(list(output_paths(run.prefix).values())):
        time.sleep(60)


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


# -------------------------------------------------------------------------------------------- sweep
def test_ctrl_c_on_a_sweep_is_one_line(tmp_path):
    runs = runs_file(tmp_path, {"short": short_workload(tmp_path / "s.json"),
                                "long": long_workload(tmp_path / "l.json")})
    with started([sys.executable, "-m", "wattsched", "sweep", str(runs), "-j", "2"]) as sweep:
        # off a terminal a line per finished run: the short one done, the workers are up, the long one going
        wait_for(lambda: any("short done" in line for line in sweep.lines), 60, "the short run")
        sweep.ctrl_c()
        status, err = sweep.wait(60)
    assert status == 130
    assert [line for line in err.splitlines() if not line.startswith("runs 1/2")] == ["wattsched: interrupted"], err


def test_ctrl_c_while_a_sweep_starts_its_workers_is_one_line(tmp_path):
    import psutil

    runs = runs_file(tmp_path, {"a": short_workload(tmp_path / "a.json"), "b": short_workload(tmp_path / "b.json")})
    with started([sys.executable, "-m", "wattsched", "sweep", str(runs), "-j", "2"]) as sweep:
        parent = psutil.Process(sweep.process.pid)

        def a_worker_starts() -> bool:
            try:
                return any("spawn_main" in " ".join(child.cmdline()) for child in parent.children(recursive=True))
            except psutil.Error:
                return False

        wait_for(a_worker_starts, 60, "a worker process")
        sweep.ctrl_c()
        status, err = sweep.wait(60)
    assert (status, err) == (130, "wattsched: interrupted\n")


def test_a_sweep_stopped_while_a_run_writes_leaves_no_temporary_file(tmp_path):
    runs = runs_file(tmp_path, {"a": short_workload(tmp_path / "a.json"), "b": short_workload(tmp_path / "b.json")})
    (tmp_path / "out" / "a").mkdir(parents=True)
    kept = tmp_path / "out" / "a" / ".out_jobs.csv.notes"  # not a name atomic_paths gives
    kept.write_text("mine")
    script = ("import sys\n"
              "from tests.test_interruptions import writing_for_ever\n"
              "from wattsched.experiments import sweep\n"
              "sweep._dask_task = writing_for_ever\n"
              "try:\n"
              f"    sweep.run_sweep(sweep.load_runs({str(runs)!r}), workers=2, show_progress=False)\n"
              "except KeyboardInterrupt:\n"
              "    sys.exit(130)\n")
    with started([sys.executable, "-c", script]) as sweep:
        def temporaries() -> list[Path]:
            return [p for p in (tmp_path / "out").rglob(".out_*.csv.*") if p != kept]

        wait_for(lambda: len(temporaries()) == 10, 60, "both runs writing")
        sweep.process.send_signal(signal.SIGINT)  # the sweep alone: its workers go on writing until killed
        status, err = sweep.wait(60)
    assert status == 130, err
    assert files_under(tmp_path / "out") == ["a/.out_jobs.csv.notes"]


# ---------------------------------------------------------------------------------------------- web
def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_web_page_stopped_with_a_run_going_marks_it_interrupted(tmp_path):
    from wattsched.web.workspace import STOPPED_ERROR, Workspace

    workspace = tmp_path / "ws"
    workload = Workspace(workspace).store_input("workload", "long.json",
                                                long_workload(tmp_path / "l.json").read_bytes())
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    argv = [sys.executable, "-m", "wattsched", "web", "--workspace", str(workspace), "--port", str(port)]
    with started(argv) as web:
        def answers() -> bool:
            try:
                with urllib.request.urlopen(url + "/", timeout=1):
                    return True
            except OSError:
                return False

        wait_for(answers, 60, "the page")
        form = {"scheduler": "easy-backfill", "platform": "shipped:taurus_16.xml", "workload": workload, "name": "long"}
        with urllib.request.urlopen(url + "/runs", data=urllib.parse.urlencode(form).encode(), timeout=10) as page:
            run_id = page.url.rsplit("/", 1)[1]  # (the redirect to the run's page followed)
        folder = workspace / "runs" / run_id

        def state() -> str:
            return json.loads((folder / "status.json").read_text())["state"]

        wait_for(lambda: state() == "running", 60, "the run")
        web.ctrl_c()
        status, err = web.wait(60)
    assert status == 0 and "Traceback" not in err and "task cancelled" not in err, err
    run = json.loads((folder / "status.json").read_text())
    assert (run["state"], run["error"]) == ("interrupted", STOPPED_ERROR)
    assert sorted(p.name for p in folder.iterdir()) == ["run.json", "status.json"]
