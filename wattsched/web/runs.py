"""Runs launched from the page, in the background, on the engine of ``wattsched sweep``: one Dask
distributed task per simulation (:func:`simulate`), on a local cluster the server starts with its first run.

A task reads its ``run.json`` from the workspace (:mod:`.workspace`), simulates with
:func:`wattsched.experiments.runner.run_simulation` (Batsim's five files written atomically to
``runs/<id>/out_*.csv``), measures the run with :func:`wattsched.experiments.sweep.run_metrics` (the
metrics of ``wattsched metrics``), writes the Paraver trace and records everything in ``status.json``:
progress while it runs (simulated time reached, jobs done, at most every half second), then ``done`` with
the metrics, or ``failed`` with the one-line error the CLI would print; a run the server's stop cuts short ends
``interrupted`` (:meth:`RunManager.close`). The page polls ``status.json``, so
the progress of several runs at once, and of runs started before a restart of the page, needs no channel
back from the workers.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from pathlib import Path
from typing import Any

from wattsched.base.errors import WattschedError
from wattsched.web.workspace import ACTIVE, STOPPED_ERROR, Workspace, logged_warnings

__all__ = ["RunManager", "check_run", "simulate"]

logger = logging.getLogger(__name__)

#: The workspace's folder of Dask's scratch space (its scheduler and workers' local directories).
SCRATCH = ".dask-scratch"
#: Seconds between two progress writes of a running task.
PROGRESS_PERIOD_S = 0.5


def _clean(metrics: dict[str, Any]) -> dict[str, Any]:
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in metrics.items()}


def check_run(workspace: Workspace, scheduler: str, options: dict[str, Any], platform_path: Path,
              workload_path: Path) -> None:
    """What ``wattsched run`` checks before its simulation produces anything, without simulating: the inputs
    loaded and checked as the CLI loads them (job fields, EAMC partitions and applications), the scheduler
    built with its options (:func:`~wattsched.schedulers.protocol.scheduler_handler`), the workload's speed
    against the platform, then the scheduler answering Batsim's first message, ``SIMULATION_BEGINS``, where
    it binds to the platform (a ``sleep_pstate`` the platform does not have, a budget below the idle
    platform, a gear that is not a number). The page calls it before it creates a run, so that an error
    the CLI reports before running is a refused form, not a failed run.

    Raises:
        WattschedError: the CLI's one-line message.
    """
    from wattsched.experiments.runner import check_speed, eamc_reading
    from wattsched.schedulers.protocol import needs_dynamic_jobs, scheduler_handler
    from wattsched.simulator.engine import Simulation
    from wattsched.simulator.platform import load_platform
    from wattsched.simulator.workload import load_workload
    from wattsched.workloads.eamc import check_eamc_inputs
    from wattsched.workloads.users import check_job_fields

    options = workspace.resolved_options(options)
    platform = load_platform(platform_path)
    workload = load_workload(workload_path)
    check_job_fields((job.entry for job in workload.jobs), workload_path)
    ear_model, by_partition = eamc_reading(scheduler, options)
    check_eamc_inputs((host.properties for host in platform.hosts), (job.entry for job in workload.jobs),
                      workload_path, ear_model, by_partition=by_partition)
    handler = scheduler_handler(scheduler, options)
    check_speed(platform, workload)
    dynamic = needs_dynamic_jobs(handler)
    handler(Simulation(platform, workload, dynamic_jobs=dynamic, acknowledge_dynamic_jobs=dynamic).start())


def simulate(root: str, run_id: str) -> str:
    """Dask task: simulate run ``run_id`` of the workspace at ``root``, measure it, write its Paraver trace;
    returns its final state. Never raises: a failure is the run's ``failed`` state and one-line error."""
    from wattsched.analysis.node_states import node_states
    from wattsched.analysis.paraver import write_paraver
    from wattsched.experiments.runner import run_simulation
    from wattsched.experiments.sweep import Run, one_line_error, run_metrics

    workspace = Workspace(root)
    spec = workspace.spec(run_id)
    prefix = workspace.prefix(run_id)
    started = time.perf_counter()
    last = [0.0]

    def progress(now_s: float, done: int, total: int) -> None:
        wall = time.perf_counter()
        if wall - last[0] >= PROGRESS_PERIOD_S or done == total:
            last[0] = wall
            workspace.set_status(run_id, state="running", sim_time_s=float(now_s), jobs_done=int(done), jobs=int(total))

    try:
        workspace.set_status(run_id, state="running", sim_time_s=0.0, jobs_done=0, error="")
        platform = workspace.input_path("platform", spec.platform)
        workload = workspace.input_path("workload", spec.workload)
        options = workspace.resolved_options(spec.options)  # a model chosen on the page: its folder
        shown = {str(platform): spec.platform, str(workload): spec.workload, str(workspace.root): "workspace"}
        with logged_warnings(shown) as warnings:  # shown on the run's page, as 'wattsched run' prints them
            stats = run_simulation(platform, workload, prefix, scheduler=spec.scheduler, options=options,
                                   progress=progress)
        if warnings:
            workspace.set_status(run_id, warnings=warnings)
        run = Run(spec.name, str(platform), str(workload), spec.scheduler, options, str(prefix))
        metrics = _clean(dict(run_metrics(run)))
        from wattsched.simulator.platform import load_platform

        names = [host.name for host in load_platform(platform).hosts]
        states = node_states(str(prefix))
        write_paraver(states, prefix, names if len(names) == states.nb_hosts else None)
        workspace.set_status(run_id, state="done", error="", metrics=metrics, wall_s=time.perf_counter() - started,
                             sim_time_s=float(metrics.get("makespan_s") or 0.0), jobs_done=int(metrics["nb_jobs"]),
                             jobs=int(metrics["nb_jobs"]), events=stats.events)
        return "done"
    except Exception as error:  # noqa: BLE001 - the run fails, the page goes on
        logger.debug("run %s failed", run_id, exc_info=True)
        workspace.set_status(run_id, state="failed", error=one_line_error(error))
        return "failed"


class RunManager:
    """Launches runs as Dask tasks on a local cluster (started with the first run, closed by :meth:`close`).

    Args:
        workspace: where the runs live.
        workers: simulations at once (worker processes).
        processes: workers are processes (the server's default) or threads of this process (tests: faster
            to start).
    """

    def __init__(self, workspace: Workspace, *, workers: int = 2, processes: bool = True) -> None:
        self.workspace = workspace
        self.workers = workers
        self.processes = processes
        self._client: Any = None
        self._cluster: Any = None
        self._futures: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._closing = False

    def _start(self) -> Any:
        with self._lock:
            if self._client is None:
                self._closing = False
                from distributed import Client

                # workers' logs silenced: a run's error reaches its page through its future, and a worker
                # that dies through the nanny (KilledWorker); what is left is shutdown chatter (a heartbeat
                # to a scheduler that is closing, logged as an error with its traceback). In this process,
                # Dask's INFO lines too (workers starting, and at shutdown a closed comm logged with its
                # traceback); its warnings and errors stay.
                logging.getLogger("distributed").setLevel(logging.WARNING)
                # Dask's scratch folders (scheduler-*, worker-*) in the workspace, not in the system's /tmp
                import dask

                from wattsched.experiments.cluster import local_cluster

                scratch = self.workspace.root / SCRATCH
                scratch.mkdir(exist_ok=True)
                with dask.config.set({"temporary-directory": str(scratch)}):  # (worker processes ignore Ctrl-C)
                    self._cluster = local_cluster(self.workers, processes=self.processes,
                                                  local_directory=str(scratch))
                self._client = Client(self._cluster)
            return self._client

    def submit(self, run_id: str) -> None:
        """Queue run ``run_id`` (its folder and ``run.json`` exist)."""
        client = self._start()
        future = client.submit(simulate, str(self.workspace.root), run_id, pure=False, key=f"web-run-{run_id}")
        self._futures[run_id] = future
        future.add_done_callback(lambda f, rid=run_id: self._finished(rid, f))

    def _finished(self, run_id: str, future: Any) -> None:
        """A task that did not return (a worker died under it) fails its run with one line, unless the run
        recorded its end already (the cluster closing cancels the futures whose result it had not sent yet:
        a run that failed or finished keeps its own status and error), or :meth:`close` cancelled it."""
        self._futures.pop(run_id, None)
        if self._closing:  # its run is marked by close
            return
        try:
            if future.status != "finished" and self.workspace.status(run_id).get("state") not in ("done", "failed"):
                error = future.exception(timeout=5) if future.status == "error" else f"task {future.status}"
                from wattsched.experiments.sweep import one_line_error

                message = one_line_error(error) if isinstance(error, BaseException) else str(error)
                self.workspace.set_status(run_id, state="failed", error=message)
                logger.warning("run %s failed: %s", run_id, message)
        except Exception as error:  # noqa: BLE001 - a callback must not raise
            logger.warning("run %s: cannot record its end (%s)", run_id, error)

    def active(self) -> list[str]:
        return list(self._futures)

    def close(self) -> None:
        """Stop the cluster; the runs still going end ``interrupted``, as :meth:`Workspace.recover` marks them after a
        restart, without the temporary files their killed worker was writing. Marked once the cluster is closed: its
        worker processes, stopped or killed after a few seconds, write no status after that."""
        with self._lock:
            if self._client is None:
                return
            self._closing = True  # the futures the closing client cancels: no failures of their runs (_finished)
            going = list(self._futures)
            self._client.close()
            self._cluster.close()
            self._client = self._cluster = None
            self._futures.clear()
        for run_id in going:
            self._interrupted(run_id)

    def _interrupted(self, run_id: str) -> None:
        """Run ``run_id``, stopped with the server: ``interrupted`` unless it ended meanwhile."""
        from wattsched.base.fileio import remove_temporaries

        try:
            if self.workspace.status(run_id).get("state") in ACTIVE:
                self.workspace.set_status(run_id, state="interrupted", error=STOPPED_ERROR)
            remove_temporaries(output_files(self.workspace.prefix(run_id)).values())
        except (OSError, WattschedError) as error:  # the other runs are still marked
            logger.warning("run %s: cannot record its interruption (%s)", run_id, error)


def output_files(prefix: Path) -> dict[str, Path]:
    """The files a run's page offers to download, by name: Batsim's five CSVs and the Paraver trace."""
    from wattsched.base.batsim_files import output_paths

    files = {path.name.removeprefix(prefix.name + "_"): path for path in output_paths(prefix).values()}
    for ext in (".prv", ".pcf", ".row"):
        files[f"paraver{ext}"] = prefix.with_name(prefix.name + ext)
    return files
