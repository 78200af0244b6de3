"""(d) and (f): already what Batsim 4.2.1 / SimGrid 3.32 do (these tests pin it).

(d) ``export.cpp`` (``prepare_batsim_outputs``): the initial rows of ``_pstate_changes.csv`` come from a
``std::map<int, IntervalSet>`` pstate -> hosts, so one row per initial pstate in increasing pstate
order, whatever the host ids or the XML order.

(f) ``host_energy.cpp`` (SimGrid 3.32): a host's power is its pstate's ``idle`` value at load 0 and
``epsilon + load x (max - epsilon)`` otherwise (``idle:max`` gives epsilon = idle). A switch is the
1-flop execution of ``switch_*_machine_process`` at the virtual pstate's speed: load 1, so the
*second* (max) value is billed for the whole transition; the sleep pstate, with no execution, is
billed its first (idle) value. Batsim's ``wattmin`` column (``sg_host_get_wattmin_at``) is the
pstate's epsilon, i.e. its first value with two values.
"""

from __future__ import annotations

from tests.test_behaviour_variants import QUERY, answers, call, compute, execute, host_xml, jb, on_event, platform_xml, run, state


def test_d_initial_rows_in_increasing_pstate_order(tmp_path) -> None:
    for order in ([1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0]):
        hosts = [host_xml(f"h{i}", pstate=p) for i, p in enumerate(order)]
        r = run(tmp_path, platform_xml(hosts[::-1]), {"p": compute(2e6)}, [jb(1)],
                on_event({("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "1")]}))
        rows = [(x["time"], x["new_pstate"]) for x in r.csv["pstate_changes"]][:2]
        assert rows == [("0", "0"), ("0", "1")]


W = "10:30, 8:18, 1:3, 5:20, 7:40"  # sleep 1:3, switch-off 5:20 (4 s), switch-on 7:40 (8 s)


def _script(msg, r) -> list:
    ts = [e["type"] for e in msg["events"]]
    if ts == ["SIMULATION_BEGINS"]:
        return [state("0", 2), call(2), call(6), call(10), call(14), call(20)]
    out = []
    if "REQUESTED_CALL" in ts:
        out.append(QUERY)
        if msg["now"] == 10.0:
            out.append(state("0", 0))
    if "JOB_SUBMITTED" in ts:
        out.append(execute("w0!1", "0"))
    return out


def test_f_transitions_bill_the_second_value_sleep_the_first(tmp_path) -> None:
    r = run(tmp_path, platform_xml([host_xml("h0", watts=W)]), {"p": compute(2e6)}, [jb(1, subtime=30)], _script)
    # off 0-4 at 20 W (a QUERY at 2 inside it: 40 J), asleep 4-10 at 1 W, on 10-18 at 40 W, idle at 10 W
    assert answers(r) == [(2.0, 40.0), (6.0, 82.0), (10.0, 86.0), (14.0, 246.0), (20.0, 426.0)]
    rows = [(x["time"], x["energy"], x["wattmin"]) for x in r.csv["consumed_energy"]][:4]
    assert rows == [("0.000000", "0.000000", "10.000000"), ("4.000000", "80.000000", "1.000000"),
                    ("10.000000", "86.000000", "1.000000"), ("18.000000", "406.000000", "10.000000")]


def test_f_three_values_bill_epsilon_under_a_partial_load(tmp_path) -> None:
    """``idle:epsilon:full`` (SimGrid 3.32's three-value form): a host loaded at 0.5 draws epsilon + 0.5 x (full -
    epsilon) = 12 + 9 = 21 W, not idle + 0.5 x (full - idle) = 20 W, and Batsim's wattmin is the sum of the
    epsilons (12 + 20). Job 1 (2e6 flops on each host) runs 2 s at the pace of b0 (1 Mf, load 1, 40 W) while a0
    (2 Mf) is loaded 0.5: 2 x (21 + 40) = 122 J."""
    hosts = [host_xml("a0", watts="10:12:30, 8:18, 1:1, 5:5, 7:7"), host_xml("b0", speed="1Mf", watts="20:40", sleep=None)]
    r = run(tmp_path, platform_xml(hosts), {"p": compute(2e6)}, [jb(1, res=2, subtime=1)],
            on_event({("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "0-1")]}))
    rows = [(x["time"], x["energy"], x["wattmin"]) for x in r.csv["consumed_energy"]]
    assert rows == [("1.000000", "30.000000", "32.000000"), ("3.000000", "152.000000", "32.000000")]
    assert r.job_row("1")["consumed_energy"] == "122.000000"


def test_f_an_epsilon_equal_to_idle_is_the_two_value_form(tmp_path) -> None:
    """``10:10:30`` bills as ``10:30`` (the model keeps no epsilon: the same object for both spellings)."""
    from wattsched.energy_models.power import NodeModel

    assert NodeModel.from_text("2Mf", "10:10:30") == NodeModel.from_text("2Mf", "10:30")
    assert NodeModel.from_text("2Mf", "10:12:30").epsilon_w == (12.0,)
