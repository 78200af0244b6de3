"""Experiments: many simulations at once, and the papers' studies built on them.

- :mod:`experiments.sweep`: a generic, resumable, parallel runner of a list of runs (platform, workload,
  scheduler, options, output prefix) on the embedded simulator, returning one row of metrics per run.
- :mod:`experiments.energy_budget`: the experiment of the energy-budget paper (§V): one-week workloads,
  a 3-day budget window, eight budget levels, energyBud / reducePC / powercap with and without
  opportunistic shutdown, plus EASY; writes ``results.csv``, ``report.md`` and figures 2-5.
"""
