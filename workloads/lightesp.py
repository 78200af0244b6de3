"""The Light-ESP workload of the EFS paper's table II, repeated, with users and energy factors.

**ESP** (Effective System Performance, Wong, Oliker, Kramer, Kaltz, Bailey, NERSC, SC 2000) is a synthetic
benchmark workload of 230 jobs of 14 types whose sizes are fractions of the machine; **Light-ESP**
shortens their run times so that the whole log turns around in about 15 minutes (EFS paper §IV-B). The EFS
paper adapts it to a 180-core cluster of 15 nodes × 12 cores with node-exclusive allocations, every job a
multiple of 12 cores (table II, column "Job size for cluster of 180 cores"):

====  =====  ==========  ======  ======
type  cores  (fraction)  jobs    run s
====  =====  ==========  ======  ======
A     12     0.03125     75      22
B     12     0.06250     9       27
C     96     0.50000     3       45
D     48     0.25000     3       51
E     96     0.50000     3       26
F     24     0.06250     9       154
G     36     0.12500     6       111
H     36     0.15820     6       89
I     12     0.03125     24      119
J     24     0.06250     24      60
K     24     0.09570     15      41
L     36     0.12500     36      30
M     48     0.25000     15      15
Z     180    1.0         2       20
====  =====  ==========  ======  ======

230 jobs; "theoretic run time" 935 s (Σ fraction × jobs × run time: the fractional sizes, not the
rounded ones, which hold 1,486 s of the whole machine).

**Nodes and hosts.** Our hosts are single-core (docs/architecture.md §4), so one 12-core node is one host
by default (``hosts_per_node`` = 1): the machine has 15 hosts, a job of ``c`` cores asks ``c / 12`` hosts,
and allocations are node-exclusive by construction, as the paper's. ``hosts_per_node`` = 12 gives one host
per core (180 hosts, jobs of ``c`` hosts); allocations may then straddle node boundaries, which the
paper's SLURM did not allow.

**Submission rules.** ESP's documented rules (Wong et al. 2000, §3, as we know them; ESP's and Light-ESP's
submission scripts were not available here, so the numbers marked *ours* are our choices):

1. the jobs other than the two Z jobs are submitted in a reproducible pseudo-random order (``seed``);
2. an initial batch is submitted at once: the first jobs of that order whose requested cores add up to at
   least twice the machine's (ESP: the initial batch asks for at least twice the available processors);
3. the other jobs follow one at a time at a constant interval (ESP: at regular intervals); *ours*: spread
   evenly over ``period_s`` (default 935 s, table II's theoretical run time), the i-th of n at
   ``i × period / (n + 1)``;
4. the two full-machine Z jobs: *ours*: the first when half the regular stream has been submitted, the
   second 1 s after the last other job (ESP submits the second Z job last). ESP requires Z jobs to start
   at once; here they get the priority their owner has under the order studied, like any job (the EFS
   paper does not say its SLURM gave them more);
5. the workload is repeated ``copies`` times (the paper: 4, "Light-ESP ×4"), copy ``k`` being the same
   jobs in the same order shifted by ``k × period_s``, so the copies follow each other as one stream.

Walltimes are the run times times ``walltime_factor`` (default 1: exact estimates; Batsim completes a job
ending exactly at its walltime successfully, behaviour 14). Profiles are ``parallel_homogeneous``, run
time × ``speed_flops`` flops per host.

**Users** (the two experiments of §IV-B):

* ``"same-workload"`` (§IV-B.1, §IV-C): "we divided the jobs from Light-ESP into three groups of equal
  sizes; then, we assumed that each group corresponds to a single user having different
  energy-efficiency", and "we are launching 4 times the same workload (light-ESP); each time changing the
  attributed user per group of jobs". *Ours*: the instances of each type are dealt in turn to groups 0, 1,
  2 (one deal over all types, so the groups hold 77, 77 and 76 jobs of nearly the same mix), and in copy
  ``k`` group ``g`` belongs to user ``(g + k) mod 3 + 1``. User 1 is green (``energy_factor`` 0.7), user 2
  normal (1.0), user 3 gluttonous (1.3): ``efficiencies``.
* ``"different-workloads"`` (§IV-B.2): three users with different workloads and the same efficiency
  (factor 1). *Ours*: each type's instances dealt in the pattern 1, 2, 2, 3, 3, 3, so users 1, 2 and 3
  submit about 1/6, 2/6 and 3/6 of every type (user 3 has "the highest workload").

Job ids are zero-padded strings in submission order (``"001"``, ``"002"``, …): Batsim submits jobs of the
same time in id-string order (behaviour 10), which is then this order. Every job also carries ``esp_type``
and ``esp_copy`` (Batsim ignores them).

Command line: ``wattsched lightesp --copies 4 --users same-workload --output lightesp.json``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from wattsched.base.errors import OptionError
from wattsched.base.validate import check_count, option_error
from wattsched.energy_models.accounting import ENERGY_FACTOR_FIELD
from wattsched.workloads.swf import profile_name

__all__ = ["EspType", "LIGHT_ESP", "CORES_PER_NODE", "NODES", "THEORETICAL_RUN_S", "USER_MODES",
           "light_esp", "nb_hosts"]


@dataclass(frozen=True)
class EspType:
    """One row of table II: type, cores on the 180-core cluster, fraction of the machine, jobs, run time."""

    name: str
    cores: int
    fraction: float
    count: int
    run_s: float


LIGHT_ESP: tuple[EspType, ...] = (
    EspType("A", 12, 0.03125, 75, 22),
    EspType("B", 12, 0.06250, 9, 27),
    EspType("C", 96, 0.50000, 3, 45),
    EspType("D", 48, 0.25000, 3, 51),
    EspType("E", 96, 0.50000, 3, 26),
    EspType("F", 24, 0.06250, 9, 154),
    EspType("G", 36, 0.12500, 6, 111),
    EspType("H", 36, 0.15820, 6, 89),
    EspType("I", 12, 0.03125, 24, 119),
    EspType("J", 24, 0.06250, 24, 60),
    EspType("K", 24, 0.09570, 15, 41),
    EspType("L", 36, 0.12500, 36, 30),
    EspType("M", 48, 0.25000, 15, 15),
    EspType("Z", 180, 1.0, 2, 20),
)
CORES_PER_NODE = 12
NODES = 15
#: Table II's "theoretic run time" of one Light-ESP, seconds.
THEORETICAL_RUN_S = 935.0
USER_MODES = ("same-workload", "different-workloads")
#: Energy factor of users 1, 2, 3 in the "same-workload" experiment: green, normal, gluttonous.
DEFAULT_EFFICIENCIES = (0.7, 1.0, 1.3)


def nb_hosts(hosts_per_node: int = 1) -> int:
    """Hosts of the Light-ESP machine: 15 nodes × ``hosts_per_node``."""
    return NODES * hosts_per_node


def _deal(pattern: Sequence[int]) -> list[tuple[EspType, int]]:
    """(type, group) of every job, types in table order, instances dealt in turn along ``pattern``."""
    cycle = itertools.cycle(pattern)
    return [(t, next(cycle)) for t in LIGHT_ESP for _ in range(t.count)]


def light_esp(*, copies: int = 4, users: str = "same-workload", efficiencies: Sequence[float] = DEFAULT_EFFICIENCIES,
              seed: int = 1, hosts_per_node: int = 1, period_s: float = THEORETICAL_RUN_S,
              walltime_factor: float = 1.0, speed_flops: float = 100e6) -> dict[str, Any]:
    """A Batsim workload of ``copies`` Light-ESPs with users (module docstring).

    Args:
        copies: number of Light-ESPs, one after the other (the paper: 4).
        users: ``"same-workload"`` or ``"different-workloads"`` (module docstring).
        efficiencies: energy factor of users 1, 2, 3 in ``"same-workload"`` (default 0.7, 1.0, 1.3).
        seed: seed of the submission order.
        hosts_per_node: hosts per 12-core node (1: a host is a node; 12: a host is a core).
        period_s: time between the starts of two copies, over which a copy's stream is spread.
        walltime_factor: walltime / run time (≥ 1).
        speed_flops: host speed the run times are meant at (flop/s).

    Raises:
        OptionError: a value out of range.
    """
    if copies < 1:
        raise OptionError(f"copies must be at least 1, got {copies}")
    if users not in USER_MODES:
        raise OptionError(f"users must be one of {'|'.join(USER_MODES)}, got {users!r}")
    if len(efficiencies) != 3 or not all(e > 0 for e in efficiencies):
        raise OptionError(f"efficiencies must be three numbers > 0, got {list(efficiencies)}")
    if hosts_per_node < 1:
        raise OptionError(f"hosts_per_node must be at least 1, got {hosts_per_node}")
    if not period_s > 0:
        raise OptionError(f"period_s must be > 0, got {period_s}")
    if not walltime_factor >= 1:
        raise OptionError(f"walltime_factor must be at least 1, got {walltime_factor}")
    if not speed_flops > 0:
        raise OptionError(f"speed_flops must be > 0, got {speed_flops}")
    check_count(copies * 230, "jobs", "Light-ESP", "copies", "jobs (230 per copy)", option_error)
    check_count(hosts_per_node * 15, "hosts", "Light-ESP", "hosts_per_node", "hosts (15 nodes)", option_error)
    check_count(copies * period_s, "time_s", "Light-ESP", "period_s", "s of submissions (copies × period)",
                option_error)
    longest_s = max(t.run_s for t in LIGHT_ESP)
    check_count(longest_s * walltime_factor, "time_s", "Light-ESP", "walltime_factor",
                f"s of walltime (the longest job, {longest_s:g} s × the factor)", option_error)
    if not math.isfinite(longest_s * speed_flops):
        raise OptionError(f"speed_flops (--speed) {speed_flops:g}: a job of {longest_s:g} s would need more flops "
                          "than a workload can hold")

    pattern = (0, 1, 2) if users == "same-workload" else (1, 2, 2, 3, 3, 3)
    dealt = _deal(pattern)
    regular = [job for job in dealt if job[0].name != "Z"]
    zjobs = [job for job in dealt if job[0].name == "Z"]
    rng = np.random.default_rng(seed)
    regular = [regular[i] for i in rng.permutation(len(regular))]

    machine_cores = NODES * CORES_PER_NODE
    asked, initial = 0, 0
    while initial < len(regular) and asked < 2 * machine_cores:
        asked += regular[initial][0].cores
        initial += 1
    rest = len(regular) - initial
    step = period_s / (rest + 1)
    times = [0.0] * initial + [round((i + 1) * step, 3) for i in range(rest)]
    z_times = [times[initial + rest // 2] if rest else 0.0, (times[-1] if times else 0.0) + 1.0]
    schedule = sorted(list(zip(times, regular)) + list(zip(z_times, zjobs)), key=lambda x: x[0])  # stable

    profiles: dict[str, dict[str, Any]] = {}
    jobs: list[dict[str, Any]] = []
    width = len(str(copies * len(schedule)))  # zero-padded ids: Batsim submits same-time jobs by id string
    for k in range(copies):
        offset = k * period_s
        for t, (kind, group) in schedule:
            if users == "same-workload":
                user = (group + k) % 3 + 1
                factor = float(efficiencies[user - 1])
            else:
                user, factor = group, 1.0
            flops = kind.run_s * speed_flops
            name = profile_name(flops)
            profiles.setdefault(name, {"type": "parallel_homogeneous", "cpu": flops, "com": 0})
            jobs.append({
                "id": f"{len(jobs) + 1:0{width}d}",
                "subtime": round(offset + t, 3),
                "res": kind.cores // CORES_PER_NODE * hosts_per_node,
                "profile": name,
                "walltime": kind.run_s * walltime_factor,
                "user": user,
                ENERGY_FACTOR_FIELD: factor,
                "esp_type": kind.name,
                "esp_copy": k,
            })
    meta = {
        "generator": "wattsched.workloads.lightesp",
        "reference": "EFS paper table II (Light-ESP on 15 nodes x 12 cores)",
        "copies": copies, "users": users, "efficiencies": list(efficiencies) if users == "same-workload" else None,
        "seed": seed, "hosts_per_node": hosts_per_node, "period_s": period_s, "walltime_factor": walltime_factor,
        "speed_flops": speed_flops, "initial_batch_jobs": initial,
    }
    return {"nb_res": nb_hosts(hosts_per_node), "jobs": jobs, "profiles": profiles, "meta": meta}
