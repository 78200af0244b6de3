"""wattsched policies: a scheduler = queue order + backfilling + admission constraint + power manager +
frequency choice (DESIGN §5).

- ``state.py``: jobs, the cluster view, decisions;  ``order.py``: queue orders;
  ``allocation.py``: placement;  ``backfill.py``: FCFS and EASY;  ``admission.py``: admission constraints;
  ``power.py``: power managers;  ``frequency.py``: frequency choice;
- ``core.py``: :class:`PolicyScheduler`, the pure composition;  ``presets.py``: named schedulers and options;
- ``adapter.py``: the only module that touches pybatsim.
"""
