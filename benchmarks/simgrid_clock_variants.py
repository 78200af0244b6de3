"""Which parts of the SimGrid-clock model the recordings pin down: variants of the model, each
replayed against the 14 recordings (step messages that differ, splits added, splits missed).

    .venv/bin/python benchmarks/simgrid_clock_variants.py

Results are in docs/simgrid-clock.md. The variants monkeypatch wattsched.simulator.simgrid_clock.
"""
import os
import sys
from pathlib import Path

import numpy as np
from fractions import Fraction
import wattsched.simulator.simgrid_clock as sc
REF = str(Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "batsim-reference")
names = sorted(n for n in os.listdir(REF) if os.path.isdir(f"{REF}/{n}"))

def run(label, **opts):
    tot_mis = 0; out = []; fps = fns = 0
    for n in names:
        try:
            c = sc.check_recording(f"{REF}/{n}", **opts)
            tot_mis += len(c.mismatches)
            fp = [x for x in c.predicted_splits if x not in c.recorded_splits]
            fn = [x for x in c.recorded_splits if x not in c.predicted_splits]
            fps += len(fp); fns += len(fn)
            if c.mismatches or fp or fn: out.append(f"{n}:{len(c.mismatches)} FP{fp} FN{fn}")
        except NotImplementedError:
            continue  # the variant does not apply to this recording
        except Exception as e:
            out.append(f"{n}: crash {type(e).__name__} {e}")
    print(f"| {label} | {tot_mis} | {fps} | {fns} | {'; '.join(out)} |")
    sys.stdout.flush()

print("| variant | differing step messages | extra splits | missed splits | where |")
print("|---|---:|---:|---:|---|")
run("faithful model")
run("remains threshold 0 (exact zero)", maxmin_precision=0.0)
run("remains threshold 1e-9", maxmin_precision=1.0)
orig_sleep = sc.long_double_sleep
sc.long_double_sleep = lambda t, c: t - c; run("submitter sleep computed in double"); sc.long_double_sleep = orig_sleep
orig_reach = sc.BatsimShadow.reach
sc.BatsimShadow.reach = lambda self, ts: None; run("no sleep to the reply's timestamp"); sc.BatsimShadow.reach = orig_reach

orig_init = sc.L07Clock.__init__
def init_md0(self, *a, **k):
    orig_init(self, *a, **k); self.duration_precision = 0.0
sc.L07Clock.__init__ = init_md0; run("max_duration threshold 0"); sc.L07Clock.__init__ = orig_init

orig_solve = sc.L07Clock.solve_step
def fma_solve(self):
    delta = self.next_delta()
    if delta < 0: return None
    self.now = self.now + delta; self.steps += 1
    ended = []
    n = self._execs.n
    rem = self._execs.cols["remains"]; rate = self._execs.cols["rate"]
    for i in range(n):
        rem[i] = float(Fraction(float(rem[i])) - Fraction(float(rate[i])) * Fraction(delta))
        if rem[i] < self.remains_precision: rem[i] = 0.0
        if rem[i] <= 0: ended.append(int(self._execs.seq[i]))
    m = self._sleeps.n
    md = self._sleeps.cols["maxdur"][:m]
    md -= delta; md[md < self.duration_precision] = 0.0
    ended.extend(self._sleeps.seq[np.flatnonzero(md <= 0)].tolist())
    ended.sort()
    return delta, ended
sc.L07Clock.solve_step = fma_solve; run("fused multiply-add in update_remains"); sc.L07Clock.solve_step = orig_solve

orig_exec = sc.L07Clock.execute
def exec_flops(self, hosts, flops, owner=None):
    h = orig_exec(self, hosts, flops, owner)
    s = self._execs.slot[h]; f = max(flops)
    if f > 0:
        self._execs.cols["remains"][s] = f; self._execs.cols["rate"][s] *= f
    return h
sc.L07Clock.execute = exec_flops
sc.L07Clock.set_pstate = lambda self, host, p: (_ for _ in ()).throw(NotImplementedError("dvfs"))
run("remains in flops (cost = flops); recordings without pstate changes only")
