"""Energy models: the per-host power model, the DVFS time model and node calibrations (docs/architecture.md §4).

- :mod:`.power`: speeds and powers per pstate, sleep and transitions, for every host; per-job energy.
- :mod:`.dvfs`: the β model of a job's run time at lower frequencies (UPAS eq. 4).
- :mod:`.taurus`: the Taurus node of the energy-budget paper (table I) with Batsim's DVFS pstates.
"""

from wattsched.energy_models.taurus import TAURUS, Pstate, PstateKind, TaurusNode

__all__ = ["TAURUS", "Pstate", "PstateKind", "TaurusNode"]
