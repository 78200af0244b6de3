"""A run's charts as Plotly figures (plain JSON-able dicts that the page hands to ``Plotly.newPlot``).

The same pictures as ``wattsched plot`` (:mod:`wattsched.analysis.plots`), drawn in the browser so that
they zoom and show each job or value under the pointer:

- :func:`gantt`: each job a rectangle over its hosts, from its start to its finish (killed jobs hatched);
- :func:`power`: the platform's power over time (Δenergy/Δt of ``_consumed_energy.csv``,
  :func:`wattsched.analysis.plots.power_steps`) with the budget window shaded and the budget power
  ``B / (te − ts)`` drawn (energy-budget paper §IV, rule 1: the energy released per second);
- :func:`host_states`: stacked hosts computing, idle, switching on / off and asleep
  (``_machine_states.csv``);
- :func:`compare_power`, :func:`compare_utilization`: one curve per run, overlaid.

Pure functions of loaded outputs (:class:`~wattsched.analysis.outputs.BatsimOutputs`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np
from procset import ProcSet

from wattsched.base.errors import counted
from wattsched.analysis.outputs import BatsimOutputs
from wattsched.analysis.plots import MACHINE_STATES, power_steps

__all__ = ["budget_power_w", "compare_power", "compare_utilization", "gantt", "host_states", "power"]

Figure = dict[str, Any]
#: matplotlib's tab10 colours, so that the page and ``wattsched plot`` agree.
TAB: Final[dict[str, str]] = {"tab:blue": "#1f77b4", "tab:orange": "#ff7f0e", "tab:green": "#2ca02c",
                              "tab:red": "#d62728", "tab:purple": "#9467bd", "tab:brown": "#8c564b",
                              "tab:pink": "#e377c2", "tab:gray": "#7f7f7f", "tab:olive": "#bcbd22",
                              "tab:cyan": "#17becf"}
PALETTE: Final[tuple[str, ...]] = tuple(TAB.values())
#: Points per curve above which a curve is thinned (every k-th step kept) to keep the page light.
MAX_POINTS: Final[int] = 20000
#: Jobs drawn on a Gantt chart at most (the first ones by start time).
MAX_GANTT_JOBS: Final[int] = 20000
BUDGET_ADMISSIONS: Final[tuple[str, ...]] = ("energy-bud", "reduce-pc", "powercap")


def _layout(title: str, x: str, y: str, **extra: Any) -> dict[str, Any]:
    return {"title": {"text": title}, "xaxis": {"title": {"text": x}}, "yaxis": {"title": {"text": y}},
            "margin": {"l": 60, "r": 20, "t": 50, "b": 50}, "legend": {"orientation": "h"}, **extra}


def _thin(times: np.ndarray, values: np.ndarray) -> tuple[list[float], list[float]]:
    step = max(1, math.ceil(len(times) / MAX_POINTS))
    if step > 1:
        times, values = np.append(times[::step], times[-1]), np.append(values[::step], values[-1])
    return [float(t) for t in times], [float(v) for v in values]


def gantt(outputs: BatsimOutputs) -> Figure:
    """Jobs as filled rectangles, x from start to finish, y over their host ids (one rectangle per interval
    of a non-contiguous allocation). Jobs take the ten colours in turn; one trace per colour and outcome
    (polygons separated by ``None``), so that a run of many jobs stays light; each corner names its job."""
    jobs = outputs.jobs
    ran = jobs[(jobs["final_state"] != "REJECTED") & jobs["starting_time"].notna()].sort_values("starting_time")
    shown = ran.head(MAX_GANTT_JOBS)
    groups: dict[tuple[int, bool], dict[str, list[Any]]] = {}
    for number, job in enumerate(shown.itertuples(index=False)):
        killed = job.final_state != "COMPLETED_SUCCESSFULLY"
        group = groups.setdefault((number % len(PALETTE), killed), {"x": [], "y": [], "text": []})
        start, end = float(job.starting_time), float(job.finish_time)
        label = f"job {job.job_id}: hosts {job.allocated_resources}, {start:g}-{end:g} s, {job.final_state}"
        for itv in ProcSet.from_str(str(job.allocated_resources)).intervals():
            low, high = itv.inf - 0.5, itv.sup + 0.5
            group["x"] += [start, end, end, start, start, None]
            group["y"] += [low, low, high, high, low, None]
            group["text"] += [label] * 5 + [None]
    traces = [{"type": "scatter", "mode": "lines", "x": g["x"], "y": g["y"], "text": g["text"], "fill": "toself",
               "fillcolor": PALETTE[colour], "opacity": 0.5 if killed else 0.85, "hoverinfo": "text",
               "line": {"width": 0.5, "color": "black", "dash": "dot" if killed else "solid"},
               "name": "not successful" if killed else "completed", "showlegend": False}
              for (colour, killed), g in sorted(groups.items())]
    title = f"Gantt chart: {counted(len(ran), 'job')} ran, dotted = not successful"
    if len(ran) > len(shown):
        title += f" (first {len(shown)} drawn)"
    return {"data": traces, "layout": _layout(title, "time (s)", "host id")}


def budget_power_w(scheduler_slots: Mapping[str, str], options: Mapping[str, Any], nb_hosts: int
                   ) -> tuple[tuple[float, float] | None, float | None]:
    """The budget window ``(ts, te)`` and power ``B / (te − ts)`` of a run whose admission constraint is an
    energy budget or a powercap (energy-budget paper §IV: B in joules, or ``budget_fraction`` of the
    window's all-computing energy hosts × P̃comp × (te − ts), so B / (te − ts) = fraction × hosts × P̃comp);
    ``(None, None)`` otherwise or without a budget."""
    if scheduler_slots.get("admission") not in BUDGET_ADMISSIONS or options.get("window_end_s") is None:
        return None, None
    ts, te = float(options.get("window_start_s") or 0.0), float(options["window_end_s"])
    if options.get("budget_j") is not None:
        return (ts, te), float(options["budget_j"]) / (te - ts)
    if options.get("budget_fraction") is not None:
        return (ts, te), float(options["budget_fraction"]) * nb_hosts * float(options["estimated_comp_w"])
    return (ts, te), None


def power(outputs: BatsimOutputs, window: tuple[float, float] | None = None,
          budget_w: float | None = None) -> Figure:
    """Platform power over time (steps), with the budget window shaded and the budget power as a line."""
    data: list[dict[str, Any]] = []
    if outputs.consumed_energy is not None and not outputs.consumed_energy.empty:
        times, watts = _thin(*power_steps(outputs.consumed_energy))
        data.append({"type": "scatter", "mode": "lines", "x": times, "y": watts, "line": {"shape": "hv"},
                     "name": "platform power (W)"})
    shapes: list[dict[str, Any]] = []
    if window is not None:
        shapes.append({"type": "rect", "xref": "x", "yref": "paper", "x0": window[0], "x1": window[1], "y0": 0,
                       "y1": 1, "fillcolor": TAB["tab:orange"], "opacity": 0.15, "line": {"width": 0}})
        data.append({"type": "scatter", "mode": "lines", "x": [window[0], window[0]], "y": [None, None],
                     "name": f"budget window {window[0]:g}-{window[1]:g} s", "line": {"color": TAB["tab:orange"]}})
    if budget_w is not None and window is not None:  # the budget holds inside its window only
        data.append({"type": "scatter", "mode": "lines", "x": [window[0], window[1]], "y": [budget_w, budget_w],
                     "name": f"budget power {budget_w:.6g} W", "line": {"color": TAB["tab:red"], "dash": "dash"}})
    return {"data": data, "layout": _layout("Platform power (compute hosts)", "time (s)", "power (W)",
                                            shapes=shapes, yaxis={"title": {"text": "power (W)"}, "rangemode": "tozero"})}


def _state_steps(outputs: BatsimOutputs) -> tuple[np.ndarray, dict[str, np.ndarray], int]:
    """Times and host counts per state; before Batsim's first row every host is idle (behaviour 32)."""
    states = outputs.machine_states
    columns = [name for name, _ in MACHINE_STATES]
    if states is None or states.empty:
        return np.zeros(0), {c: np.zeros(0) for c in columns}, 0
    steps = states.groupby("time", sort=True)[columns].last()
    nb_hosts = int(steps.iloc[0].sum())
    times = steps.index.to_numpy(dtype=float)
    counts = {c: steps[c].to_numpy(dtype=float) for c in columns}
    if times[0] > 0:
        times = np.insert(times, 0, 0.0)
        counts = {c: np.insert(v, 0, float(nb_hosts) if c == "nb_idle" else 0.0) for c, v in counts.items()}
    return times, counts, nb_hosts


def host_states(outputs: BatsimOutputs) -> Figure:
    """Stacked areas of the hosts in each state over time."""
    times, counts, nb_hosts = _state_steps(outputs)
    data = []
    for name, colour in MACHINE_STATES:
        xs, ys = _thin(times, counts[name])
        data.append({"type": "scatter", "mode": "lines", "x": xs, "y": ys, "stackgroup": "hosts",
                     "line": {"shape": "hv", "width": 0.5, "color": TAB[colour]},
                     "name": name.removeprefix("nb_").replace("_", " ")})
    return {"data": data, "layout": _layout(f"Host states ({counted(nb_hosts, 'host')})", "time (s)", "hosts")}


def compare_power(runs: Sequence[tuple[str, BatsimOutputs]]) -> Figure:
    """Each run's platform power, overlaid."""
    data = []
    for number, (label, outputs) in enumerate(runs):
        if outputs.consumed_energy is None or outputs.consumed_energy.empty:
            continue
        xs, ys = _thin(*power_steps(outputs.consumed_energy))
        data.append({"type": "scatter", "mode": "lines", "x": xs, "y": ys, "name": label,
                     "line": {"shape": "hv", "color": PALETTE[number % len(PALETTE)]}})
    return {"data": data, "layout": _layout("Platform power", "time (s)", "power (W)")}


def compare_utilization(runs: Sequence[tuple[str, BatsimOutputs]]) -> Figure:
    """Each run's utilization over time: hosts computing / hosts (``_machine_states.csv``), overlaid."""
    data = []
    for number, (label, outputs) in enumerate(runs):
        times, counts, nb_hosts = _state_steps(outputs)
        if not nb_hosts:
            continue
        xs, ys = _thin(times, counts["nb_computing"] / nb_hosts)
        data.append({"type": "scatter", "mode": "lines", "x": xs, "y": ys, "name": label,
                     "line": {"shape": "hv", "color": PALETTE[number % len(PALETTE)]}})
    return {"data": data, "layout": _layout("Utilization (hosts computing / hosts)", "time (s)", "utilization",
                                            yaxis={"title": {"text": "utilization"}, "range": [0, 1.05]})}
