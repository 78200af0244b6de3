"""DVFS time model: how long a job runs at a lower frequency.

The β model (UPAS paper, eq. 4; also Etinski et al.): a fraction β of a job's time scales with the CPU
frequency and the rest (memory, communication) does not, so at a frequency ``f`` below the top one

    T(f) = T(f_top) × (β × f_top / f + 1 − β)

β = 1 (the default of every job) is a CPU-bound job, slowed exactly by the speed ratio; β = 0 a job the
frequency does not touch. In Batsim terms (docs/architecture.md §4) a β job is a composed profile:
``β × T × speed_top`` flops of computation, then a delay of ``(1 − β) × T``; the simulator then runs it
exactly ``T(f)`` at a pstate of speed ``f``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class BetaModel:
    """A job's run time as a function of its slowdown ``f_top / f`` (UPAS eq. 4).

    Attributes:
        beta: the frequency-sensitive fraction of the run time at the top frequency, in [0, 1].
    """

    beta: float = 1.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.beta <= 1.0:
            raise ValueError(f"beta must be in [0, 1], got {self.beta!r}")

    def duration_s(self, top_duration_s: float, slowdown: float) -> float:
        """``T(f)`` from ``T(f_top)`` and ``slowdown = f_top / f`` (≥ 1 below the top frequency)."""
        if slowdown == 1.0 or top_duration_s == math.inf:
            return top_duration_s
        return top_duration_s * (self.beta * slowdown + 1.0 - self.beta)


#: A CPU-bound job (β = 1): every job's default.
CPU_BOUND = BetaModel(1.0)
