"""(e) The ``ret`` field of profiles, composed ones included.

Batsim 4.2.1, ``jobs_execution.cpp`` ``execute_task``: a parallel or delay task returns its own
``ret`` (or -1 when the walltime cut it, -2 when killed); a sequence returns at once the first
non-zero code of a part (the following parts never run) and, when every part returned 0, its
own ``ret`` after the last repetition. ``execute_job_process`` then maps the job's code: 0
COMPLETED_SUCCESSFULLY, > 0 COMPLETED_FAILED, -1 COMPLETED_WALLTIME_REACHED, -2 COMPLETED_KILLED
without JOB_COMPLETED (the simulation can never end), anything else aborts ("unknown return code").
"""

from __future__ import annotations

import json

import pytest

from tests.test_behaviour_variants import composed, compute, delay, execute, jb, on_event, run, toy_platform
from wattsched.base.errors import InputError
from wattsched.simulator.workload import load_workload


def test_e_the_composed_ret_applies_after_its_last_part_a_part_ret_first(tmp_path) -> None:
    profiles = {"c": compute(4e6), "cf": compute(4e6, ret=2), "d": delay(1),
                "s5": {**composed(["c", "d"]), "ret": 5},          # parts fine: 5 after the whole 3 s
                "s5f": {**composed(["cf", "d"]), "ret": 5},        # part fails at 2 s: its 2
                "in7": {**composed(["c"], repeat=2), "ret": 7},
                "outer": {**composed(["in7", "d"]), "ret": 9},     # the inner's 7 after its 2 repeats (4 s)
                "sm1": {**composed(["c", "d"]), "ret": -1}, "m1": compute(4e6, ret=-1)}
    names = ["s5", "s5f", "outer", "sm1", "m1"]
    r = run(tmp_path, toy_platform(5), profiles, [jb(i, profile=p) for i, p in enumerate(names, 1)],
            on_event({("JOB_SUBMITTED", "w0!1"): [execute(f"w0!{i}", str(i - 1)) for i in range(1, 6)]}))
    got = []
    for i in range(1, 6):
        k, ev = r.completion(f"w0!{i}")
        got.append((r.msgs[k]["now"], ev["data"]["job_state"], ev["data"]["return_code"]))
    assert got == [(3.0, "COMPLETED_FAILED", 5), (2.0, "COMPLETED_FAILED", 2), (4.0, "COMPLETED_FAILED", 7),
                   (3.0, "COMPLETED_WALLTIME_REACHED", -1), (2.0, "COMPLETED_WALLTIME_REACHED", -1)]
    assert r.job_row("4")["success"] == "0" and r.csv["schedule"][0]["nb_jobs_killed"] == "5"


@pytest.mark.parametrize("ret", [-2, -3, 2**31])
def test_e_return_codes_batsim_cannot_end_with_are_refused(tmp_path, ret) -> None:
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"nb_res": 1, "jobs": [jb(1)], "profiles": {"p": compute(1e6, ret=ret)}}))
    with pytest.raises(InputError, match="ret"):
        load_workload(path)
