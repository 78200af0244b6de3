"""Hunt 42: does each policy do what its paper's algorithm says? Independent oracles on whole runs.

Each oracle reads a run's outputs (``wattsched.api.simulate``: ``_jobs.csv``, ``_pstate_changes.csv``,
``_consumed_energy.csv``) with the workload and the platform, and recomputes the policy's defining property from
the paper (and the module docstring, for the choices the paper leaves open) without importing the scheduling
code under test (only the API, the platform generators and pandas are used):

* **EASY** (energy-budget paper, Algorithm 1; ``schedulers/backfill.py``'s docstring for the concrete
  reservation) and **FCFS**: at every decision time (a submission, a completion, a boot's end), the jobs that
  start are exactly those one EASY pass starts on the real state: FCFS while the head fits, then the head's
  shadow time from the running jobs' *walltime* ends (not their real ends), its reserved hosts chosen by the
  placement at that time, and every later job, in queue order, that fits now and ends by the shadow time or fits
  outside the reservation. This checks both "a backfilled job never delays the head" and "no job waits that
  could start without delaying it" (EASY is greedy); the head also starts by the shadow time computed when it
  first became the head. Queue order: submission time, then id string (Batsim behaviour 10). A job of zero work
  ends at its start (printed 1e-5 later, B17) and its completion is a new pass at the same time.
* **FairShare / EFS / FS+EFS** (EFS paper §III, eq. 1-4; §IV-A): the same EASY pass, on the queue sorted by each
  user's priority recomputed from the completed jobs (CPU-seconds, or the joules of ``_jobs.csv`` times the job's
  energy factor), decayed with the half-life, shares normalized over the users seen, eq. 3's decayed capacity,
  and for FS+EFS the two factors each divided by their maximum over the waiting users; ties by arrival.
* **UPAS** (UPAS paper §2.2, eq. 1-2): the gear each job ran at (its hosts' pstate at its start) is eq. 2's
  from the utilization of the previous interval (eq. 1, integrated from the jobs' real starts and ends) and the
  wait queue; EASY behind UPAS backfills with each job's walltime at its gear (β = 1: T·f_top/f).
* **ESC** (ESC paper §2.5; ``schedulers/esc.py``'s docstring for the rules' details): at every pass time
  k × period, the nodes booted are rule 1-3's (and ``min_on``'s) count, the lowest asleep ids, and the nodes
  switched off, in a pass that boots nothing, are the idle ones idle longer than ``idle_s`` (plus one per group
  whose mean wait is below ``lower_wait_s``), least recently used first, never below ``min_on``, the widest
  queued job's count, or the first queued job's nodes; no switch between passes; jobs start FCFS on the nodes
  that are on.
* **energyBud / reducePC / powercap** (energy-budget paper §IV-A "strictly respected"): the energy the platform
  used inside the window (from ``_consumed_energy.csv``) is at most B, on workloads the older oracle
  (tests/test_energy_budget_properties.py) does not draw: delay and composed profiles (jobs that draw less than
  P̃comp), jobs killed at their walltime, every placement, up to 16 hosts and 30 jobs.

Each oracle is shown able to fail (a mutated output or a known counter-example). Finding H42-1, fixed: UPAS counted
in WQ_size the jobs its own pass had started before the job (the queue of the pass's beginning), where its docstring
and the paper's "current number of jobs in the wait queue" do not.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, replace
from typing import Callable, Iterable

import pytest

from wattsched import api
from wattsched.platforms.generate import upas_platform_xml

INF = math.inf
EPS = 1e-6
SEEDS = range(4)


# =============================================================================================== outputs
@dataclass(frozen=True)
class Job:
    """One row of ``_jobs.csv`` with what the workload adds (user, energy factor, walltime asked)."""

    id: str
    sub: float
    res: int
    wall: float | None  # walltime of the run (``requested_time``: at the job's gear under DVFS)
    start: float | None
    end: float | None
    alloc: frozenset[int]
    state: str
    energy: float = 0.0
    user: str | None = None
    factor: float = 1.0
    asked_wall: float | None = None  # the workload's walltime


def parse_hosts(text: object) -> frozenset[int]:
    out: set[int] = set()
    for part in str(text).split():
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return frozenset(out)


def jobs_of(result: api.Result, workload: dict) -> list[Job]:
    entries = {str(j["id"]): j for j in workload["jobs"]}
    out = []
    for r in result.jobs.itertuples():
        started = r.final_state != "REJECTED"
        end = float(r.finish_time) if started else None
        if started and r.execution_time <= 1.5e-5:  # zero work: ends at its start, printed 1e-5 later (B17)
            end = float(r.starting_time)
        entry = entries[str(r.job_id)]
        out.append(Job(str(r.job_id), float(r.submission_time), int(r.requested_number_of_resources),
                       None if r.requested_time < 0 else float(r.requested_time),
                       float(r.starting_time) if started else None, end,
                       parse_hosts(r.allocated_resources) if started else frozenset(), r.final_state,
                       float(r.consumed_energy) if started else 0.0, entry.get("user"),
                       float(entry.get("energy_factor", 1.0)), entry.get("walltime")))
    return out


def pstate_rows(result: api.Result) -> list[tuple[float, frozenset[int], int]]:
    return [(float(r.time), parse_hosts(r.machine_id), int(r.new_pstate)) for r in result.pstate_changes.itertuples()]


def arrival(job: Job) -> tuple[float, str]:
    """Batsim submits jobs of the same time sorted by their id string (behaviour 10)."""
    return (job.sub, "w0!" + job.id)


# =============================================================================================== placements
def intervals(hosts: Iterable[int]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for h in sorted(hosts):
        if out and out[-1][1] == h - 1:
            out[-1][1] = h
        else:
            out.append([h, h])
    return [(a, b) for a, b in out]


def first_fit(free: frozenset[int], n: int) -> frozenset[int] | None:
    for a, b in intervals(free):
        if b - a + 1 >= n:
            return frozenset(range(a, a + n))
    return None


def best_fit(free: frozenset[int], n: int) -> frozenset[int] | None:
    fits = [(b - a, a) for a, b in intervals(free) if b - a + 1 >= n]
    return frozenset(range(min(fits)[1], min(fits)[1] + n)) if fits else None


def non_contiguous(free: frozenset[int], n: int) -> frozenset[int] | None:
    return frozenset(sorted(free)[:n]) if len(free) >= n else None


PLACE: dict[str, Callable[[frozenset[int], int], frozenset[int] | None]] = {
    "first-fit": first_fit, "best-fit": best_fit, "non-contiguous": non_contiguous}


def reserve(n: int, free_now: frozenset[int], free_then: frozenset[int], placement: str) -> frozenset[int] | None:
    """The head's reserved hosts once ``free_then`` is free: the placement's choice; non-contiguous: hosts not free
    now first (so that exactly |free_then| − n hosts stay outside, the classical count of extra processors)."""
    if placement != "non-contiguous":
        return PLACE[placement](free_then, n)
    if len(free_then) < n:
        return None
    later = sorted(free_then - free_now)[:n]
    return frozenset(later) | frozenset(sorted(free_now)[:n - len(later)])


# =============================================================================================== EASY / FCFS
Wall = Callable[[Job], "float | None"]


def easy_pass(t: float, queue: list[Job], running: list[tuple[float, frozenset[int]]], free: frozenset[int],
              placement: str, backfill: bool, wall: Wall) -> tuple[list[tuple[Job, frozenset[int]]], Job | None, float]:
    """One pass of Algorithm 1 on the queue (scheduling order): the jobs started with their hosts, the head left
    waiting and its shadow time. ``running``: (expected end = start + walltime, hosts)."""
    place = PLACE[placement]
    starts: list[tuple[Job, frozenset[int]]] = []
    running = list(running)
    i = 0
    for job in queue:  # FCFS while the first job fits
        hosts = place(free, job.res)
        if hosts is None:
            break
        starts.append((job, hosts))
        free -= hosts
        w = wall(job)
        running.append((t + (INF if w is None else w), hosts))
        i += 1
    if i >= len(queue) or not backfill:
        return starts, None, INF
    head = queue[i]
    shadow, reserved = t, reserve(head.res, free, free, placement)
    if reserved is None:  # the first expected end at which the head fits (same ends released together)
        shadow, then = INF, set(free)
        ends = sorted(running, key=lambda r: r[0])
        k = 0
        while k < len(ends) and reserved is None:
            shadow = ends[k][0]
            while k < len(ends) and ends[k][0] == shadow:
                then |= ends[k][1]
                k += 1
            reserved = reserve(head.res, free, frozenset(then), placement)
        if reserved is None:
            shadow = INF
    extra = free - (reserved or frozenset())
    for job in queue[i + 1:]:
        w = wall(job)
        if w is not None and t + w <= shadow:
            hosts = place(free, job.res)
        else:
            hosts = place(extra, job.res)  # runs past the shadow time: outside the reservation only
        if hosts is not None:
            starts.append((job, hosts))
            free -= hosts
            extra -= hosts
    return starts, head, shadow


Order = Callable[[float, list[Job], list[Job], set, list[Job]], list[Job]]


def replay(jobs: list[Job], nb_hosts: int, placement: str, *, backfill: bool = True, order: Order | None = None,
           wall_at: Callable[[Job, float, int], "float | None"] | None = None,
           available: Callable[[float], set[int]] | None = None, extra_times: Iterable[float] = ()) -> list:
    """At each decision time, the oracle's pass(es) on the real state against the real starts; then whether each
    job started by the shadow time promised when it first became the head (static orders). Returns the problems.

    ``order(t, waiting in arrival order, completed jobs, users seen, running jobs)`` sorts the queue (default
    FCFS); ``wall_at(job, t, nb waiting)`` is a waiting job's walltime if it started now (default its own);
    ``available(t)`` the hosts that are on (default all)."""
    ran = [j for j in jobs if j.start is not None]
    times = sorted({j.sub for j in jobs} | {j.end for j in ran if j.end is not None} | set(extra_times))
    problems: list = []
    promises: dict[str, tuple[float, float]] = {}
    for t in times:
        running = [j for j in ran if j.start < t - EPS and j.end > t + EPS]
        hosts = frozenset(range(nb_hosts)) if available is None else frozenset(available(t))
        free = hosts.difference(*(j.alloc for j in running))
        queue = sorted((j for j in ran if j.sub <= t + EPS and j.start >= t - EPS), key=arrival)
        if not queue:
            continue
        done = [j for j in ran if j.end <= t + EPS and j.start < t - EPS]
        seen = {j.user for j in jobs if j.sub <= t + EPS}
        expected = [(j.start + (INF if j.wall is None else j.wall), j.alloc) for j in running]
        want: dict[str, list[int]] = {}
        while queue:  # one pass, and one more after a pass that started jobs of zero work (their completions)
            if order is not None:
                queue = order(t, sorted(queue, key=arrival), done, seen, running)
            n = len(queue)

            def wall(job: Job, n: int = n, t: float = t) -> float | None:
                return job.wall if wall_at is None else wall_at(job, t, n)

            starts, head, shadow = easy_pass(t, queue, expected, free, placement, backfill, wall)
            if head is not None and order is None and head.id not in promises:
                promises[head.id] = (t, shadow)
            at_once = [(j, h) for j, h in starts if j.end == j.start]
            for j, h in starts:
                want[j.id] = sorted(h)
                free -= h
                if (j, h) not in at_once:
                    w = wall(j)
                    expected.append((t + (INF if w is None else w), h))
                    running.append(replace(j, alloc=h))
            if not at_once:
                break
            for j, h in at_once:
                free |= h
                done.append(j)
            ids = {j.id for j, _ in starts}
            queue = [j for j in queue if j.id not in ids]
        got = {j.id: sorted(j.alloc) for j in ran if j.sub <= t + EPS and abs(j.start - t) <= EPS}
        if want != got:
            problems.append(("pass", t, "oracle", want, "run", got))
    for job_id, (t, shadow) in promises.items():
        job = next(j for j in ran if j.id == job_id)
        if job.start > shadow + EPS:
            problems.append(("head delayed", job_id, "head at", t, "shadow", shadow, "started", job.start))
    return problems


def easy_workload(seed: int, nb_hosts: int, nb_jobs: int = 30, users: tuple = ()) -> dict:
    """Bursts of submissions (ties), compute, delay and zero-work jobs, walltimes absent, exact, loose or shorter
    than the run (killed), a job wider than the machine now and then (rejected)."""
    rng = random.Random(seed)
    jobs, profiles, t = [], {}, 0.0
    for k in range(1, nb_jobs + 1):
        t += rng.choice([0, 0, 0.5, 1, 5, 20, 60, 200])
        run = rng.choice([0, 1, 5, 10, 30, 60, 100, 300, 7.3])
        if run and rng.random() < 0.4 and not users:
            profiles[f"p{k}"] = {"type": "delay", "delay": run}
        else:
            profiles[f"p{k}"] = {"type": "parallel_homogeneous", "cpu": run * 100e6 * rng.choice([1, 1, 0.7]), "com": 0}
        job: dict = {"id": k, "subtime": t, "res": rng.randint(1, nb_hosts + (0 if users else 1)), "profile": f"p{k}"}
        factor = rng.choice([None, 1, 1, 1.5, 3, 0.5])
        if factor is not None:
            job["walltime"] = max(1, round(run * factor, 1))
        if users:
            job["user"] = rng.choice(users)
            energy_factor = rng.choice([None, 0.5, 1.0, 1.7])
            if energy_factor is not None:
                job["energy_factor"] = energy_factor
        jobs.append(job)
    return {"nb_res": nb_hosts, "jobs": jobs, "profiles": profiles}


def run(platform: str, workload: dict, scheduler: str, options: dict) -> tuple[api.Result, list[Job]]:
    result = api.simulate(platform, workload, scheduler, options)
    return result, jobs_of(result, workload)


EASY_CASES = [("easy-backfill", p) for p in PLACE] + [("fcfs", p) for p in PLACE]


@pytest.mark.parametrize("scheduler,placement", EASY_CASES, ids=[f"{s}-{p}" for s, p in EASY_CASES])
def test_easy_and_fcfs_start_exactly_the_jobs_of_algorithm_1(scheduler, placement):
    overtakes = 0
    for seed in SEEDS:
        nb_hosts = random.Random(seed).choice([4, 8, 16])
        _, jobs = run(api.taurus_platform(nb_hosts), easy_workload(seed, nb_hosts), scheduler, {"placement": placement})
        assert replay(jobs, nb_hosts, placement, backfill=scheduler != "fcfs") == [], seed
        ran = [j for j in jobs if j.start is not None]
        overtakes += sum(1 for a in ran for b in ran if arrival(a) < arrival(b) and b.start < a.start)
        if scheduler == "fcfs":  # never later than a job submitted after it
            assert [j.id for j in sorted(ran, key=arrival)] == [j.id for j in sorted(ran, key=lambda j: (j.start,
                                                                                                       arrival(j)))]
    assert (overtakes > 0) == (scheduler != "fcfs")  # the workloads do backfill


def test_the_easy_oracle_fails_on_other_schedules():
    """FCFS's outputs against the EASY oracle (a job that could have been backfilled waited), EASY's against the
    FCFS oracle, a backfilled job moved after the head's shadow time, and a backfilled job put on the reserved
    hosts for longer than the shadow time (it would delay the head): each is caught."""
    nb_hosts, placement = 8, "first-fit"
    work = easy_workload(1, nb_hosts)
    _, easy = run(api.taurus_platform(nb_hosts), work, "easy-backfill", {"placement": placement})
    _, fcfs = run(api.taurus_platform(nb_hosts), work, "fcfs", {"placement": placement})
    assert replay(fcfs, nb_hosts, placement) != []
    assert replay(easy, nb_hosts, placement, backfill=False) != []
    backfilled = [b for b in easy if b.start is not None and any(
        a.start is not None and arrival(a) < arrival(b) and b.start < a.start for a in easy)]
    b = backfilled[0]
    late = [replace(j, start=j.start + 1, end=j.end + 1) if j is b else j for j in easy]
    assert replay(late, nb_hosts, placement) != []
    # a hand-built counter-example on 6 hosts: at 1 the head (5 hosts) is promised hosts 0-4 at 100 (when r ends);
    # a 2-host job of walltime 500 backfilled on 4-5 at 1 delays it to 501
    rows = [Job("r", 0, 4, 100, 0, 100, frozenset(range(4)), "COMPLETED_SUCCESSFULLY"),
            Job("head", 1, 5, 100, 501, 601, frozenset(range(5)), "COMPLETED_SUCCESSFULLY"),
            Job("long", 1, 2, 500, 1, 501, frozenset({4, 5}), "COMPLETED_SUCCESSFULLY")]
    problems = replay(rows, 6, placement)
    assert ("pass", 1, "oracle", {}, "run", {"long": [4, 5]}) in problems
    assert ("head delayed", "head", "head at", 1, "shadow", 100, "started", 501) in problems


# =============================================================================================== fair share
LN2 = math.log(2.0)
TAURUS_FULL_W = 190.738  # the Taurus hosts' top-pstate computing power (api.taurus_platform's wattage_per_state)


def fair_share_order(kind: str, nb_hosts: int, options: dict) -> Order:
    """EFS paper eq. 1-4 (charge at the end unless ``charge: running``), FS+EFS §IV-A, SLURM's age factor."""
    hl = float(options.get("half_life_s", 7 * 86400.0))
    damping = float(options.get("damping", 1.0))
    shares = options.get("shares") or {}
    charge = options.get("charge", "end")
    total_norm = options.get("normalization", "capacity") == "total"
    age_weight, max_age = float(options.get("age_weight", 0.0)), float(options.get("max_age_s", 7 * 86400.0))

    def order(t: float, waiting: list[Job], done: list[Job], seen: set, running: list[Job]) -> list[Job]:
        def decay(dt: float) -> float:
            return 2.0 ** (-dt / hl)

        def integral(a: float, b: float) -> float:  # ∫_a^b 2^(−(t−τ)/hl) dτ
            return hl / LN2 * decay(t - b) * -math.expm1(-(b - a) * LN2 / hl)

        usage: dict[str, dict] = {"cpu": {}, "energy": {}}

        def add(measure: str, user: str | None, value: float) -> None:
            usage[measure][user] = usage[measure].get(user, 0.0) + value

        for j in done:  # eq. 2: decayed usage of the completed jobs
            run_s = j.end - j.start
            if charge == "end":
                add("cpu", j.user, len(j.alloc) * run_s * decay(t - j.end))
                add("energy", j.user, j.energy * j.factor * decay(t - j.end))
            else:
                w = integral(j.start, j.end)
                add("cpu", j.user, len(j.alloc) * w)
                add("energy", j.user, (j.energy / run_s if run_s else 0.0) * j.factor * w)
        if charge == "running":
            for j in running:
                add("cpu", j.user, len(j.alloc) * integral(j.start, t))
                add("energy", j.user, TAURUS_FULL_W * len(j.alloc) * j.factor * integral(j.start, t))
        total_share = sum(shares.get(u, 1.0) for u in seen | set(shares))  # eq. 1 over the users known so far
        capacity = {m: rate * hl / LN2 * -math.expm1(-t * LN2 / hl)  # eq. 3: decayed available resources
                    for m, rate in (("cpu", nb_hosts), ("energy", nb_hosts * TAURUS_FULL_W))}
        if total_norm:
            capacity = {m: sum(usage[m].values()) for m in usage}

        def exponent(user: str | None, measure: str) -> float:  # U/S/d of eq. 4
            r = usage[measure].get(user, 0.0)
            return 0.0 if not r or capacity[measure] <= 0 else \
                r / capacity[measure] / (shares.get(user, 1.0) / total_share) / damping

        users = {j.user for j in waiting}
        if kind in ("fairshare", "efs"):
            factor = {u: 2.0 ** -exponent(u, "cpu" if kind == "fairshare" else "energy") for u in users}
        else:  # FS+EFS: each factor divided by its maximum over the waiting users, summed
            factor = {u: 0.0 for u in users}
            for m in ("cpu", "energy"):
                x = {u: exponent(u, m) for u in users}
                for u in users:
                    factor[u] += 2.0 ** -(x[u] - min(x.values()))
        if age_weight and len(users) > 1:
            priority = {j.id: factor[j.user] + age_weight * min(1.0, (t - j.sub) / max_age) for j in waiting}
            return sorted(waiting, key=lambda j: -priority[j.id])
        if kind in ("fairshare", "efs"):  # F decreasing in U/S/d: compare exponents (F underflows to 0)
            x = {u: exponent(u, "cpu" if kind == "fairshare" else "energy") for u in users}
            return sorted(waiting, key=lambda j: x[j.user])
        return sorted(waiting, key=lambda j: -factor[j.user])

    return order


FS_OPTIONS = [{}, {"half_life_s": 300.0, "charge": "running"},
              {"half_life_s": 500.0, "normalization": "total", "damping": 0.3, "shares": {"a": 3, "b": 0.5}},
              {"half_life_s": 400.0, "shares": {"a": 3}, "damping": 2.0},
              {"half_life_s": 1e300}, {"half_life_s": 300.0, "age_weight": 0.5, "max_age_s": 600.0}]
FS_CASES = [(kind, i) for kind in ("fairshare", "efs", "fs-efs") for i in range(len(FS_OPTIONS))]


@pytest.mark.parametrize("kind,case", FS_CASES, ids=[f"{k}-{i}" for k, i in FS_CASES])
def test_fair_share_orders_start_the_jobs_of_the_best_priority_first(kind, case):
    options = FS_OPTIONS[case]
    for seed in range(3):
        rng = random.Random(seed)
        nb_hosts, placement = rng.choice([4, 8, 16]), rng.choice(list(PLACE))
        work = easy_workload(seed, nb_hosts, 36, users=("a", "b", "c", "d")[:rng.choice([2, 3, 4])])
        _, jobs = run(api.taurus_platform(nb_hosts), work, kind, {"placement": placement, **options})
        assert replay(jobs, nb_hosts, placement, order=fair_share_order(kind, nb_hosts, options)) == [], seed


def test_the_fair_share_oracle_fails_on_other_orders():
    """On a run of three users, each order's outputs are accepted by its own oracle only: FCFS's order, the two
    other fair-share orders and a charge while running are each caught."""
    nb_hosts, placement, options = 4, "first-fit", {"half_life_s": 300.0}
    work = easy_workload(0, nb_hosts, 36, users=("a", "b", "c"))
    kinds = ("fairshare", "efs", "fs-efs")
    for kind in kinds:
        _, jobs = run(api.taurus_platform(nb_hosts), work, kind, {"placement": placement, **options})
        assert replay(jobs, nb_hosts, placement) != []  # FCFS order
        for other in kinds:
            found = replay(jobs, nb_hosts, placement, order=fair_share_order(other, nb_hosts, options))
            assert (found == []) == (other == kind), (kind, other)
        assert replay(jobs, nb_hosts, placement, order=fair_share_order(kind, nb_hosts, {
            **options, "charge": "running"})) != []


# =============================================================================================== UPAS
GHZ = [2.3, 2.0, 1.7, 1.4, 1.1, 0.8]  # UPAS paper table 2's gears: pstates 0-5 of upas_platform_xml


def job_pstates(jobs: list[Job], rows: list[tuple[float, frozenset[int], int]]) -> dict[str, object]:
    """The pstate each job ran at: its hosts' last pstate (≥ 0) set at or before its start (times printed with 6
    significant digits, B33; one value unless its hosts differed)."""
    out: dict[str, object] = {}
    for j in jobs:
        if j.start is None:
            continue
        tol = max(EPS, abs(j.start) * 5e-6)
        found = set()
        for h in j.alloc:
            last = None
            for t, hosts, p in rows:
                if p >= 0 and h in hosts and t <= j.start + tol:
                    last = p
            found.add(last)
        out[j.id] = found.pop() if len(found) == 1 else tuple(sorted(found, key=str))
    return out


def utilization(jobs: list[Job], nb_hosts: int, a: float, b: float) -> float:
    """Eq. 1 over [a, b): processors × run time inside it over N_proc × T."""
    busy = sum(len(j.alloc) * max(0.0, min(b, j.end) - max(a, j.start)) for j in jobs if j.start is not None)
    return busy / (nb_hosts * (b - a))


def upas_gear(jobs: list[Job], nb_hosts: int, options: dict, t: float, wq_size: int) -> int:
    """Eq. 2 for a job started at ``t`` with ``wq_size`` other jobs waiting."""
    interval = options["interval_s"]
    k = math.floor(t / interval)
    u = 0.0 if k == 0 else utilization(jobs, nb_hosts, (k - 1) * interval, k * interval)  # U_{-1} = 0: empty
    if (options["wq_threshold"] is not None and wq_size > options["wq_threshold"]) or u >= options["u_upper"]:
        return 0
    return GHZ.index(options["f_upper_ghz"] if u >= options["u_lower"] else options["f_lower_ghz"])


def upas_workload(seed: int, nb_hosts: int, nb_jobs: int = 30) -> dict:
    rng = random.Random(seed)
    jobs, profiles, t = [], {}, 0.0
    for k in range(1, nb_jobs + 1):
        t += rng.choice([0, 0, 10, 60, 120, 300, 900])
        run_s = rng.randint(1, 900)
        profiles[f"p{k}"] = {"type": "parallel_homogeneous", "cpu": run_s * 2.3e9, "com": 0}
        jobs.append({"id": k, "subtime": t, "res": rng.randint(1, nb_hosts), "profile": f"p{k}",
                     "walltime": round(run_s * rng.choice([1.0, 1.2, 2, 3])) + 1})
    return {"nb_res": nb_hosts, "jobs": jobs, "profiles": profiles}


def upas_options(rng: random.Random) -> dict:
    return {"interval_s": rng.choice([60.0, 300.0, 600.0]), "u_upper": rng.choice([0.3, 0.6, 0.8, 1.0]),
            "u_lower": rng.choice([0.0, 0.2, 0.3]), "wq_threshold": rng.choice([0, 1, 4, None]),
            "f_upper_ghz": rng.choice([2.0, 1.7]), "f_lower_ghz": rng.choice([1.4, 1.1])}


def wq_size(jobs: list[Job], job: Job) -> int:
    """WQ_size at ``job``'s start, the job not counted, as the paper and upas.py's docstring read it: the jobs its
    pass started before it no longer wait, those it starts after it still do."""
    t = job.start
    waiting = [j for j in jobs if j.start is not None and j.sub <= t + EPS and j.start > t + EPS]
    same = [j for j in jobs if j is not job and j.start is not None and abs(j.start - t) <= EPS]
    return len(waiting) + sum(arrival(j) > arrival(job) for j in same)


@pytest.mark.parametrize("seed", range(8))
def test_upas_runs_each_job_at_the_gear_of_eq_2(seed):
    """Eq. 2 from eq. 1 recomputed on the outputs, for every job (WQ_size: :func:`wq_size`); the walltime of each job is its requested time at its gear (β = 1: × f_top / f); EASY behind
    UPAS backfills with the walltimes of the gears eq. 2 gives (``wq_threshold: null``: the gear does not depend on
    how WQ_size counts a pass's other jobs)."""
    rng = random.Random(seed)
    nb_hosts, options = rng.choice([4, 8, 16]), upas_options(rng)
    if seed % 2:
        options["wq_threshold"] = None
    placement = rng.choice(list(PLACE))
    work = upas_workload(seed, nb_hosts)
    result, jobs = run(upas_platform_xml(nb_hosts), work, "upas", {**options, "placement": placement})
    ran = [j for j in jobs if j.start is not None]
    gears = job_pstates(jobs, pstate_rows(result))
    for j in ran:
        want = upas_gear(ran, nb_hosts, options, j.start, wq_size(jobs, j))
        assert gears[j.id] == want, (j, gears[j.id], want)
        assert j.wall == pytest.approx(j.asked_wall * GHZ[0] / GHZ[gears[j.id]], rel=1e-6)
    if options["wq_threshold"] is None:
        def wall_at(job: Job, t: float, nb_waiting: int) -> float:
            return job.asked_wall * GHZ[0] / GHZ[upas_gear(ran, nb_hosts, options, t, 0)]

        assert replay(jobs, nb_hosts, placement, wall_at=wall_at) == []


def test_the_upas_oracle_fails_on_other_gears():
    """A run where some jobs are slowed: the gears read as all top, or eq. 2 with the thresholds swapped, or EASY
    replayed with the workload's walltimes, are caught."""
    rng = random.Random(5)
    options = {**upas_options(rng), "wq_threshold": None, "u_upper": 0.8, "u_lower": 0.3}
    work = upas_workload(5, 8)
    result, jobs = run(upas_platform_xml(8), work, "upas", options)
    ran = [j for j in jobs if j.start is not None]
    gears = job_pstates(jobs, pstate_rows(result))
    want = {j.id: upas_gear(ran, 8, options, j.start, 0) for j in ran}
    assert gears == want and len(set(want.values())) > 1
    swapped = {**options, "f_upper_ghz": options["f_lower_ghz"], "f_lower_ghz": options["f_upper_ghz"]}
    assert {j.id: upas_gear(ran, 8, swapped, j.start, 0) for j in ran} != gears
    assert replay([replace(j, wall=j.asked_wall) for j in jobs], 8, "first-fit") != []


def test_h42_1_a_job_started_after_the_others_of_its_pass_sees_them_gone():
    """UPAS paper eq. 2 with WQ_threshold 0, U_{-1} = 0: two 1-host jobs submitted at 0 on 4 idle processors. The
    pass starts job 1 while job 2 waits (top gear), then job 2 with nothing waiting: f_lower (1.4 GHz, pstate 3).
    Both ran at the top gear (finding H42-1: the pass's queue was counted for each of its jobs)."""
    work = {"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "p", "walltime": 200},
                                  {"id": 2, "subtime": 0, "res": 1, "profile": "p", "walltime": 200}],
            "profiles": {"p": {"type": "parallel_homogeneous", "cpu": 230e9, "com": 0}}}
    result, jobs = run(upas_platform_xml(4), work, "upas", {})
    assert job_pstates(jobs, pstate_rows(result)) == {"1": 0, "2": 3}


# =============================================================================================== ESC
SW_OFF, SW_ON, SLEEP = -2, -1, 1  # pstate rows of an ESC node (B45): switch-off, boot requests; asleep
ESC_OFF_S, ESC_ON_S = 480.0, 555.0  # its transitions (B45)


def esc_rows(rows: list[tuple[float, frozenset[int], int]], period: float) -> list[tuple[float, frozenset[int], int]]:
    """Exact times for the printed ones (6 significant digits, B33): a request at its pass (k × period), its end a
    transition later."""
    out, request = rows[:1], {}
    for t, hosts, p in rows[1:]:
        if p in (SW_OFF, SW_ON):
            t = round(t / period) * period
            request.update({h: (t, p) for h in hosts})
        else:
            began = {request.get(h) for h in hosts}
            if len(began) == 1 and None not in began:
                (at, kind), = began
                exact = at + (ESC_OFF_S if kind == SW_OFF else ESC_ON_S)
                if abs(exact - t) <= max(1e-5, abs(t) * 5e-6):
                    t = exact
        out.append((t, hosts, p))
    return out


def timelines(rows: list[tuple[float, frozenset[int], int]], nb_hosts: int) -> dict[int, list[tuple[float, int]]]:
    lines: dict[int, list[tuple[float, int]]] = {h: [] for h in range(nb_hosts)}
    for t, hosts, p in rows[1:]:
        for h in hosts:
            lines[h].append((t, p))
    return lines


def on_hosts(rows: list[tuple[float, frozenset[int], int]], nb_hosts: int) -> Callable[[float], set[int]]:
    """The hosts on (not switching, not asleep) when a pass at ``t`` starts jobs (it decides its switches after;
    the pass at 0 is SIMULATION_BEGINS's, before any submission, B7)."""
    lines = timelines(rows, nb_hosts)

    def available(t: float) -> set[int]:
        out = set()
        for h in range(nb_hosts):
            state = 0
            for at, p in lines[h]:
                if at > t + EPS or (p == SW_OFF and t > 0 and abs(at - t) <= EPS):
                    break
                state = p
            if state == 0:
                out.add(h)
        return out

    return available


def esc_problems(jobs: list[Job], rows: list[tuple[float, frozenset[int], int]], nb_hosts: int, options: dict,
                 placement: str) -> list:
    """ESC paper §2.5's rules at every pass k × period up to the last job end (module docstring)."""
    period, idle_s, min_on = options["period_s"], options["idle_s"], options["min_on"]
    groups, user_groups = options.get("groups") or {}, options.get("user_groups") or {}

    def threshold(group: str, key: str):
        return groups.get(group, {}).get(key, options.get(key))

    problems: list = []
    ran = [j for j in jobs if j.start is not None]
    lines = timelines(rows, nb_hosts)
    requests: dict[int, dict[int, set[int]]] = {}
    for t, hosts, p in rows[1:]:
        if p in (SW_OFF, SW_ON):
            k = round(t / period)
            if abs(k * period - t) > 1e-5:
                problems.append(("switch between passes", t, sorted(hosts), p))
            requests.setdefault(k, {SW_OFF: set(), SW_ON: set()})[p] |= set(hosts)

    def state(h: int, t: float) -> str:  # before the pass's decisions
        s = "on"
        for at, p in lines[h]:
            if at > t - 1e-5:
                break
            s = {SW_OFF: "switching off", SLEEP: "asleep", SW_ON: "booting", 0: "on"}.get(p, s)
        return s

    def last_use(h: int, t: float) -> float:  # end of its last job or of its last boot
        ends = [j.end for j in ran if h in j.alloc and j.end <= t + 1e-5]
        boots = [at for (at, p), (_, before) in zip(lines[h], [(0.0, 0)] + lines[h]) if p == 0 and before == SW_ON
                 and at <= t + 1e-5]
        return max([0.0, *ends, *boots])

    place = PLACE[placement]
    end_s = max((j.end for j in ran), default=0.0)
    k = -1
    while (k + 1) * period < end_s - 1e-5:
        k += 1
        t = k * period
        st = {h: state(h, t) for h in range(nb_hosts)}
        busy = set().union(*(j.alloc for j in ran if t > 0 and j.start <= t + 1e-5 < j.end))
        queue = sorted((j for j in jobs if t > 0 and j.sub <= t + 1e-5 and j.state != "REJECTED"
                        and j.start > t + 1e-5), key=arrival)
        on = {h for h in st if st[h] in ("on", "booting")}
        idle = {h for h in st if st[h] == "on" and h not in busy}
        booting = {h for h in st if st[h] == "booting"}
        asleep = sorted(h for h in st if st[h] == "asleep")
        done = requests.get(k, {SW_OFF: set(), SW_ON: set()})
        # switch-on (§2.5.1): rule 1 (the widest job does not fit on the nodes on), 2 (a group's mean wait), 3 (a
        # user's queued jobs); the largest count, lowest asleep ids (rule 1 with contiguity: the placement's choice)
        need, chosen = 0, None
        if queue:
            widest = max(j.res for j in queue)
            contiguous = placement != "non-contiguous"
            if widest > len(on) or (contiguous and place(frozenset(on), widest) is None):
                chosen = set(asleep[:max(0, widest - len(on))])
                if not chosen or (contiguous and place(frozenset(on | chosen), widest) is None):
                    found = place(frozenset(on) | frozenset(asleep), widest)
                    chosen = set(found) & set(asleep) if found is not None else set(asleep[:widest])
                need = len(chosen)

            def up_to(i: int) -> int:
                return sum(j.res for j in queue[:i + 1]) - len(idle) - len(booting)

            for group in {user_groups.get(j.user, "default") for j in queue}:
                index = [i for i, j in enumerate(queue) if user_groups.get(j.user, "default") == group]
                upper = threshold(group, "upper_wait_s")
                if upper is not None and sum(t - queue[i].sub for i in index) / len(index) > upper \
                        and up_to(index[0]) > need:
                    need, chosen = up_to(index[0]), None
            for user in {j.user for j in queue}:
                index = [i for i, j in enumerate(queue) if j.user == user]
                most = threshold(user_groups.get(user, "default"), "max_queued")
                if most is not None and len(index) > most and up_to(index[len(index) - most - 1]) > need:
                    need, chosen = up_to(index[len(index) - most - 1]), None
        boot = set(chosen) if chosen is not None and need else set(asleep[:max(0, min(need, len(asleep)))])
        if len(on) + len(boot) < min_on:
            boot |= set([h for h in asleep if h not in boot][:min_on - len(on) - len(boot)])
        if done[SW_ON] != boot:
            problems.append(("boots", t, sorted(done[SW_ON]), "expected", sorted(boot)))
        if boot:
            if done[SW_OFF]:
                problems.append(("switch-off in a pass that boots", t, sorted(done[SW_OFF])))
            continue
        # switch-off (§2.5.2): rule 4 (idle longer than idle_s, strictly), rule 5 (one more per group whose mean
        # wait is below lower_wait_s), least recently used first; kept on: min_on, the widest queued job's count
        # and the first queued job's nodes
        used = {h: last_use(h, t) for h in idle}
        if any(abs(t - used[h] - idle_s) < 1e-6 for h in idle):
            continue  # a tie with idle_s: either way is right
        floor = max(min_on, max((j.res for j in queue), default=0))
        kept = set(place(frozenset(on), queue[0].res) or ()) if queue else set()
        lru = sorted((h for h in idle if h not in kept), key=lambda h: (used[h], h))
        off = [h for h in lru if t - used[h] > idle_s][:max(0, len(on) - floor)]
        for group in {"default", *groups}:
            lower = threshold(group, "lower_wait_s")
            waits = [t - j.sub for j in queue if user_groups.get(j.user, "default") == group]
            if lower is not None and (sum(waits) / len(waits) if waits else 0.0) < lower:
                off += [h for h in lru if h not in off][:max(0, min(1, len(on) - floor - len(off)))]
        if done[SW_OFF] != set(off):
            problems.append(("switch-offs", t, sorted(done[SW_OFF]), "expected", sorted(off)))
    return problems


def esc_workload(seed: int, nb_hosts: int, nb_jobs: int = 14) -> dict:
    rng = random.Random(seed)
    jobs, profiles, t = [], {}, 0
    for k in range(1, nb_jobs + 1):
        t += rng.choice([0, 0, 20, 300, 1500, 4000])
        run_s = rng.randint(1, 2000)
        profiles[f"c{run_s}"] = {"type": "parallel_homogeneous", "cpu": run_s * 1e9, "com": 0}
        jobs.append({"id": k, "subtime": t, "res": rng.randint(1, nb_hosts), "profile": f"c{run_s}",
                     "walltime": run_s + 10, "user": rng.choice(["ann", "bob", "cid"])})
    return {"nb_res": nb_hosts, "jobs": jobs, "profiles": profiles}


def esc_options(rng: random.Random) -> dict:
    """Periods whose passes never meet the workload's integer times (a pass sees the events of its message)."""
    options = {"period_s": rng.choice([61.37, 7.31, 300.13]), "idle_s": rng.choice([0.0, 100.0, 1000.0]),
               "upper_wait_s": rng.choice([None, 0.0, 600.0]), "lower_wait_s": rng.choice([None, None, 0.0, 100.0]),
               "max_queued": rng.choice([None, 1, 3]), "min_on": rng.choice([0, 2])}
    if None not in (options["lower_wait_s"], options["upper_wait_s"]):
        options["lower_wait_s"] = min(options["lower_wait_s"], options["upper_wait_s"])
    if rng.random() < 0.5:
        options.update(user_groups={"ann": "g"}, groups={"g": {"upper_wait_s": 130.0, "max_queued": 1}})
    return options


def esc_run(seed: int, placement: str) -> tuple[list[Job], list, int, dict]:
    rng = random.Random(seed)
    nb_hosts, options = rng.choice([3, 6, 8]), esc_options(rng)
    result, jobs = run(api.esc_platform(nb_hosts), esc_workload(seed, nb_hosts), "esc",
                       {**options, "placement": placement})
    return jobs, esc_rows(pstate_rows(result), options["period_s"]), nb_hosts, options


@pytest.mark.parametrize("placement", ["non-contiguous", "first-fit"])
@pytest.mark.parametrize("seed", range(6))
def test_esc_switches_nodes_by_the_rules_of_section_2_5_and_starts_jobs_fcfs(seed, placement):
    jobs, rows, nb_hosts, options = esc_run(seed, placement)
    assert esc_problems(jobs, rows, nb_hosts, options, placement) == []
    boot_ends = [t for t, _, p in rows[1:] if p == 0]
    assert replay(jobs, nb_hosts, placement, backfill=False, available=on_hosts(rows, nb_hosts),
                  extra_times=boot_ends) == []


def test_the_esc_oracle_fails_on_other_switches():
    """A switch-off moved one period later, a boot dropped, and the rules read with another idle time or
    ``min_on``: each is caught."""
    jobs, rows, nb_hosts, options = esc_run(3, "non-contiguous")
    offs = [i for i, (_, _, p) in enumerate(rows) if p == SW_OFF]
    boots = [i for i, (_, _, p) in enumerate(rows) if p == SW_ON]
    assert offs and boots
    period = options["period_s"]
    late = list(rows)
    late[offs[0]] = (rows[offs[0]][0] + period, *rows[offs[0]][1:])
    assert esc_problems(jobs, late, nb_hosts, options, "non-contiguous") != []
    assert esc_problems(jobs, rows[:boots[0]] + rows[boots[0] + 1:], nb_hosts, options, "non-contiguous") != []
    assert esc_problems(jobs, rows, nb_hosts, {**options, "idle_s": options["idle_s"] + 2 * period},
                        "non-contiguous") != []
    assert esc_problems(jobs, rows, nb_hosts, {**options, "min_on": nb_hosts}, "non-contiguous") != []


# =============================================================================================== energy budgets
def energy_at(result: api.Result, t: float) -> float:
    """The platform's energy at ``t`` from ``_consumed_energy.csv`` (constant power between rows; after the last
    one, its ``wattmin``)."""
    prev_t, prev_e, prev_w = 0.0, 0.0, 0.0
    for row in result.consumed_energy.itertuples():
        if row.time >= t:
            return row.energy if row.time == prev_t else \
                prev_e + (row.energy - prev_e) * (t - prev_t) / (row.time - prev_t)
        prev_t, prev_e, prev_w = row.time, row.energy, row.wattmin
    return prev_e + prev_w * (t - prev_t)


def budget_case(seed: int) -> tuple[dict, str, dict, int, float, float, float]:
    rng = random.Random(seed)
    nb_hosts = rng.choice([4, 8, 16])
    mode = rng.choice(["energy-bud", "reduce-pc", "powercap"])
    shutdown = mode != "powercap" and rng.random() < 0.5  # powercap counts switching hosts as idle (§V-C)
    jobs, profiles, t = [], {}, 0.0
    for k in range(1, 31):
        t += rng.choice([0, 0, 5, 60, 300, 900])
        run_s = rng.randint(5, 2400)
        kind = rng.choice(["c", "c", "d", "m"])
        if kind == "c":
            profiles[f"p{k}"] = {"type": "parallel_homogeneous", "cpu": run_s * 100e6, "com": 0}
        elif kind == "d":
            profiles[f"p{k}"] = {"type": "delay", "delay": run_s}
        else:
            profiles[f"p{k}c"] = {"type": "parallel_homogeneous", "cpu": run_s * 50e6, "com": 0}
            profiles[f"p{k}d"] = {"type": "delay", "delay": run_s / 2}
            profiles[f"p{k}"] = {"type": "composed", "repeat": 2, "seq": [f"p{k}c", f"p{k}d"]}
        jobs.append({"id": k, "subtime": t, "res": rng.randint(1, nb_hosts), "profile": f"p{k}",
                     "walltime": max(1, round(run_s * rng.choice([0.5, 1.0, 1.0, 1.5, 3.0])))})
    work = {"nb_res": nb_hosts, "jobs": jobs, "profiles": profiles}
    horizon = t + sum(j["walltime"] for j in jobs) / nb_hosts
    ts = rng.choice([0.0, 0.2, 0.5]) * horizon
    te = ts + rng.choice([0.3, 0.6, 1.0]) * horizon + 600
    fraction = (0.2 if shutdown else 0.5) + 0.5 * rng.random()
    options = {"budget_fraction": fraction, "window_start_s": ts, "window_end_s": te, "shutdown": shutdown,
               "placement": rng.choice(list(PLACE))}
    if rng.random() < 0.3:
        options["monitoring_period_s"] = rng.choice([60.0, 600.0])
    budget = fraction * nb_hosts * 203.12 * (te - ts)  # B = fraction × hosts × P̃comp (Taurus: 203.12 W) × window
    return work, mode, options, nb_hosts, ts, te, budget


@pytest.mark.parametrize("seed", range(6))
def test_energy_budgets_are_never_exceeded_inside_the_window(seed):
    work, mode, options, nb_hosts, ts, te, budget = budget_case(seed)
    result = api.simulate(api.taurus_platform(nb_hosts), work, mode, options)
    used = energy_at(result, te) - energy_at(result, ts)
    assert used <= budget * (1 + 1e-9), (mode, options, used, budget)
    assert set(result.jobs.final_state) <= {"COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED"}


def test_the_budget_oracle_fails_on_a_smaller_budget_or_easy():
    """The same windows without a budget (EASY) use more than B, and a budget that binds uses more than 95 % of it:
    the check is not vacuous."""
    work, mode, options, nb_hosts, ts, te, budget = budget_case(7)  # energyBud, 96 % of B
    limited = api.simulate(api.taurus_platform(nb_hosts), work, mode, options)
    easy = api.simulate(api.taurus_platform(nb_hosts), work, "easy-backfill", {"placement": options["placement"]})
    used = energy_at(limited, te) - energy_at(limited, ts)
    assert 0.95 * budget < used <= budget
    assert energy_at(easy, te) - energy_at(easy, ts) > budget
