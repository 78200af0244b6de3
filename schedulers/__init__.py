"""wattsched policies: a scheduler is one piece per slot (docs/architecture.md §3).

- ``pieces.py``: the common base, the events every piece hears, the registry;
- the slots: ``order.py`` (queue order), ``backfill.py`` (FCFS, EASY), ``placement.py`` (hosts),
  ``admission.py`` and ``budget/`` (energyBud, reducePC, powercap), ``power.py`` (shutdown),
  ``frequency.py`` (DVFS);
- ``state.py``: jobs, assignments, the cluster view, decisions; ``options.py``: validated options;
- ``core.py``: :class:`PolicyScheduler`, the composition; ``presets.py``: named combinations and ``compose``;
- ``protocol.py``: Batsim messages ↔ policy (no pybatsim); ``adapter.py``: the pybatsim bridge.
"""
