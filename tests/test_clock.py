"""The engine's lazy clock (``wattsched.simulator.clock``) against the eager reference (B38, B43).

:class:`~wattsched.simulator.simgrid_clock.L07Clock` updates every live action at every solver
step, as SimGrid does; :class:`~wattsched.simulator.clock.StepClock` touches only the actions that
can end in the step. Both must give the very same doubles: the same clock after every step and the
same actions ended in it, near-ties included. The engine built on the lazy clock must also be one
step of the eager shadow per message (``simgrid_clock.check_recording``) on runs with splits that
no recording of real Batsim has.
"""

from __future__ import annotations

import math
import random
import shutil

import pytest

from wattsched.simulator import clock as clock_module
from wattsched.simulator.clock import StepClock, submitter_sleep
from wattsched.simulator.simgrid_clock import L07Clock, check_recording, long_double_sleep

#: Host speeds per pstate as SimGrid parses Taurus' (``strtod(x) * 1e6``), and a round one.
SPEEDS = [(2.3e9, 88.95899053627761e6 * 1.0, 1.6e9), (1e9, 0.5e9, 2.1e9)]


class _Pair:
    """The same actions on both clocks; the test drives them with the same operations."""

    def __init__(self, nb_hosts: int, rng: random.Random, check: float = 0.02) -> None:
        self.rng = rng
        self.check = check  # the probability to compare a live action's exact value after a step
        self.speeds = [SPEEDS[h % len(SPEEDS)] for h in range(nb_hosts)]
        self.eager = L07Clock(self.speeds, [0] * nb_hosts)
        self.lazy = StepClock()
        self.live: dict[int, tuple] = {}  # eager handle -> (lazy action, hosts, flops)
        self.timeout_of: dict[int, int] = {}  # execution -> its walltime timeout (eager handles)
        self.execution_of: dict[int, int] = {}
        self.timeouts_woken = 0
        self.order = 0
        self.near_ties = 0  # steps with a delta below 1e-9 s

    def execute(self, hosts: list[int], flops: list[float], timeout: float | None = None) -> None:
        """An execution, and its walltime timeout (a sleep the engine cancels when the execution
        ends, and which cancels the execution when it ends first)."""
        h = self.eager.execute(hosts, flops)
        work = any(f > 0 for f in flops)
        act = self.lazy.start_execution(self.eager.rate(h), work, 0, h, 1, self._next())
        self.live[h] = (act, hosts, flops)
        if timeout is not None:
            t = self.eager.sleep(timeout)
            self.live[t] = (self.lazy.start_timeout(timeout, 0, t, 1, self._next(), act), (), ())
            self.timeout_of[h], self.execution_of[t] = t, h

    def sleep(self, duration: float) -> None:
        h = self.eager.sleep(duration)
        act = self.lazy.start_sleep(duration, 0, h, 0, self._next())
        self.live[h] = (act, (), ())

    def cancel(self, h: int) -> None:
        act, _, _ = self.live.pop(h)
        self.eager.cancel(h)
        self.lazy.cancel(act)
        for other in (self.timeout_of.pop(h, None), self.execution_of.pop(h, None)):
            if other is not None and other in self.live:
                self.cancel(other)

    def set_pstate(self, host: int, pstate: int) -> None:
        self.eager.set_pstate(host, pstate)
        for h, (act, hosts, _) in self.live.items():
            if host in hosts:
                self.lazy.set_rate(act, self.eager.rate(h), 1, self._next())
                t = self.timeout_of.get(h)
                if t is not None:
                    timeout = self.live[t][0]
                    dormant = timeout in self.lazy._dormant
                    self.lazy.check_timeout(timeout, act, 1, self._next())
                    self.timeouts_woken += dormant and timeout not in self.lazy._dormant

    def step(self) -> bool:
        res = self.eager.solve_step()
        got = self.lazy.solve_step()
        if res is None:
            assert got is None
            return False
        _, ended = res
        assert got is not None
        assert self.lazy.now == self.eager.now  # the very same double
        assert sorted(e[4].owner for e in got) == ended
        for h in ended:
            if h not in self.live:
                continue  # cancelled by the end of its execution or timeout in this step
            act, _, _ = self.live.pop(h)
            assert act.ended and act.r == 0.0
            self.eager.cancel(h)
            for other in (self.timeout_of.pop(h, None), self.execution_of.pop(h, None)):
                if other is not None and other in self.live and other not in ended:
                    self.cancel(other)
        if 0.0 < res[0] < 1e-9:  # a step a few ulps after the previous one, or at the same double
            self.near_ties += 1
        for h, (act, _, _) in self.live.items():  # the lazy remains, brought up to date, are exact
            if self.rng.random() < self.check:
                if act.thr == clock_module.EXEC_THRESHOLD:
                    assert self.lazy.exact(act) == self.eager.remains(h)
                else:
                    assert self.lazy.exact(act) == self.eager.max_duration(h)
        return True

    def _next(self) -> int:
        self.order += 1
        return self.order


def _random_run(seed: int, nb_steps: int, nb_hosts: int = 6) -> _Pair:
    """Jobs of whole-second lengths started at the clock (so that ends fall a few ulps apart), with
    walltime timeouts, calls at their expected ends, submitter-like sleeps to whole seconds, kills
    and pstate changes."""
    rng = random.Random(seed)
    pair = _Pair(nb_hosts, rng)
    for _ in range(nb_steps):
        for _ in range(rng.choice((0, 1, 1, 2, 3))):
            op = rng.random()
            if op < 0.5:
                hosts = rng.sample(range(nb_hosts), rng.randint(1, 3))
                seconds = rng.choice((0, 1, 3, 10, 20, 30, 50, 70, 290, 1110))
                flops = [seconds * pair.speeds[h][pair.eager.pstates[h]] for h in hosts]
                walltime = float(seconds + rng.choice((0, 0, 1, 9, 60))) if rng.random() < 0.6 else None
                pair.execute(hosts, flops, walltime)
                if rng.random() < 0.4:  # a call at the job's expected end, not linked to it
                    pair.sleep(float(seconds))
            elif op < 0.75:
                target = math.ceil(pair.eager.now / 10.0) * 10.0 + rng.choice((0, 10, 20, 30, 60))
                pair.sleep(submitter_sleep(target, pair.eager.now))
            elif op < 0.85 and pair.live:
                pair.cancel(rng.choice(sorted(pair.live)))
            elif op < 0.9:
                pair.set_pstate(rng.randrange(nb_hosts), rng.randrange(3))
            else:  # a short irregular sleep: many steps inside long jobs
                pair.sleep(rng.uniform(0.01, 3.0))
        if not pair.step():
            pair.sleep(10.0)
    return pair


@pytest.mark.parametrize("compact_from", [clock_module._COMPACT_FROM, 32])
def test_the_lazy_clock_gives_the_eager_clock_s_doubles(monkeypatch, compact_from: int) -> None:
    """Also with frequent compactions of the deltas (with live, dormant and cancelled actions)."""
    monkeypatch.setattr(clock_module, "_COMPACT_FROM", compact_from)
    near_ties = woken = 0
    for seed in range(8):
        pair = _random_run(seed, 800)
        assert pair.lazy.steps > 500
        near_ties += pair.near_ties
        woken += pair.timeouts_woken
    assert near_ties >= 10  # the runs do test the ulp-level cases (B43)
    assert woken >= 10  # and dormant walltime timeouts woken by a slower pstate


def test_long_catch_ups_and_compaction_give_the_same_doubles(monkeypatch) -> None:
    """A long job seen again after hundreds of steps (numpy catch-up), and a short delta list
    (compaction of the steps no live action needs)."""
    monkeypatch.setattr(clock_module, "_COMPACT_FROM", 64)
    rng = random.Random(7)
    pair = _Pair(4, rng, check=0.0)
    pair.execute([0, 1], [123456.0 * pair.speeds[0][0], 654321.0 * pair.speeds[1][0]])
    for k in range(1500):
        if len(pair.live) < 2 or rng.random() < 0.6:  # the long job never ends here
            pair.sleep(rng.choice((0.1, 0.3, 1.0, 7.0)))
        pair.step()
    (h, act), = [(h, act) for h, (act, hosts, _) in pair.live.items() if hosts == [0, 1]]
    assert act.base < pair.lazy.steps - clock_module._NUMPY_FROM
    assert pair.lazy.exact(act) == pair.eager.remains(h)
    for k in range(700):  # compactions at 64, 128, ..., 2048 steps
        pair.sleep(rng.choice((0.1, 0.3, 1.0, 7.0)))
        pair.step()
    assert pair.lazy._first == 1500  # the deltas before the long job's last update were dropped
    assert pair.lazy.exact(act) == pair.eager.remains(h)
    while pair.step():
        pass


def test_compaction_keeps_the_deltas_of_a_live_action_older_than_every_dormant_timeout(monkeypatch) -> None:
    """A compaction with dormant timeouts keeps the steps that an older live action on the heap still
    needs (it used to keep only the dormant timeouts' steps: the long job's catch-up then read no
    deltas and the simulator failed with a numpy broadcast error, seen after 65,536 steps of
    energy-bud with shutdown on the 20,000-job week)."""
    monkeypatch.setattr(clock_module, "_COMPACT_FROM", 64)
    rng = random.Random(3)
    pair = _Pair(4, rng, check=0.0)
    pair.execute([0], [1e6 * pair.speeds[0][0]])  # a long job, on the heap from step 0
    (long_h, (long_act, _, _)), = pair.live.items()
    for _ in range(40):
        pair.sleep(1.0)
        pair.step()
    pair.execute([1], [5e5 * pair.speeds[1][0]], timeout=6e5)  # its timeout stays dormant
    assert pair.lazy._dormant
    for _ in range(200):  # compactions at 64, 128, 192 steps
        pair.sleep(0.5)
        pair.step()
    assert pair.lazy._first <= long_act.base
    assert pair.lazy.exact(long_act) == pair.eager.remains(long_h)


def test_an_execution_and_its_timeout_in_one_step_both_end() -> None:
    """B14: a task ending exactly at its walltime: both actions end in the step (the engine then
    lets the execution, created first, win)."""
    lazy = StepClock()
    lazy.start_execution(1.0 / 30.0, True, 0, "exec", 1, 1)
    lazy.start_sleep(30.0, 0, "timeout", 1, 2)
    ended = lazy.solve_step()
    assert ended is not None and sorted(e[4].owner for e in ended) == ["exec", "timeout"]
    assert lazy.now == 30.0


def test_a_reply_sleep_alone_moves_the_clock_at_once() -> None:
    lazy = StepClock()
    far = lazy.start_sleep(100.0, 0, "far", 0, 1)
    assert lazy.sleep_alone(10.0) and lazy.now == 10.0
    assert not lazy.sleep_alone(90.0)  # "far" ends in that step: the caller must solve it
    assert lazy.exact(far) == 90.0


def test_the_submitter_sleep_is_the_long_double_difference() -> None:
    rng = random.Random(3)
    for _ in range(2000):
        current = rng.uniform(0, 1e6)
        target = float(math.ceil(current) + rng.randint(0, 100))
        assert submitter_sleep(target, current) == long_double_sleep(target, current)
    # a case where the double difference is not exact: the long double one is taken
    current = 3910.0 + 29.99999999999956
    assert submitter_sleep(3940.0, current) == long_double_sleep(3940.0, current)


# --------------------------------------------------------------------------------------------------
# The engine on its clock: every message is one step of the eager shadow
# --------------------------------------------------------------------------------------------------
def _recorded_run(tmp_path, preset: str, options: dict, platform, workload):
    from wattsched.schedulers.protocol import scheduler_handler
    from wattsched.simulator.drivers import run_inprocess
    from wattsched.simulator.engine import Simulation
    from wattsched.simulator.platform import load_platform
    from wattsched.simulator.replay import record_messages
    from wattsched.simulator.workload import load_workload

    sim = Simulation(load_platform(platform), load_workload(workload))
    lines = record_messages(sim)
    run_inprocess(sim, scheduler_handler(preset, options))
    folder = tmp_path / preset
    folder.mkdir()
    shutil.copy(platform, folder / "platform.xml")
    shutil.copy(workload, folder / "workload.json")
    (folder / "messages.jsonl").write_text("\n".join(lines) + "\n")
    return folder


@pytest.mark.parametrize("variant,input_name", [("powercap-shutdown", "taurus16-random150"),
                                                ("reduce-pc", "taurus16-random150")])
def test_the_engine_splits_where_simgrid_s_clock_does(tmp_path, variant: str, input_name: str) -> None:
    """Golden cases where same-time events come in two messages (B43): the engine's messages are
    exactly the eager shadow's steps, splits included (the closed-form engine of before failed
    this on both: it sent one message there)."""
    from tests.test_golden import INPUTS, VARIANTS

    preset, options = VARIANTS[variant]
    folder = _recorded_run(tmp_path, preset, options, *INPUTS[input_name])
    check = check_recording(folder)
    assert check.ok, "\n".join(check.mismatches[:5])
    assert check.predicted_splits and check.recorded_splits == check.predicted_splits
