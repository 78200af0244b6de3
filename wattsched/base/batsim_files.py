"""Batsim's five output files: their kinds, names and columns (Batsim 4.2.1).

A run with export prefix ``results/out`` writes ``results/out_<kind>.csv`` for each kind of
:data:`OUTPUT_KINDS`. The embedded simulator writes them (:mod:`wattsched.simulator.outputs`) and the
analysis reads them (:mod:`wattsched.analysis.outputs`), real Batsim's included; both take the names
and columns from here. The formats are behaviours 28-33 of
``tests/fixtures/batsim-reference/README.md``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

#: The five output kinds, as in ``<prefix>_<kind>.csv``, in the order Batsim documents them.
OUTPUT_KINDS: Final[tuple[str, ...]] = ("jobs", "schedule", "machine_states", "consumed_energy", "pstate_changes")

#: ``_jobs.csv``: one row per job, in completion order (B28).
JOBS_COLUMNS: Final[tuple[str, ...]] = (
    "job_id", "workload_name", "profile", "submission_time", "requested_number_of_resources", "requested_time",
    "success", "final_state", "starting_time", "execution_time", "finish_time", "waiting_time", "turnaround_time",
    "stretch", "allocated_resources", "consumed_energy", "metadata",
)
#: ``_machine_states.csv``: host counts per state after each change (B32).
MACHINE_STATES_COLUMNS: Final[tuple[str, ...]] = (
    "time", "nb_sleeping", "nb_switching_on", "nb_switching_off", "nb_idle", "nb_computing",
)
#: ``_consumed_energy.csv``: cumulative energy at each job start / end and switch (B30).
CONSUMED_ENERGY_COLUMNS: Final[tuple[str, ...]] = ("time", "energy", "event_type", "wattmin", "epower")
#: ``_pstate_changes.csv``: initial pstates, requests and their completions (B31).
PSTATE_CHANGES_COLUMNS: Final[tuple[str, ...]] = ("time", "machine_id", "new_pstate")


#: The workload of the jobs a scheduler registers to replace others that start with another walltime or
#: profile (a job slowed by DVFS): ``resized!<workload>.<name>`` replaces ``<workload>!<name>``, which
#: Batsim reports as REJECTED (:func:`wattsched.analysis.outputs.merge_replacements` joins the two); a job of a
#: composed profile is replaced by ``<workload>!resized.<name>``, which names the original's profile (real Batsim
#: cannot run a registered composed profile).
REPLACEMENT_WORKLOAD: Final[str] = "resized"


def original_job_id(job_id: str) -> str:
    """The id of the job a replacement (:data:`REPLACEMENT_WORKLOAD`) stands for: ``resized!w0.7`` and
    ``w0!resized.7`` are ``w0!7``; any other id is itself."""
    workload, _, name = job_id.partition("!")
    if workload == REPLACEMENT_WORKLOAD:
        inner, _, bare = name.partition(".")
        return f"{inner}!{bare}"
    if name.startswith(f"{REPLACEMENT_WORKLOAD}."):
        return f"{workload}!{name[len(REPLACEMENT_WORKLOAD) + 1:]}"
    return job_id


def output_paths(prefix: str | os.PathLike) -> dict[str, Path]:
    """``{"jobs": Path("<prefix>_jobs.csv"), ...}`` for every kind."""
    text = os.fspath(prefix)
    return {kind: Path(f"{text}_{kind}.csv") for kind in OUTPUT_KINDS}
