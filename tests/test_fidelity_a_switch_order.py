"""(a) A switch (SET_RESOURCE_STATE to or from sleep) ending at the time of other Batsim events.

Read from Batsim 4.2.1 and SimGrid 3.32 (no recording covers it). Every actor woken at one clock
sends its message to the server after its simcalls, one per scheduling sub-round
(``EngineImpl::run``: ``simcall_answered`` yields, the answer reschedules the actor in the next
sub-round); the server, blocked on its mailbox, handles them in that order and sends one message
when its mailbox is empty:

* a CALL_ME_LATER waiter (``jobs_execution.cpp`` ``waiter_process``) sends WAITING_DONE at once
  (sub-round 1);
* a switch actor (``pstate.cpp`` ``switch_off_machine_process`` / ``switch_on_machine_process``)
  calls ``Host::set_pstate`` (a simcall) after its 1-flop execution, then sends SWITCHED_OFF/ON
  (sub-round 2);
* a job's actor (``execute_job_process``) reads the energy of its hosts, then of every host for the
  'e' row (``EnergyConsumptionTracer::add_job_end``); each host not yet updated at this clock costs a
  simcall (``HostEnergy::get_consumed_energy``), then it sends JOB_COMPLETED (sub-round 1 + those).

So a REQUESTED_CALL comes before a RESOURCE_STATE_CHANGED of the same time, in one message; a job
that ends with a switch comes after it when two hosts or more were not read at that time, before it
when every host was.
"""

from __future__ import annotations

from tests.test_behaviour_variants import call, compute, execute, jb, on_event, run, state, toy_platform


def test_a_requested_call_then_switch_end_in_one_message(tmp_path) -> None:
    """A switch-off (4 s) asked at 0 and a CALL_ME_LATER at 4: one message, REQUESTED_CALL first,
    whichever was asked first."""
    for first, second in ((state("1", 2), call(4.0)), (call(4.0), state("1", 2))):
        r = run(tmp_path, toy_platform(2), {"p": compute(2e6)}, [jb(1, subtime=10)],
                on_event({("SIMULATION_BEGINS", None): [first, second],
                          ("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "0")]}))
        assert (4.0, ["REQUESTED_CALL", "RESOURCE_STATE_CHANGED 1>2"]) in r.summary()


def _switch_then_job(msg, r) -> list:
    ts = [e["type"] for e in msg["events"]]
    if ts == ["SIMULATION_BEGINS"]:
        return [call(4.0), call(8.0)]
    if "JOB_SUBMITTED" in ts:
        return [execute("w0!1", "0")]
    if "REQUESTED_CALL" in ts and msg["now"] == 4.0:
        return [state("1", 2)]
    return []


def test_a_switch_end_before_a_job_end_when_two_hosts_are_unread(tmp_path) -> None:
    """Job 1 on host 0 from 0 to 8, host 1 switched off from 4 to 8, hosts 2-3 idle (not read at 8):
    the job's actor reads two hosts before it reports, the switch actor one simcall: the
    RESOURCE_STATE_CHANGED comes before the JOB_COMPLETED although the job started first."""
    r = run(tmp_path, toy_platform(4), {"p": compute(16e6)}, [jb(1)], _switch_then_job)
    assert (8.0, ["REQUESTED_CALL", "RESOURCE_STATE_CHANGED 1>2", "JOB_COMPLETED w0!1"]) in r.summary()
    # the rows: the job's 'e' row is written by its actor, the switch's 'p' row by the server after
    kinds = [(x["time"], x["event_type"]) for x in r.csv["consumed_energy"]][-2:]
    assert kinds == [("8.000000", "e"), ("8.000000", "p")]


def test_a_job_end_before_a_switch_end_when_every_host_is_read(tmp_path) -> None:
    """Two hosts: host 1 switched off from 0 to 4 (asked first), job 1 on host 0 from 2 to 4: both
    hosts are updated by the actions ending at 4, so the job's actor reports in sub-round 1, before
    the switch actor."""
    r = run(tmp_path, toy_platform(2), {"p": compute(4e6)}, [jb(1, subtime=2)],
            on_event({("SIMULATION_BEGINS", None): [state("1", 2)], ("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "0")]}))
    assert (4.0, ["JOB_COMPLETED w0!1", "RESOURCE_STATE_CHANGED 1>2"]) in r.summary()


def test_a_switch_end_before_a_later_job_end_with_unread_hosts(tmp_path) -> None:
    """Same with four hosts (2-3 not read at 4): the switch first (as the request came first)."""
    r = run(tmp_path, toy_platform(4), {"p": compute(4e6)}, [jb(1, subtime=2)],
            on_event({("SIMULATION_BEGINS", None): [state("1", 2)], ("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "0")]}))
    assert (4.0, ["RESOURCE_STATE_CHANGED 1>2", "JOB_COMPLETED w0!1"]) in r.summary()
