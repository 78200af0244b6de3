"""Hunt 44: the composition space of ``-s compose``, one piece per slot.

Every combination of the registered pieces (:data:`~wattsched.schedulers.pieces.REGISTRY`, about 4,800) is either
refused before any simulation, on one line naming the slot or piece at fault, or runs to consistent outputs
(the independent checker of ``tests/test_hunt41_consistency.py``). The driver that ran all of them on Taurus, ESC,
UPAS and EAMC inputs lives outside the repository; these tests keep what it found:

* H44-1, fixed: EAMC's frequency choices (``eamc``, ``min-runtime``, ``min-energy``) behind a placement that ignores
  partitions (EASY's first-fit) stopped the run at the start of a job wider than each of the partitions it may use
  ("JOB_SUBMITTED: job 'w0!3'.res: 7 hosts: more than any of its partitions has"), a job that ``wattsched run``'s
  checks let through and that the placement runs on any hosts (EAMC paper §4.2 keeps jobs on partitions only through
  the placement ``partitions``).
* H44-2, fixed: the Python API (and the sweeps) checked no job's EAMC fields (``app``, ``partitions``) before the run,
  as ``wattsched run`` does: a bad one stopped the run at its submission, naming ``JOB_SUBMITTED`` instead of the
  workload file, with the CLI's message otherwise.
* H44-3, fixed: an EAMC frequency choice on a platform whose hosts name no EAR module ran every job at the top
  frequency without a word (the placement ``partitions`` warns of a platform without partitions).
* H44-4, fixed: those two warnings were logged at SIMULATION_BEGINS, before a piece of a later slot refused the
  platform (UPAS without gears, a budget below the sleeping platform): the refusal took two lines. They are said at
  the next message, once every piece took the platform.

Runs the checker flags only at a printed time where switches requested in two messages end (wattmin and machine
states) are not defects: the engine ends them in two solver steps, as SimGrid does (behaviour 43: two messages, at
one double or a few ulps apart), and the checker groups same-time switch ends by printed time (behaviour 40).
"""

from __future__ import annotations

import itertools
import json
import logging
import random
from pathlib import Path

import pytest

from wattsched import api
from wattsched.base.errors import InputError, OptionError, WattschedError
from wattsched.cli import main
from wattsched.platforms.generate import eamc_platform_xml, esc_platform_xml, taurus_platform_xml, upas_platform_xml
from wattsched.schedulers.core import PolicyScheduler
from wattsched.schedulers.pieces import REGISTRY, SLOTS
from wattsched.schedulers.presets import build
from tests.test_hunt41_consistency import (
    EAMC_SIZES, ESC_SPEED, TAURUS_SPEED, check, eamc_workload, random_workload, upas_workload)

EAMC_XML = eamc_platform_xml(EAMC_SIZES)  # p1: hosts 0-2, p2: hosts 3-7


def combinations() -> list[dict[str, str]]:
    return [dict(zip(SLOTS, names)) for names in itertools.product(*(list(REGISTRY[s]) for s in SLOTS))]


def _owner(option: str) -> list[tuple[str, str]]:
    return [(slot, name) for slot in SLOTS for name, cls in REGISTRY[slot].items()
            if any(o.name == option for o in cls.options)]


# ------------------------------------------------------------------------------------ the whole space, built
def test_every_combination_builds_or_is_refused_on_one_line_naming_a_chosen_piece() -> None:
    """Refusals come from the pieces' constraints (an order of job-partition entries without the placement
    ``partitions``, ESC's boots behind it), each naming pieces of the combination; every other combination builds."""
    built = refused = 0
    for combo in combinations():
        try:
            policy = build("compose", combo)
        except OptionError as error:
            text = str(error)
            assert "\n" not in text, text
            assert sum(f"'{combo[slot]}'" in text for slot in SLOTS) >= 2, (combo, text)
            refused += 1
            continue
        assert isinstance(policy, PolicyScheduler)
        assert [piece.name for piece in policy.pieces] == [combo[slot] for slot in SLOTS]
        built += 1
    assert built + refused == len(combinations()) and built > 2000 and refused > 2000, (built, refused)


def test_an_option_of_a_piece_left_out_of_the_combination_is_refused_naming_its_owner() -> None:
    rng = random.Random(44)
    options = sorted({o.name for slot in SLOTS for cls in REGISTRY[slot].values() for o in cls.options})
    for combo in rng.sample(combinations(), 300):
        chosen = {o.name for slot in SLOTS for o in REGISTRY[slot][combo[slot]].options}
        left_out = [name for name in options if name not in chosen]
        name = rng.choice(left_out)
        with pytest.raises(OptionError) as error:
            build("compose", {**combo, name: None})
        text = str(error.value)
        assert "\n" not in text and f"option '{name}' of compose belongs to" in text and "not chosen here" in text
        assert all(f"{slot} '{piece}'" in text for slot, piece in _owner(name)), text


# ------------------------------------------------------------------------------------ a sample, run and checked
def _inputs(kind: str, seed: int) -> tuple[str, dict]:
    rng = random.Random(seed)
    if kind == "eamc":
        workload = eamc_workload(rng, jobs=14)
        xml = EAMC_XML
    elif kind == "upas":
        workload, xml = upas_workload(rng, 8, jobs=14), upas_platform_xml(8)
    elif kind == "esc":
        workload, xml = random_workload(rng, 6, ESC_SPEED, jobs=14), esc_platform_xml(6)
    else:
        workload, xml = random_workload(rng, 8, TAURUS_SPEED, jobs=14), taurus_platform_xml(8)
    for job in workload["jobs"]:
        job["user"] = rng.choice(["alice", "bob", "carol"])
    return xml, workload


def _kind(combo: dict[str, str]) -> str:
    """The inputs a combination needs: UPAS's gears (EAMC's pieces then see one partition without EAR module), EAMC's
    partitions and model, ESC's five-state nodes, else Taurus nodes (sleep pstates and speeds)."""
    from wattsched.schedulers.eamc import _EarPiece

    if combo["frequency"] == "upas":
        return "upas"
    if any(issubclass(REGISTRY[slot][combo[slot]], _EarPiece) for slot in SLOTS):
        return "eamc"
    return "esc" if combo["power"] == "esc" else "taurus"


def _options(combo: dict[str, str]) -> dict:
    options: dict = dict(combo)
    if combo["admission"] != "none":
        options.update(budget_fraction=0.5, window_start_s=600, window_end_s=4000, monitoring_period_s=300)
    if combo["power"] == "esc":
        options.update(idle_s=100.0, period_s=60.0, upper_wait_s=0.0)
    if combo["frequency"] == "upas":
        options.update(wq_threshold=None, u_upper=0.95, u_lower=0.9, f_lower_ghz=0.8)
    if combo["order"] in ("fairshare", "efs", "fs-efs"):
        options.update(half_life_s=3600.0)
    return options


def _sample() -> list[dict[str, str]]:
    """Every pair of pieces of two slots at least once, among the combinations that build (greedy cover)."""
    valid = []
    for combo in combinations():
        try:
            build("compose", combo)
        except OptionError:
            continue
        valid.append(combo)
    rng = random.Random(7)
    rng.shuffle(valid)
    pairs = {(a, combo[a], b, combo[b]) for combo in valid for a, b in itertools.combinations(SLOTS, 2)}
    picked = []
    for combo in valid:
        new = {(a, combo[a], b, combo[b]) for a, b in itertools.combinations(SLOTS, 2)} & pairs
        if new:
            picked.append(combo)
            pairs -= new
        if not pairs:
            break
    return picked


def _split_step(failure: str, run) -> bool:
    """A wattmin or machine-state row at a printed time where the scheduler got two messages: switches ending at that
    time in two solver steps (B43), which the engine writes apart and the checker groups by printed time (B40)."""
    import re

    found = re.search(r"'time': '([0-9.]+)'", failure)
    if not failure.startswith(("wattmin", "machine states")) or found is None:
        return False
    printed = found.group(1)
    return sum(f"{reply['now']:.6f}" == printed or f"{reply['now']:g}" == printed for reply in run.replies) >= 2


SAMPLE = _sample()


@pytest.mark.parametrize("index", range(len(SAMPLE)), ids=lambda i: "+".join(SAMPLE[i][s] for s in SLOTS))
def test_a_pairwise_sample_of_the_combinations_runs_to_consistent_outputs(tmp_path: Path, index: int) -> None:
    from wattsched.analysis.outputs import load_outputs

    combo = SAMPLE[index]
    xml, workload = _inputs(_kind(combo), seed=index)
    run, failures = check(tmp_path, xml, workload, "compose", _options(combo))
    failures = [f for f in failures if not _split_step(f, run)]
    assert not failures, failures[:3]
    jobs = load_outputs(run.prefix).jobs  # replacements merged with their originals
    assert sorted(jobs["job_id"].astype(str)) == sorted(str(j["id"]) for j in workload["jobs"])


# ------------------------------------------------------------------------------------ H44-1
WIDE = {"nb_res": 8, "profiles": {"d": {"type": "delay", "delay": 100}}, "jobs": [
    {"id": "1", "subtime": 0, "res": 3, "profile": "d", "walltime": 500, "app": 1, "partitions": ["p1"]},
    {"id": "2", "subtime": 0, "res": 4, "profile": "d", "walltime": 500, "app": 2, "partitions": ["p1"]},  # on p2
    {"id": "3", "subtime": 1, "res": 7, "profile": "d", "walltime": 500, "app": 3, "partitions": ["p1", "p2"]}]}


@pytest.mark.parametrize("frequency", ["eamc", "min-runtime", "min-energy"])
def test_h44_1_an_ear_frequency_behind_first_fit_runs_jobs_wider_than_their_partitions(tmp_path: Path,
                                                                                    frequency: str) -> None:
    """Job 2 asks for p1 (3 hosts) and runs on 4 hosts of p2 at the rule's frequency there; job 3, wider than each
    partition, runs across both at the top frequency (``_EarFrequency.pstate_for``). Both stopped the run."""
    run, failures = check(tmp_path, EAMC_XML, WIDE, "compose", {"placement": "first-fit", "frequency": frequency})
    assert not failures, failures[:3]
    from wattsched.analysis.outputs import load_outputs

    jobs = load_outputs(run.prefix).jobs
    rows = {str(r.job_id): r for r in jobs.itertuples()}
    assert {k: r.final_state for k, r in rows.items()} == dict.fromkeys("123", "COMPLETED_SUCCESSFULLY")
    assert rows["2"].allocated_resources == "3-6" and rows["3"].allocated_resources == "0-6"


def test_h44_1_the_placement_on_partitions_still_refuses_them_before_the_run(tmp_path: Path) -> None:
    with pytest.raises(InputError) as error:
        api.simulate(EAMC_XML, WIDE, "compose", {"order": "fcfs", "placement": "partitions", "frequency": "eamc"},
                     out=tmp_path / "o" / "out")
    assert str(error.value) == "<workload object>: job 'w0!2'.res: 4 hosts: more than any of its partitions has (p1 3)"
    assert not (tmp_path / "o").exists()


# ------------------------------------------------------------------------------------ H44-2
@pytest.mark.parametrize("options", [{"frequency": "min-energy"},
                                     {"order": "eamc-priority-inc", "placement": "partitions"}])
@pytest.mark.parametrize("field,value,fragment", [
    ("app", 99, "job 'w0!1'.app: unknown application 99"),
    ("partitions", ["p3"], "job 'w0!1'.partitions: the platform has no partition 'p3'")])
def test_h44_2_the_api_refuses_bad_eamc_fields_before_the_run_as_the_cli(tmp_path: Path, capsys, options: dict,
                                                                        field: str, value, fragment: str) -> None:
    platform, workload = tmp_path / "eamc.xml", tmp_path / "w.json"
    platform.write_text(EAMC_XML)
    jobs = [{"id": "1", "subtime": 0, "res": 2, "profile": "d", "walltime": 500, "app": 1, field: value}]
    workload.write_text(json.dumps({"nb_res": 8, "profiles": {"d": {"type": "delay", "delay": 10}}, "jobs": jobs}))
    with pytest.raises(WattschedError) as error:
        api.simulate(str(platform), str(workload), "compose", options, out=tmp_path / "a" / "out")
    message = str(error.value)
    assert message.startswith(f"{workload}: {fragment}") and "JOB_SUBMITTED" not in message, message
    assert not (tmp_path / "a").exists()
    assert main(["run", str(platform), str(workload), "-s", "compose", "-o", json.dumps(options),
                 "-e", str(tmp_path / "c" / "out")]) == 2
    assert capsys.readouterr().err.strip() == f"wattsched: error: {message}"
    assert not (tmp_path / "c").exists()


# ------------------------------------------------------------------------------------ H44-3
@pytest.mark.parametrize("frequency", ["eamc", "min-runtime", "min-energy"])
def test_h44_3_an_ear_frequency_warns_of_a_platform_without_ear_modules(caplog, frequency: str) -> None:
    workload = {"nb_res": 4, "profiles": {"d": {"type": "delay", "delay": 10}},
                "jobs": [{"id": "1", "subtime": 0, "res": 2, "profile": "d", "walltime": 50}]}
    with caplog.at_level(logging.WARNING, logger="wattsched.schedulers.eamc"):
        result = api.simulate(taurus_platform_xml(4), workload, "compose", {"frequency": frequency})
    assert (result.pstate_changes["new_pstate"] == 0).all()  # every host at the top pstate, none changed
    said = [r.getMessage() for r in caplog.records if r.name == "wattsched.schedulers.eamc"]
    assert said == [f"frequency '{frequency}': no host of the platform has an 'ear_model' property (the EAR module "
                    "of its partition): every job runs at the top frequency ('wattsched platform --node eamc' writes "
                    "a platform with EAR modules)"], said
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="wattsched.schedulers.eamc"):
        api.simulate(EAMC_XML, {**workload, "jobs": [{**workload["jobs"][0], "app": 1}]}, "compose",
                     {"frequency": frequency})
    assert not [r for r in caplog.records if "EAR module" in r.getMessage()]


# ------------------------------------------------------------------------------------ H44-4
@pytest.mark.parametrize("options", [
    {"placement": "partitions", "frequency": "upas"},  # UPAS needs gears the Taurus platform does not name
    {"frequency": "min-energy", "admission": "energy-bud", "power": "shutdown", "budget_j": 1, "window_end_s": 100}])
def test_h44_4_a_refusal_at_simulation_begins_is_one_line_after_a_warning_of_an_earlier_piece(
        tmp_path: Path, capsys, caplog, options: dict) -> None:
    """EAMC's placement and frequency warn of a platform without partitions or EAR modules; the warning was logged in
    SIMULATION_BEGINS before a piece of a later slot refused the platform, so that the refusal took two lines."""
    platform, workload = tmp_path / "taurus.xml", tmp_path / "w.json"
    platform.write_text(taurus_platform_xml(4))
    workload.write_text(json.dumps({"nb_res": 4, "profiles": {"d": {"type": "delay", "delay": 10}},
                                    "jobs": [{"id": "1", "subtime": 0, "res": 1, "profile": "d", "walltime": 50}]}))
    with caplog.at_level(logging.WARNING), pytest.raises(OptionError):
        api.simulate(str(platform), str(workload), "compose", options)
    assert not [r for r in caplog.records if r.name.startswith("wattsched.schedulers")], caplog.records
    assert main(["run", str(platform), str(workload), "-s", "compose", "-o", json.dumps(options),
                 "-e", str(tmp_path / "o" / "out"), "-q"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("wattsched: error: "), err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("admission", ["energy-bud", "reduce-pc", "powercap"])
def test_a_window_without_a_budget_says_that_nothing_is_limited(tmp_path, caplog, admission):
    """A budget's window given without a budget ran as plain EASY without a word (found by hunt 44)."""
    workload = Path(__file__).resolve().parent.parent / "workloads" / "demo_taurus16.json"
    with caplog.at_level(logging.WARNING, logger="wattsched.schedulers.budget.window"):
        api.simulate(api.taurus_platform(16), workload, "compose", {"admission": admission, "window_end_s": 4000},
                     out=tmp_path / "a")
    said = [r.getMessage() for r in caplog.records if r.name == "wattsched.schedulers.budget.window"]
    assert said == [f"admission '{admission}': a window (window_end_s 4000) but no budget (budget_j or "
                    "budget_fraction): nothing is limited, the schedule is plain EASY"]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="wattsched.schedulers.budget.window"):
        api.simulate(api.taurus_platform(16), workload, "compose",
                     {"admission": admission, "window_end_s": 4000, "budget_fraction": 0.9}, out=tmp_path / "b")
    assert not [r for r in caplog.records if r.name == "wattsched.schedulers.budget.window"]
