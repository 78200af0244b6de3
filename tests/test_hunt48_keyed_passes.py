"""Hunt 48: commit 8173461's two optimisations of EASY over EAMC's job-partition entries never change a schedule,
in the compositions the preset tests (``test_eamc_properties.py``) do not run: ``compose`` with placement
``partitions`` and every entry order, FCFS/FIFO and a dynamic order (fair share), every EAMC frequency and ``top``,
no admission, energyBud / reducePC / powercap with a budget that binds, no power manager or the shutdown, on
platforms of 2 and 3 partitions and one whose partition p1 is two intervals of host ids, with jobs without ``app``,
of one partition, as wide as a partition, whose walltime is their run time, many submitted at once; also with the
translator scheduling after every event (``per_event``).

The optimisations (``schedulers/backfill.py``):

1. a pass over entries that follows nothing but the acknowledgements of the core's own requests is not made
   (``EasyBackfilling._select_entries``, ``_Kept``; ``backfill.KEEP_PASSES = False`` disables it);
2. EASY visits only the entries that their partition's widest free interval holds (``EntryQueue.fitting``; an
   order whose ``sort`` returns a plain list disables it), and asks ``Placer.widest_fit`` of each fit key before
   placing (disabled here by a ``widest_fit`` that answers the number of hosts free, the pre-commit loop).

Each scenario runs with both on, both off, each alone, and both off with ``widest_fit`` disabled, and compares
every job's id, final state, start, end and hosts, the pstate changes, Batsim's message count and the energy.
Compositions the library refuses before the run (OptionError / InputError: power ``esc`` and frequency ``upas``
behind ``partitions``, a budget below the idle platform's) are passed over with ``assume``.

Found by this hunt and fixed with it (tests at the end of the file and in ``test_adapter.py``): a partition of two
ranges of host ids took a job as wide as both, which then waited for ever; ``per_event`` scheduling never acted on
a switch's end, a call or an energy ANSWER (a deadlock behind a power manager or a budget); a budget's refusals
before placement read the job's walltime as a bound of its end, which a faster partition shortens.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import logging
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from procset import ProcSet

from wattsched.base.errors import InputError, OptionError
from wattsched.base.hostsets import size
from wattsched.platforms.generate import eamc_platform_xml
from wattsched.schedulers import backfill as backfill_module
from wattsched.schedulers.budget.energy_bud import EnergyBudget
from wattsched.schedulers.eamc import PartitionPlacement, _EntryOrder
from wattsched.schedulers.presets import build
from wattsched.schedulers.protocol import BatsimTranslator, queued_job, scheduler_handler
from wattsched.simulator.drivers import run_inprocess
from wattsched.simulator.engine import Simulation
from wattsched.simulator.platform import load_platform
from wattsched.simulator.workload import load_workload

ENTRY_ORDERS = ("eamc-reorder", "eamc-priority-inc", "eamc-priority-inc-v", "requested-partitions",
                "favoured-partition")
FREQUENCIES = ("top", "eamc", "min-runtime", "min-energy")
TOP_GHZ = {"p1": 2.7, "p2": 3.1, "p3": 2.7}
#: both on; both off; only 1; only 2; both off and no widest_fit bound in EASY's loop (the pre-commit loop)
MODES = ("on", "off", "keep", "fit", "base")
FAST = settings(deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                       HealthCheck.filter_too_much])


@pytest.fixture(autouse=True)
def _quiet():
    """The runs warn of jobs without ``app`` once each: thousands of lines otherwise."""
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


# ------------------------------------------------------------------------------------------------ platforms
def _three_partitions_xml(a: int, b: int, c: int) -> str:
    """``eamc_platform_xml((a, b))`` plus a cluster ``p3`` of ``c`` hosts of p1's node (partition ``p3``, module
    ``normal``), ids after p2's."""
    xml = eamc_platform_xml((a, b))
    start = xml.index('  <cluster id="p1"')
    block = xml[start:xml.index("</cluster>", start) + len("</cluster>\n")]
    p3 = (block.replace('id="p1"', 'id="p3"').replace('prefix="p1-"', 'prefix="p3-"')
          .replace('router_id="p1_router"', 'router_id="p3_router"')
          .replace(f'radical="0-{a - 1}"', f'radical="0-{c - 1}"')
          .replace('<prop id="partition" value="p1" />', '<prop id="partition" value="p3" />'))
    i = xml.index('  <link id="backbone"')
    xml = xml[:i] + p3 + xml[i:]
    routes = "".join(f'  <zoneRoute src="{s}" dst="{d}" gw_src="{gs}" gw_dst="{gd}"><link_ctn id="backbone" />'
                     "</zoneRoute>\n" for s, d, gs, gd in (("master_zone", "p3", "master_host", "p3_router"),
                                                            ("p1", "p3", "p1_router", "p3_router"),
                                                            ("p2", "p3", "p2_router", "p3_router")))
    j = xml.index("</zone>\n</platform>")
    return xml[:j] + routes + xml[j:]


def _split_xml(a: int, b: int, c: int) -> str:
    """Partition p1 on hosts ``0 … a-1`` and ``a+b … a+b+c-1`` (two intervals), p2 between them."""
    xml = _three_partitions_xml(a, b, c)
    i = xml.index('<cluster id="p3"')
    j = xml.index("</cluster>", i)
    return xml[:i] + xml[i:j].replace('<prop id="partition" value="p3" />', '<prop id="partition" value="p1" />') \
        + xml[j:]


_PLATFORMS: dict[tuple, Path] = {}


def _platform(tmp: Path, shape: tuple) -> Path:
    """``("two", a, b)``, ``("three", a, b, c)`` or ``("split", a, b, c)``, written once per session."""
    path = _PLATFORMS.get(shape)
    if path is None or not path.exists():
        kind, sizes = shape[0], shape[1:]
        text = (eamc_platform_xml(sizes) if kind == "two" else _three_partitions_xml(*sizes) if kind == "three"
                else _split_xml(*sizes))
        path = tmp / ("-".join(map(str, shape)) + ".xml")
        path.write_text(text)
        _PLATFORMS[shape] = path
    return path


def test_the_eamc_platform_generator_takes_two_partitions_only() -> None:
    """``eamc_platform_xml`` refuses three sizes (an OptionError, not a platform of 3 partitions): the 3-partition
    platforms here add a cluster to its XML."""
    with pytest.raises(OptionError, match="two positive host counts"):
        eamc_platform_xml((3, 3, 3))


# ------------------------------------------------------------------------------------------------ runs
def _schedule(platform: Path, workload: dict, options: dict, mode: str, *, per_event: bool = False,
              tmp: Path) -> tuple[tuple, dict]:
    """The run's schedule (jobs, pstate changes, message count, energy) with the optimisations of ``mode``, and
    counts: ``skips`` (passes not made), ``restarts`` (the head's job started through a later entry),
    ``refused_before_skip`` (skips after a pass whose budget refused a start)."""
    path = tmp / "w.json"
    path.write_text(json.dumps(workload))
    same_machine, select, select_entries = (backfill_module._same_machine, backfill_module.EasyBackfilling._select,
                                            backfill_module.EasyBackfilling._select_entries)
    sort, widest_fit, can_start = _EntryOrder.sort, PartitionPlacement.widest_fit, EnergyBudget.can_start
    counts = {"skips": 0, "restarts": 0, "refusals": 0, "refused_before_skip": 0, "passes": 0}
    last = {"refusals": 0}

    def counting_same(*args):  # type: ignore[no-untyped-def]
        answer = same_machine(*args)
        counts["skips"] += answer
        if answer and last["refusals"]:
            counts["refused_before_skip"] += 1
        return answer

    def counting_select(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        answer = select(self, *args, **kwargs)
        counts["restarts"] += answer
        return answer

    def counting_entries(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        before = counts["refusals"]
        skips = counts["skips"]
        select_entries(self, *args, **kwargs)
        counts["passes"] += 1
        if counts["skips"] == skips:  # a pass made: its refusals
            last["refusals"] = counts["refusals"] - before

    def counting_can_start(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        answer = can_start(self, *args, **kwargs)
        counts["refusals"] += not answer
        return answer

    old = backfill_module.KEEP_PASSES
    backfill_module.KEEP_PASSES = mode in ("on", "keep")
    backfill_module._same_machine = counting_same
    backfill_module.EasyBackfilling._select = counting_select  # type: ignore[method-assign]
    backfill_module.EasyBackfilling._select_entries = counting_entries  # type: ignore[method-assign]
    EnergyBudget.can_start = counting_can_start  # type: ignore[method-assign]
    if mode in ("off", "keep", "base"):
        _EntryOrder.sort = lambda self, jobs, view: list(sort(self, jobs, view))  # type: ignore[method-assign]
    if mode == "base":
        PartitionPlacement.widest_fit = lambda self, key, free: size(free)  # type: ignore[method-assign]
    refuses, refuses_from = EnergyBudget.refuses, EnergyBudget.refuses_from
    if mode == "exact":  # the budget asked after placement only (can_start), never from its refusals before
        EnergyBudget.refuses = lambda self, job, view: False  # type: ignore[method-assign]
        EnergyBudget.refuses_from = lambda self, res, end_s, view: False  # type: ignore[method-assign]
    try:
        sim = Simulation(load_platform(platform), load_workload(path), dynamic_jobs=True,
                         acknowledge_dynamic_jobs=True)
        handler = (BatsimTranslator(build("compose", dict(options)), per_event=True) if per_event
                   else scheduler_handler("compose", options))
        run_inprocess(sim, handler)
    finally:
        backfill_module.KEEP_PASSES = old
        backfill_module._same_machine = same_machine
        backfill_module.EasyBackfilling._select = select  # type: ignore[method-assign]
        backfill_module.EasyBackfilling._select_entries = select_entries  # type: ignore[method-assign]
        EnergyBudget.can_start = can_start  # type: ignore[method-assign]
        _EntryOrder.sort = sort  # type: ignore[method-assign]
        PartitionPlacement.widest_fit = widest_fit  # type: ignore[method-assign]
        EnergyBudget.refuses, EnergyBudget.refuses_from = refuses, refuses_from  # type: ignore[method-assign]
    jobs = sorted((str(j.job.id), str(j.status), j.start_s, j.end_s, j.alloc_str) for j in sim.iter_jobs())
    counts["keeps"] = handler.policy.keeps_reservation
    return (jobs, [tuple(row) for row in sim.pstate_rows], sim.nb_messages, round(sim.energy_j, 6)), counts


def _compare(tmp: Path, shape: tuple, workload: dict, options: dict, per_event: bool = False,
             modes: tuple[str, ...] = MODES) -> dict:
    """Runs ``modes`` (the first one ``on``); assumes the composition is accepted; asserts equal schedules, and no
    pass skipped where optimisation 1 is off or the pieces do not keep a pass's conclusions. Returns ``on``'s
    counts."""
    platform = _platform(tmp, shape)
    try:
        reference, counts = _schedule(platform, workload, options, "on", per_event=per_event, tmp=tmp)
    except (OptionError, InputError):
        assume(False)
        raise  # (unreachable)
    if not counts["keeps"]:
        assert counts["skips"] == 0, options
    for mode in modes[1:]:
        other, other_counts = _schedule(platform, workload, options, mode, per_event=per_event, tmp=tmp)
        assert other == reference, (mode, shape, options, workload)
        if mode in ("off", "fit", "base"):
            assert other_counts["skips"] == 0
    return counts


@st.composite
def scenarios(draw, orders, frequencies, admissions, powers, *, max_jobs: int = 16) -> tuple:
    """(platform shape, workload, compose options, per_event)."""
    options = {"order": draw(st.sampled_from(orders)), "backfill": "easy", "placement": "partitions",
               "frequency": draw(st.sampled_from(frequencies)), "admission": draw(st.sampled_from(admissions)),
               "power": draw(st.sampled_from(powers))}
    if draw(st.integers(0, 3)) == 0:
        options["t_weight"] = 1.5
    if draw(st.integers(0, 3)) == 0:
        options["epm"] = "plugin"
    if options["order"] == "eamc-priority-inc-v":
        options["threshold"] = draw(st.sampled_from([0.0, 0.1, 0.35]))
    kind = draw(st.sampled_from(["two", "two", "three", "split"]))
    sizes = tuple(draw(st.integers(3, 8)) for _ in range(2 if kind == "two" else 3))
    names = ["p1", "p2", "p3"][:3 if kind == "three" else 2]
    # each partition's hosts (a job wider than every range of a split partition goes to another one, or is refused)
    widest = dict(zip(names, sizes)) if kind != "split" else {"p1": sizes[0] + sizes[2], "p2": sizes[1]}
    n = draw(st.integers(1, max_jobs))
    jobs, profiles = [], {}
    t = 0
    for i in range(n):
        t += draw(st.sampled_from([0, 0, 0, 1, 5, 50, 300, 1000]))  # many at the same time
        parts = None if draw(st.integers(0, 3)) == 0 else draw(
            st.permutations(names).flatmap(lambda p: st.integers(1, len(p)).map(lambda k: p[:k])))
        usable = names if parts is None else parts
        cap = max(widest[p] for p in usable)
        res = draw(st.one_of(st.just(cap), st.integers(1, cap)))  # as wide as a partition, often
        run = draw(st.sampled_from([1, 10, 100, 500, 1000, 2000]))
        walltime = run + draw(st.sampled_from([0, 0, 1, 100, 1000]))  # the run time, often
        speed = TOP_GHZ[usable[0]] * 1e9
        profiles[f"r{i}"] = ({"type": "parallel_homogeneous", "cpu": run * speed, "com": 0} if draw(st.booleans())
                             else {"type": "delay", "delay": run})
        job = {"id": i, "subtime": t, "res": res, "profile": f"r{i}", "walltime": walltime}
        if draw(st.integers(0, 4)):  # else no app
            job["app"] = draw(st.integers(1, 8))
        if parts is not None:
            job["partitions"] = list(parts)
        jobs.append(job)
    workload = {"nb_res": sum(sizes), "jobs": jobs, "profiles": profiles}
    if options["admission"] != "none":  # a window inside the run, a budget that binds
        start = draw(st.sampled_from([0, 10, 100, 1000]))
        options.update(budget_fraction=draw(st.sampled_from([0.3, 0.55, 0.7])), window_start_s=float(start),
                       window_end_s=float(start + t + draw(st.sampled_from([600, 2100, 5100]))),
                       monitoring_period_s=float(draw(st.sampled_from([60, 600]))))
    if options["power"] == "shutdown":
        options["sleep_pstate"] = 1
    per_event = draw(st.integers(0, 4)) == 0
    return (kind, *sizes), workload, options, per_event


# ------------------------------------------------------------------------------------------------ schedules
def _events(counts: dict) -> None:
    """What the example exercised (``--hypothesis-show-statistics``)."""
    event(f"passes skipped: {'yes' if counts['skips'] else 'no'}")
    event(f"restarts (head's job through a later entry): {'yes' if counts['restarts'] else 'no'}")
    event(f"budget refusals: {'yes' if counts['refusals'] else 'no'}")


@settings(FAST, max_examples=150)
@given(scenario=scenarios(ENTRY_ORDERS + ("fcfs", "fifo"), FREQUENCIES, ("none", "none", "energy-bud", "reduce-pc"),
                          ("none",)))
def test_compositions_that_keep_passes_schedule_as_full_passes(tmp_path_factory, scenario) -> None:
    """Where ``keeps_reservation`` holds (an entry order or a static one, no power manager, a frequency per
    partition), with no admission or an energy budget (its refusals kept before and after its window): the schedule
    is the same with both optimisations, with neither, with each alone, and with the pre-commit loop."""
    shape, workload, options, per_event = scenario
    counts = _compare(tmp_path_factory.mktemp("keep"), shape, workload, options, per_event)
    assert counts["keeps"]
    _events(counts)


@settings(FAST, max_examples=100)
@given(scenario=scenarios(ENTRY_ORDERS + ("fcfs", "fairshare"), FREQUENCIES, ("none", "energy-bud", "powercap"),
                          ("none", "shutdown")))
def test_compositions_that_do_not_keep_passes_never_skip_one(tmp_path_factory, scenario) -> None:
    """Behind the shutdown, with a dynamic order (fair share) or a powercap (whose refusals are not kept)
    optimisation 1 does not apply: no pass is skipped, and the index by width (entry orders) still gives the
    schedule of every entry visited."""
    shape, workload, options, per_event = scenario
    assume(options["power"] != "none" or options["admission"] == "powercap" or options["order"] == "fairshare")
    counts = _compare(tmp_path_factory.mktemp("nokeep"), shape, workload, options, per_event,
                      modes=("on", "off", "base"))
    _events(counts)


@settings(FAST, max_examples=60)
@given(scenario=scenarios(ENTRY_ORDERS, FREQUENCIES, ("energy-bud", "reduce-pc"), ("none", "shutdown")))
def test_a_budgets_refusals_before_placement_hold_over_partitions(tmp_path_factory, scenario) -> None:
    """Over partition entries a job's walltime on another partition may be shorter than the one it asks for (the
    EAR model's time there): the budget's refusals before placement (``refuses``, ``refuses_from``: a lower bound of
    the job's end) must not refuse what ``can_start`` would admit once placed. The schedule is the one where the
    budget is asked after placement only."""
    shape, workload, options, per_event = scenario
    _compare(tmp_path_factory.mktemp("exact"), shape, workload, options, per_event, modes=("on", "exact"))


@pytest.mark.parametrize("options", ({"power": "esc"}, {"frequency": "upas"}))
def test_esc_and_upas_are_refused_behind_partitions(tmp_path, options) -> None:
    """Power ``esc`` (it boots hosts in hostname order) and frequency ``upas`` (it needs ``frequency_ghz_per_state``)
    are refused with placement ``partitions`` before any job runs: nothing to compare there."""
    with pytest.raises(OptionError):
        _schedule(_platform(tmp_path, ("two", 3, 3)), RESTART, {"order": "eamc-reorder", "placement": "partitions",
                                                                **options}, "on", tmp=tmp_path)


@pytest.mark.parametrize("order", ENTRY_ORDERS + ("fcfs", "fifo", "fairshare"))
@pytest.mark.parametrize("frequency", FREQUENCIES)
@pytest.mark.parametrize("power", ("none", "shutdown"))
@pytest.mark.parametrize("admission", ("none", "energy-bud", "powercap"))
def test_keeps_reservation_from_the_declared_piece_properties(order, frequency, power, admission) -> None:
    """``PolicyScheduler.keeps_reservation`` behind ``partitions``: an entry order or a static one, no power manager,
    a frequency per partition (every EAMC frequency and ``top``); the admission constraint is asked per pass
    (``keeps_refusals``), not here."""
    options = {"order": order, "placement": "partitions", "frequency": frequency, "power": power,
               "admission": admission}
    if admission != "none":
        options.update(budget_fraction=0.55, window_end_s=1000.0)
    policy = build("compose", options)
    assert policy.keeps_reservation == (order != "fairshare" and power == "none")


def _jobs(*specs: tuple) -> dict:
    """A workload of ``(subtime, res, run_s, walltime_s, app, partitions)`` jobs (delay profiles)."""
    jobs, profiles = [], {}
    for i, (subtime, res, run, walltime, app, parts) in enumerate(specs):
        job = {"id": i, "subtime": subtime, "res": res, "profile": f"r{i}", "walltime": walltime}
        if app is not None:
            job["app"] = app
        if parts is not None:
            job["partitions"] = list(parts)
        jobs.append(job)
        profiles[f"r{i}"] = {"type": "delay", "delay": run}
    return {"nb_res": 6, "jobs": jobs, "profiles": profiles}


#: p1 busy with job 0; job 1's entry on p1 is the head and its entry on p2 starts (restart), job 2 waits for p1
RESTART = _jobs((0, 3, 900, 1000, 1, ["p1"]), (0, 2, 1500, 2000, 2, ["p1", "p2"]), (0, 3, 900, 1000, 3, ["p1"]),
                (0, 2, 1500, 2000, 4, ["p2", "p1"]), (5, 1, 40, 50, 5, None))


@pytest.mark.parametrize("order", ("eamc-reorder", "eamc-priority-inc", "requested-partitions"))
@pytest.mark.parametrize("frequency", ("top", "eamc", "min-energy"))
def test_a_kept_pass_after_the_heads_job_started_through_a_later_entry(tmp_path, order, frequency) -> None:
    """(c, b) The head's job starts through its later entry on the other partition (found by the index by width:
    an entry of the head's own job behind it), EASY starts over with a new head, and the passes after the
    acknowledgements that follow are not made: the same schedule as full passes."""
    options = {"order": order, "placement": "partitions", "frequency": frequency}
    counts = _compare(tmp_path, ("two", 3, 3), RESTART, options)
    assert counts["restarts"] >= 1 and counts["skips"] >= 1, counts


#: jobs that run into the budget's window [2000, 10000) are refused before it; the short ones start; the last one
#: comes later
BUDGET = _jobs((0, 2, 990, 1000, 1, ["p1"]), (0, 3, 5990, 6000, 2, ["p2", "p1"]), (0, 1, 890, 900, 3, ["p2"]),
               (0, 2, 5990, 6000, 4, ["p1", "p2"]), (0, 1, 490, 500, 5, None), (0, 3, 790, 800, 6, ["p1"]),
               (1500, 1, 90, 100, 7, None))  # (NOTIFY no_more_static_job_to_submit after the first acknowledgements)


@pytest.mark.parametrize("admission", ("energy-bud", "reduce-pc"))
@pytest.mark.parametrize("order", ("eamc-priority-inc", "requested-partitions", "fcfs"))
def test_a_budgets_refusals_before_its_window_are_kept_over_entries(tmp_path, admission, order) -> None:
    """(a) With an energy budget whose refusals hold before its window (``keeps_refusals``), a pass that refused
    starts for the budget is followed by acknowledgements only: that pass is not made, and the schedule is the one
    of full passes."""
    options = {"order": order, "placement": "partitions", "frequency": "eamc", "admission": admission,
               "budget_fraction": 0.55, "window_start_s": 2000.0, "window_end_s": 10000.0}
    counts = _compare(tmp_path, ("two", 3, 3), BUDGET, options)
    assert counts["refusals"] > 0 and counts["refused_before_skip"] >= 1, counts


# ------------------------------------------------------------------------------------------------ pieces
def _started_policy(tmp: Path, shape: tuple, options: dict) -> BatsimTranslator:
    """A compose scheduler that took the platform ``shape`` (SIMULATION_BEGINS of an embedded simulation)."""
    path = tmp / "w.json"
    path.write_text(json.dumps(_jobs((0, 1, 1, 1, 1, None))))
    sim = Simulation(load_platform(_platform(tmp, shape)), load_workload(path), dynamic_jobs=True,
                     acknowledge_dynamic_jobs=True)
    handler = scheduler_handler("compose", options)
    handler(sim.start())
    return handler


@st.composite
def free_sets(draw, nb_hosts: int) -> ProcSet:
    return ProcSet(*[h for h in range(nb_hosts) if draw(st.booleans())])


_PIECES: dict = {}
_IDS = itertools.count(1000)


def _pieces(tmp_path_factory, order: str) -> BatsimTranslator:
    handler = _PIECES.get(order)
    if handler is None:
        handler = _PIECES[order] = _started_policy(tmp_path_factory.mktemp("pieces"), ("split", 3, 2, 4),
                                                   {"order": order, "placement": "partitions"})
    return handler


@settings(FAST, max_examples=60)
@given(order=st.sampled_from(ENTRY_ORDERS), data=st.data())
def test_fitting_is_the_entries_after_the_head_that_their_widest_fit_holds(tmp_path_factory, order, data) -> None:
    """(b) ``EntryQueue.fitting(widest, head)`` for any head of the queue, including an entry whose job has an entry
    before it: the entries after the head, in queue order, that ask for at most their partition's widest fit (on
    a platform whose p1 is two intervals)."""
    handler = _pieces(tmp_path_factory, order)
    policy = handler.policy
    view = policy.view
    for job_id in [job.id for job in policy.queue]:  # (a fresh queue per example)
        policy._dequeue(job_id)
        policy.order._forget(job_id)
        policy.placement._forget(job_id)
    widths = {"p1": 4, "p2": 2}
    for _ in range(data.draw(st.integers(1, 12))):
        job_id = f"w0!{next(_IDS)}"
        parts = data.draw(st.permutations(["p1", "p2"]).flatmap(lambda p: st.sampled_from([p, p[:1]])))
        entry = {"id": job_id, "subtime": float(data.draw(st.integers(0, 3))), "res":
                 data.draw(st.integers(1, min(widths[p] for p in parts))), "profile": "r0", "walltime": 10.0,
                 "partitions": parts}
        if data.draw(st.booleans()):
            entry["app"] = data.draw(st.integers(1, 8))
        policy.on_submitted(queued_job(job_id, entry))
    queue = policy.order.sort(policy.queue, view)
    free = data.draw(free_sets(view.nb_hosts))
    placement = policy.placement

    def widest(key: object) -> int:
        return placement.widest_fit(key, free)

    for i, head in enumerate(queue):
        expected = [entry for entry in queue[i + 1:] if entry.res <= widest(entry.partition)]
        assert queue.fitting(widest, head) == expected
    for job_id in [job.id for job in policy.queue]:
        assert queue.nb_entries(job_id) == sum(entry.id == job_id for entry in queue)


@settings(FAST, max_examples=60)
@given(data=st.data())
def test_widest_fit_bounds_the_placement_of_entries_and_of_jobs(tmp_path_factory, data) -> None:
    """(d) ``PartitionPlacement.widest_fit``: an entry (its partition's name) and a job of another order (its
    ranked partitions, a tuple) are placed in ``free`` if and only if their width is at most ``widest_fit`` of their
    fit key, on a platform whose p1 is two intervals (hosts 0-2 and 5-8)."""
    policy = _pieces(tmp_path_factory, "eamc-reorder").policy
    placement, view = policy.placement, policy.view
    free = data.draw(free_sets(view.nb_hosts))
    parts = data.draw(st.permutations(["p1", "p2"]).flatmap(lambda p: st.sampled_from([p, p[:1]])))
    job_id = f"w0!{next(_IDS)}"
    entry = {"id": job_id, "subtime": 0.0, "res": 1, "profile": "r0", "walltime": 10.0, "partitions": parts}
    if data.draw(st.booleans()):
        entry["app"] = data.draw(st.integers(1, 8))
    job = queued_job(job_id, entry)
    for partition in (None, *parts):
        one = dataclasses.replace(job, partition=partition)
        key = placement.fit_key(one)
        assert isinstance(key, str) == (partition is not None)
        bound = placement.widest_fit(key, free)
        for n in range(1, view.nb_hosts + 1):
            fits = placement.allocate(dataclasses.replace(one, res=n), free, view) is not None
            assert fits == (n <= bound), (partition, key, free, n, bound)


def test_a_pstate_other_than_the_views_makes_the_next_pass_a_full_one(tmp_path) -> None:
    """(e) RESOURCE_STATE_CHANGED giving a running job's hosts the pstate the core set there is an acknowledgement:
    the pass after it is not made; another pstate moves ``view.hosts_version`` and the pass after it is made in
    full (then the same pstate again is an acknowledgement)."""
    workload = _jobs((0, 3, 900, 1000, 1, ["p1"]), (0, 3, 900, 1000, 2, ["p2"]), (0, 2, 900, 1000, 3, ["p1"]),
                     (0, 2, 900, 1000, 4, ["p2", "p1"]))
    path = tmp_path / "w.json"
    path.write_text(json.dumps(workload))
    sim = Simulation(load_platform(_platform(tmp_path, ("two", 3, 3))), load_workload(path), dynamic_jobs=True,
                     acknowledge_dynamic_jobs=True)
    handler = scheduler_handler("compose", {"order": "eamc-priority-inc", "placement": "partitions",
                                            "frequency": "min-energy"})
    policy = handler.policy
    passes: list[bool] = []  # per pass over entries: whether it was made (not kept)
    select_entries = backfill_module.EasyBackfilling._select_entries
    same_machine = backfill_module._same_machine
    skipped: list[bool] = []

    def spying_same(*args):  # type: ignore[no-untyped-def]
        answer = same_machine(*args)
        skipped.append(answer)
        return answer

    def spying(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        skipped.clear()
        select_entries(self, *args, **kwargs)
        passes.append(not any(skipped))

    checked = []

    def handle(message: dict) -> dict:
        reply = handler(message)
        events = message["events"]
        if (not checked and events and passes and not passes[-1]
                and all(e["type"] in ("RESOURCE_STATE_CHANGED", "JOB_SUBMITTED") for e in events)):
            # a pass after acknowledgements only was skipped: now a pstate the view did not have
            view = policy.view
            hosts = next(iter(view.running.values())).alloc
            pstate = view.pstates[hosts.min]
            other = 0 if pstate != 0 else 4
            now = message["now"]

            def changed(state: int) -> dict:
                return {"now": now, "events": [{"timestamp": now, "type": "RESOURCE_STATE_CHANGED",
                                                "data": {"resources": str(hosts), "state": str(state)}}]}

            version = view.hosts_version
            assert handler(changed(other))["events"] == [] and passes[-1]  # made (and nothing starts)
            assert view.hosts_version == version + 1
            assert handler(changed(other))["events"] == [] and not passes[-1]  # the same again: kept
            assert view.hosts_version == version + 1
            assert handler(changed(pstate))["events"] == [] and passes[-1]  # back to Batsim's pstate: made
            assert view.hosts_version == version + 2
            checked.append(True)
        return reply

    backfill_module.EasyBackfilling._select_entries = spying  # type: ignore[method-assign]
    backfill_module._same_machine = spying_same
    try:
        run_inprocess(sim, handle)
    finally:
        backfill_module.EasyBackfilling._select_entries = select_entries  # type: ignore[method-assign]
        backfill_module._same_machine = same_machine
    assert checked


@pytest.mark.parametrize("order", ("favoured-partition", "eamc-reorder", "requested-partitions"))
def test_a_partition_of_two_ranges_of_ids_takes_the_jobs_one_range_holds(tmp_path, order) -> None:
    """Placement ``partitions`` puts a job inside one range of its partition's host ids (first-fit inside it): a
    job wider than every range of a partition goes to another partition that holds it, and one that no partition
    holds is refused at once naming the ranges. (Hunt 48: p1 of hosts 0-2 and 7-9 took a 4-host job by its 6 hosts
    in all, which then waited for ever and the run ended in a deadlock.)"""
    platform = _platform(tmp_path, ("split", 3, 4, 3))  # p1: 0-2 and 7-9, p2: 3-6
    workload = _jobs((0, 4, 100, 120, None, None), (0, 4, 100, 120, None, None), (1, 2, 50, 60, None, ["p1"]))
    path = tmp_path / "w.json"
    path.write_text(json.dumps(workload | {"nb_res": 10}))
    sim = Simulation(load_platform(platform), load_workload(path), dynamic_jobs=True, acknowledge_dynamic_jobs=True)
    run_inprocess(sim, scheduler_handler("compose", {"order": order, "placement": "partitions"}))
    jobs = {str(j.job.id).split("!")[-1]: j for j in sim.iter_jobs()}
    assert {j: (jobs[j].status.name, jobs[j].final_state) for j in "012"} == dict.fromkeys(
        "012", ("DONE", "COMPLETED_SUCCESSFULLY"))
    assert jobs["0"].alloc_str == jobs["1"].alloc_str == "3-6"  # p2, one after the other
    assert jobs["1"].start_s == pytest.approx(100.0)
    path.write_text(json.dumps(_jobs((0, 5, 100, 100, None, None)) | {"nb_res": 10}))
    sim = Simulation(load_platform(platform), load_workload(path), dynamic_jobs=True, acknowledge_dynamic_jobs=True)
    with pytest.raises(InputError, match=r"5 hosts: more than any of its partitions has \(p1 6, p2 4; in one range "
                                         r"of host ids, the most a job gets there: p1 3\)"):
        run_inprocess(sim, scheduler_handler("compose", {"order": order, "placement": "partitions"}))


def test_a_subclass_that_changes_how_it_places_or_orders_does_not_inherit_what_its_base_vouched_for() -> None:
    """``Placement.keeps_reservation``, ``FrequencyChoice.per_partition`` and ``QueueOrder.keys_fixed`` vouch for
    how the methods of the class that declares them behave: a subclass (a user's scheduler file, say) that overrides
    one of them has the flag False unless it declares it again; one that only adds other methods keeps it."""
    from wattsched.schedulers.eamc import EamcFrequency, Reorder
    from wattsched.schedulers.frequency import TopFrequency
    from wattsched.schedulers.placement import FirstFit

    class Elsewhere(FirstFit):
        def allocate(self, job, free, view):  # type: ignore[no-untyped-def]
            return None

    class Slower(EamcFrequency):
        def pstate_for(self, job, hosts, view):  # type: ignore[no-untyped-def]
            return 1

    class Shuffled(Reorder):
        def sort(self, jobs, view):  # type: ignore[no-untyped-def]
            return list(reversed(list(jobs)))

    class Vouched(FirstFit):
        keeps_reservation = True

        def complete(self, job, assignment, view):  # type: ignore[no-untyped-def]
            return assignment

    class Named(TopFrequency):
        def describe(self) -> str:
            return "top"

    assert (Elsewhere.keeps_reservation, Slower.per_partition, Shuffled.keys_fixed) == (False, False, False)
    assert (FirstFit.keeps_reservation, EamcFrequency.per_partition, Reorder.keys_fixed) == (True, True, True)
    assert Vouched.keeps_reservation and Named.per_partition
