"""Energy budgets (energy-budget paper, Glesser et al.): admission constraints over a budget window.

- :mod:`.window`: the window ``[ts, te)``, the budget ``B``, its options, wake-ups and checks (shared);
- :mod:`.estimates`: the powers the budget plans with (P̃ estimates, the platform's sleep and transitions);
- :mod:`.plan`: the cluster's estimated future power and the balance of rule 2, as arrays;
- :mod:`.energy_bud`: energyBud (§IV-B, Algorithm 2) and reducePC (§IV-D);
- :mod:`.powercap`: the powercap baseline (§V-C).
"""

from wattsched.schedulers.budget.energy_bud import EnergyBud, EnergyBudget, ReducePC
from wattsched.schedulers.budget.estimates import BudgetPower
from wattsched.schedulers.budget.powercap import Powercap
from wattsched.schedulers.budget.window import BUDGET_OPTIONS, BudgetWindow

__all__ = ["BUDGET_OPTIONS", "BudgetPower", "BudgetWindow", "EnergyBud", "EnergyBudget", "Powercap", "ReducePC"]
