"""Energy models: node power-state tables, estimated powers P̃ and energy helpers (DESIGN §2, §6).

``energy_models.taurus`` holds the Taurus node of the energy-budget paper (table I) with Batsim's DVFS
pstates; other modules of this package (DVFS gears, EAR model, accounting) import from it as needed.
"""

from wattsched.energy_models.taurus import TAURUS, Pstate, PstateKind, TaurusNode

__all__ = ["TAURUS", "Pstate", "PstateKind", "TaurusNode"]
