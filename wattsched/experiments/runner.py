"""One simulation, from inputs to Batsim's five output files: what ``wattsched run``, a sweep's runs and the
Python API (:mod:`wattsched.api`) all do.

Inputs may be given as files or as objects built in Python: a platform as a path, SimGrid XML text (e.g.
:func:`wattsched.platforms.generate.taurus_platform_xml`) or a loaded
:class:`~wattsched.simulator.platform.Platform`; a workload as a path, a Batsim JSON object (a dict) or a
loaded :class:`~wattsched.simulator.workload.Workload`.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Union

from wattsched.base.batsim_files import output_paths
from wattsched.base.errors import OutputError
from wattsched.base.validate import check_output_files
from wattsched.simulator.drivers import ProgressCallback, RunStats, run_inprocess, run_zmq
from wattsched.simulator.engine import Simulation
from wattsched.simulator.outputs import write_outputs
from wattsched.simulator.platform import Platform, load_platform
from wattsched.simulator.workload import Workload, load_workload

PlatformInput = Union[str, os.PathLike, Platform]
WorkloadInput = Union[str, os.PathLike, Mapping[str, Any], Workload]

__all__ = ["PlatformInput", "WorkloadInput", "as_platform", "as_workload", "check_prefix", "run_simulation"]


def check_prefix(prefix: str | os.PathLike) -> dict[str, Path]:
    """The five output paths of ``prefix``, once it is known they can be written (checked before a run).

    Raises:
        OutputError: the prefix names a folder (``results/`` or an existing ``results``: the files would land
            beside it, not in it), or an output cannot be written there (a parent is a file, read-only).
    """
    text = os.fspath(prefix)
    if not text or text.endswith(("/", os.sep)) or Path(text).is_dir():
        raise OutputError(f"output prefix {text!r} is a folder; give a prefix inside it, e.g. "
                          f"'{os.path.join(text, 'out')}'")
    paths = output_paths(text)
    check_output_files(list(paths.values()), f"output prefix {text}")
    return paths


def as_platform(platform: PlatformInput) -> Platform:
    """A loaded platform from a path, SimGrid XML text or a :class:`Platform`.

    Raises:
        InputError: unreadable or malformed platform (file and element named).
    """
    if isinstance(platform, Platform):
        return platform
    text = str(platform)
    if text.lstrip().startswith("<"):  # XML text, not a path
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "platform.xml"
            path.write_text(text)
            return load_platform(path)
    return load_platform(platform)


def as_workload(workload: WorkloadInput) -> Workload:
    """A loaded workload from a path, a Batsim JSON object or a :class:`Workload`.

    Raises:
        InputError: unreadable or malformed workload (file, job or profile named).
    """
    if isinstance(workload, Workload):
        return workload
    if isinstance(workload, Mapping):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "workload.json"
            path.write_text(json.dumps(workload))
            return load_workload(path)
    return load_workload(workload)


def run_simulation(platform: PlatformInput, workload: WorkloadInput, prefix: str | os.PathLike, *,
                   scheduler: str = "easy-backfill", options: Mapping[str, Any] | None = None,
                   dynamic_jobs: bool = False, acknowledge_dynamic_jobs: bool | None = None,
                   connect: str | None = None, progress: ProgressCallback | None = None,
                   timeout_s: float | None = None) -> RunStats:
    """Simulate ``workload`` on ``platform`` with a scheduler and write Batsim's five files to ``prefix``
    (atomically: a failed run writes nothing).

    Args:
        scheduler: a preset, a pybatsim entry-point name, ``package.module:Class`` or ``file.py[:Class]``.
        options: the scheduler's options (validated before the simulation starts).
        dynamic_jobs: the simulator accepts dynamic job registration (``--enable-dynamic-jobs``).
        acknowledge_dynamic_jobs: registrations are acknowledged (default: as ``dynamic_jobs``).
        connect: instead of loading a scheduler, act as Batsim for a scheduler process listening there.
        progress: called with (simulated time, jobs done, jobs) after every Batsim message.
        timeout_s: with ``connect``, give up when the scheduler does not answer a message within this many
            seconds (default: :data:`~wattsched.simulator.drivers.DEFAULT_TIMEOUT_S`).

    Raises:
        InputError: a bad platform or workload (file and field named).
        OptionError: a bad scheduler or option.
        OutputError: ``prefix`` cannot be written (checked before the simulation starts).
        ProtocolError: a scheduler reply Batsim would refuse, a peer that dies, stops answering or sends
            malformed messages.
    """
    from wattsched.schedulers.protocol import scheduler_handler

    check_prefix(prefix)
    handler = scheduler_handler(scheduler, dict(options or {})) if connect is None else None
    sim = Simulation(as_platform(platform), as_workload(workload), dynamic_jobs=dynamic_jobs,
                     acknowledge_dynamic_jobs=dynamic_jobs if acknowledge_dynamic_jobs is None else acknowledge_dynamic_jobs)
    if handler is not None:
        stats = run_inprocess(sim, handler, progress=progress)
    else:
        assert connect is not None
        stats = run_zmq(sim, connect, progress=progress, timeout_s=timeout_s)
    write_outputs(sim, prefix, scheduling_time_s=stats.scheduling_time_s, simulation_time_s=stats.simulation_time_s)
    return stats
