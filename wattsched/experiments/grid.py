"""Grids of runs: platforms × workloads × seeds × schedulers × options, from a YAML (or JSON) file.

A grid is the study a researcher writes down; :func:`grid_runs` turns it into the :class:`~.sweep.Run`\\ s of a
sweep, each keyed by a hash of its inputs, so that a finished run is never run again — even after the grid
file is edited — and :func:`write_results` writes one table (CSV and Parquet) with every run's metrics and
options, and comparison plots. Example (``wattsched sweep study.yaml --out results/study``)::

    platforms:                       # files, or generated platforms
      - platforms/taurus_16.xml
      - {taurus: {hosts: 64}}        # also {esc: {hosts: 128}}
    workloads:                       # files, or synthetic ones (one per seed)
      - workloads/demo_taurus16.json
      - {synth: {hosts: 16, days: 1, load: 0.6}}
    seeds: [1, 2]                    # the seeds of the synthetic workloads
    schedulers:                      # a preset (or any scheduler name), optionally with its own options
      - easy-backfill
      - {name: energy-bud, options: {budget_fraction: 0.6, window_end_s: 43200}}
    options:                         # crossed with every scheduler, over its own options
      - {}
      - {placement: best-fit}
    dynamic_jobs: false              # the simulator accepts dynamic job registration
    tau_s: 10                        # metrics: bounded-slowdown threshold, window, all-computing power
    window: [0, 86400]
    max_power_w: 3051.8

Each run's outputs go to ``<out>/runs/<key>/out_*.csv``; generated inputs to ``<out>/inputs/``. The key hashes
the platform's and the workload's contents, the scheduler, its options and the flags.
"""

from __future__ import annotations

import errno
import hashlib
import itertools
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from wattsched.base.errors import InputError, OptionError
from wattsched.base.fileio import require_regular_file, write_files, write_if_changed
from wattsched.base.validate import MAX_DOUBLE, check_count, check_number, window_beyond_time
from wattsched.experiments.sweep import Run

__all__ = ["Grid", "grid_runs", "load_grid", "parse_grid", "write_results", "results_paths", "COMPARED_METRICS"]

#: The metrics the comparison plots show (when the runs have them).
COMPARED_METRICS = ("utilization", "mean_bounded_slowdown", "mean_waiting_time_s", "total_energy_j", "makespan_s")
_KEYS = {"platforms", "workloads", "seeds", "schedulers", "options", "dynamic_jobs", "tau_s", "window",
         "max_power_w", "name"}


@dataclass(frozen=True)
class Grid:
    """A parsed grid file (module docstring)."""

    source: str
    platforms: tuple[Any, ...]
    workloads: tuple[Any, ...]
    seeds: tuple[int, ...]
    schedulers: tuple[tuple[str, Mapping[str, Any]], ...]
    options: tuple[Mapping[str, Any], ...]
    dynamic_jobs: bool = False
    tau_s: float = 10.0
    window: tuple[float, float] | None = None
    max_power_w: float | None = None


def load_grid(path: str | os.PathLike) -> Grid:
    """Read and check a grid file (YAML, or JSON), its aliases bounded (no "billion laughs":
    :func:`wattsched.base.validate.load_yaml`).

    Raises:
        InputError: unreadable or malformed file, naming the field.
    """
    from wattsched.base.validate import decode_utf8, load_yaml

    source = str(path)
    try:
        require_regular_file(path)
        data = Path(path).read_bytes()
    except OSError as error:
        raise InputError(source, "", f"cannot read the grid ({error.strerror or error})") from None
    text = decode_utf8(data, source)  # UTF-8 (a byte-order mark skipped, as YAML does): not UTF-16
    data = load_yaml(text, source, unique_keys=True)
    return parse_grid(data, source)


def parse_grid(data: Any, source: str = "<grid>") -> Grid:
    """Check a grid given as a mapping (a parsed grid file, or a dict built in Python).

    Raises:
        InputError: a malformed field, naming ``source`` and the field.
    """
    if not isinstance(data, Mapping):
        raise InputError(source, "", "a grid is a mapping with platforms, workloads and schedulers")
    unknown = sorted(set(data) - _KEYS, key=str)  # str: a YAML key 1 beside a key x has no order with it
    if unknown:
        raise InputError(source, str(unknown[0]), f"unknown field (fields: {', '.join(sorted(_KEYS))})")

    def items(key: str, required: bool = True) -> list[Any]:
        value = data.get(key)
        if value is None:
            if required:
                raise InputError(source, key, "missing (a list)")
            return []
        if not isinstance(value, (list, tuple)) or not value:  # a tuple: a grid built in Python (window's type)
            raise InputError(source, key, "must be a non-empty list")
        return list(value)

    schedulers: list[tuple[str, Mapping[str, Any]]] = []
    for i, entry in enumerate(items("schedulers")):
        # the name as the runs take it (' fcfs' and 'fcfs' made two runs of one simulation)
        if isinstance(entry, str):
            schedulers.append((entry.strip(), {}))
        elif isinstance(entry, Mapping) and isinstance(entry.get("name"), str) and set(entry) <= {"name", "options"} \
                and isinstance(entry.get("options", {}), Mapping):
            schedulers.append((entry["name"].strip(), dict(entry.get("options", {}))))
        else:
            raise InputError(source, f"schedulers[{i}]", "a scheduler name, or {name: NAME, options: {...}}")
    options = items("options", required=False) or [{}]
    for i, entry in enumerate(options):
        if not isinstance(entry, Mapping):
            raise InputError(source, f"options[{i}]", "must be a mapping of scheduler options")
    seeds = items("seeds", required=False) or [1]
    for i, seed in enumerate(seeds):
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise InputError(source, f"seeds[{i}]", f"must be an integer ≥ 0, got {seed!r}")
        if seed in seeds[:i]:  # the same synthetic workloads twice: two runs of one name
            raise InputError(source, f"seeds[{i}]", f"the same seed as seeds[{seeds.index(seed)}], {seed}")
    files: dict[str, list[Any]] = {}
    for key in ("platforms", "workloads"):
        files[key] = items(key)
        for i, entry in enumerate(files[key]):
            if isinstance(entry, os.PathLike) and isinstance(os.fspath(entry), str):  # a Path, as simulate() takes
                files[key][i] = entry = os.fspath(entry)
            if not isinstance(entry, (str, Mapping)):
                raise InputError(source, f"{key}[{i}]", f"a file path, or a generator mapping, got {entry!r:.40}")
    window = data.get("window")
    if window is not None:
        if not (isinstance(window, (list, tuple)) and len(window) == 2 and all(_finite(x) for x in window)
                and window[1] > window[0] >= 0):
            raise InputError(source, "window", "must be [start, end] in seconds, 0 ≤ start < end")
        window = (float(window[0]), float(window[1]))
        beyond = window_beyond_time(*window)
        if beyond:
            raise InputError(source, "window", beyond)
    for key in ("tau_s", "max_power_w"):
        if data.get(key) is not None and not (_finite(data[key]) and data[key] > 0):
            raise InputError(source, key, f"must be a positive number, got {data[key]!r:.40}")
    if not isinstance(data.get("dynamic_jobs", False), bool):
        raise InputError(source, "dynamic_jobs", "must be true or false")
    if "name" in data and not (isinstance(data["name"], str) and data["name"].strip()):
        raise InputError(source, "name", f"must be a non-empty string (the study's name), got {data['name']!r:.40}")
    return Grid(source, tuple(files["platforms"]), tuple(files["workloads"]), tuple(seeds), tuple(schedulers),
                tuple(dict(o) for o in options), bool(data.get("dynamic_jobs", False)),
                float(data.get("tau_s") or 10.0), window,
                None if data.get("max_power_w") is None else float(data["max_power_w"]))


def _finite(x: Any) -> bool:
    """A number (not a bool) that is a finite double: NaN, ±inf and integers beyond ±1.8e308 are not (``math.isfinite``
    raises OverflowError on those integers)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and -MAX_DOUBLE <= x <= MAX_DOUBLE


def _digest(*parts: bytes | str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part if isinstance(part, bytes) else part.encode())
        h.update(b"\0")
    return h.hexdigest()[:16]


def _existing_file(spec: str, grid: Grid, field: str) -> Path:
    """``spec`` as the path of an existing file, else :class:`InputError` naming ``field`` and the path, quoted and
    cut when it is no short printable name (XML or JSON text given as a file, a line break): a name the system
    refuses (too long: ``is_file`` raised OSError, a NUL) names no file either."""
    from wattsched.experiments.runner import shown_path

    try:
        found = Path(spec).is_file()
        if not found:  # there, but a folder or a FIFO, device or socket: said so (it was "no file fifo")
            require_regular_file(spec)
    except (OSError, ValueError) as exc:
        if isinstance(exc, OSError) and exc.errno in (errno.EISDIR, errno.EINVAL) and exc.filename == spec:
            raise InputError(grid.source, field, f"{shown_path(spec)}: {exc.strerror}") from None
        found = False
    if not found:
        raise InputError(grid.source, field, f"no file {shown_path(spec) if spec.strip() else repr(spec)}")
    return Path(spec)


def _platform_file(spec: Any, grid: Grid, index: int, inputs: Path) -> tuple[Path, str, str | None]:
    """(path, label, text) of a platform entry: a file (text None), or a generator's XML to write at ``path``."""
    if isinstance(spec, str):
        path = _existing_file(spec, grid, f"platforms[{index}]")
        return path, path.stem, None
    from wattsched.platforms import generate

    makers = {"taurus": generate.taurus_platform_xml, "esc": generate.esc_platform_xml}
    if len(spec) != 1 or next(iter(spec)) not in makers or not isinstance(next(iter(spec.values())), Mapping):
        raise InputError(grid.source, f"platforms[{index}]", f"a file, or one of {sorted(makers)}: {{hosts: N}}")
    kind, params = next(iter(spec.items()))
    if set(params) != {"hosts"}:
        raise InputError(grid.source, f"platforms[{index}].{kind}", "takes hosts: N (an integer)")
    field = f"platforms[{index}].{kind}.hosts"
    check_number(params["hosts"], grid.source, field, min=1, integer=True)
    try:
        text = makers[kind](params["hosts"])
    except OptionError as error:  # beyond the bound of hosts
        raise InputError(grid.source, field, str(error)) from None
    return inputs / f"{kind}_{params['hosts']}.xml", f"{kind}{params['hosts']}", text


def _workload_files(spec: Any, grid: Grid, index: int, inputs: Path) -> list[tuple[Path, str, int | None, str | None]]:
    """(path, label, seed, text) of a workload entry: one file (text None), or one synthetic workload per seed
    (its JSON to write at ``path``)."""
    if isinstance(spec, str):
        path = _existing_file(spec, grid, f"workloads[{index}]")
        return [(path, path.stem, None, None)]
    from wattsched.workloads.synthetic import synthetic_week

    if set(spec) != {"synth"} or not isinstance(spec["synth"], Mapping):
        raise InputError(grid.source, f"workloads[{index}]", "a file, or synth: {hosts: N, days: D, load: L, users: U}")
    params = dict(spec["synth"])
    allowed = {"hosts", "days", "load", "users"}
    if "hosts" not in params or set(params) - allowed:
        raise InputError(grid.source, f"workloads[{index}].synth", "takes hosts (required), days, load, users")
    where = f"workloads[{index}].synth"
    hosts = check_number(params["hosts"], grid.source, f"{where}.hosts", min=1, integer=True)
    days = check_number(params.get("days", 7), grid.source, f"{where}.days", min=0.0, min_open=True)
    check_count(days, "days", grid.source, f"{where}.days", "days")  # 1e308 days: an infinite "duration_s"
    load = check_number(params.get("load", 0.85), grid.source, f"{where}.load", min=0.0, min_open=True)
    users = check_number(params.get("users", 50), grid.source, f"{where}.users", min=1, integer=True)
    out: list[tuple[Path, str, int | None, str | None]] = []
    for seed in grid.seeds:
        try:
            work = synthetic_week(int(hosts), seed=seed, duration_s=days * 86400.0, target_load=load,
                                  users=int(users))
        except OptionError as error:  # beyond a bound (hosts, days, jobs)
            raise InputError(grid.source, where, str(error)) from None
        label = f"synth{params['hosts']}-" + "-".join(f"{k}{params[k]}" for k in sorted(params) if k != "hosts")
        out.append((inputs / f"{label}-s{seed}.json", label.rstrip("-"), seed, json.dumps(work, sort_keys=True)))
    return out


def _check_size(grid: Grid) -> None:
    """The runs of ``grid`` (platforms × workloads, a synthetic one per seed, × schedulers × options) within the
    ``runs`` bound, counted before anything is built or generated: a grid of a hundred lines can name millions of
    runs, which enumerating alone would take minutes and gigabytes to refuse.

    Raises:
        InputError: naming the grid and the bound.
    """
    workloads = sum(1 if isinstance(spec, str) else len(grid.seeds) for spec in grid.workloads)
    runs = len(grid.platforms) * workloads * len(grid.schedulers) * len(grid.options)
    check_count(runs, "runs", grid.source, "", f"runs ({len(grid.platforms)} platforms × {workloads} workloads × "
                f"{len(grid.schedulers)} schedulers × {len(grid.options)} options)")


def _check_schedulers(grid: Grid) -> None:
    """Every scheduler of ``grid`` built with its own options, then with each options entry, as a run would
    build it, so that an unknown name or a bad option is refused before the sweep starts (not as failed runs).

    Raises:
        InputError: naming the grid field: ``schedulers[i]`` (unknown, or its own options refused) or
            ``options[j]`` (the entry's options refused by that scheduler).
    """
    from wattsched.experiments.runner import check_options, check_scheduler
    from wattsched.schedulers.protocol import scheduler_handler

    for i, (scheduler, own) in enumerate(grid.schedulers):
        for field, options in [(f"schedulers[{i}]", own)] + [(f"options[{j}]", {**own, **extra})
                                                            for j, extra in enumerate(grid.options) if extra]:
            try:
                check_scheduler(scheduler)
                checked = check_options(options)
                scheduler_handler(scheduler, checked)  # NaN refused for any scheduler, as -o's JSON
                json.dumps(checked)  # a run's key hashes them (a pybatsim scheduler's options are not checked)
            except OptionError as error:
                raise InputError(grid.source, field, str(error)) from None
            except (TypeError, ValueError) as error:  # bytes, a set, an object given in Python
                raise InputError(grid.source, field, f"options must be JSON values, as in a grid file ({error})"
                                 ) from None


def _check_on_platforms(grid: Grid, platforms: list[tuple[Path, str, str | None]]) -> None:
    """Every preset of ``grid`` with its options (and each options entry) started on every platform, as its run
    starts it: an option the platform cannot serve (a sleep pstate it lacks, UPAS without gears, ``min_on`` beyond
    its hosts) is refused before the sweep starts, not reported as a failed run after the others.

    Raises:
        InputError: naming the grid field (as :func:`_check_schedulers`) and the platform.
    """
    from wattsched.experiments.runner import as_platform, check_run_scheduler, preset_of

    presets = [(i, scheduler, own) for i, (scheduler, own) in enumerate(grid.schedulers)
               if preset_of(scheduler) is not None]  # (another scheduler is not started here)
    for path, label, text in platforms if presets else []:
        platform = as_platform(path if text is None else text)
        for i, scheduler, own in presets:
            for field, options in [(f"schedulers[{i}]", own)] + [(f"options[{j}]", {**own, **extra})
                                                                for j, extra in enumerate(grid.options) if extra]:
                try:
                    check_run_scheduler(scheduler, options, platform, dynamic_jobs=grid.dynamic_jobs)
                except OptionError as error:
                    raise InputError(grid.source, field, f"on platform {label}: {error}") from None


#: The fields of a run's entries, in the order of its indexes.
_FIELDS = ("platforms", "workloads", "schedulers", "options")


def _check_twin(grid: Grid, seen: dict[str, tuple[tuple[int, int, int, int], str]], value: str, name: str,
                indexes: tuple[int, int, int, int], whats: tuple[str, str, str, str],
                consequence: Callable[[str, str], str]) -> None:
    """Two runs of ``grid`` of one ``value`` (one name: the same scheduler and options twice, two inputs of one label;
    one key: the same simulation under two names, two inputs of the same contents such as a copy of a workload file,
    a generated platform and its file, a synthetic workload with a default written out) are refused naming the later
    entry and the earlier one: ``whats[k]`` of the first field where their entries differ, then ``consequence(name,
    earlier name)``.

    Raises:
        InputError: naming the grid field.
    """
    first, earlier = seen.setdefault(value, (indexes, name))
    if first == indexes:
        return
    for field, a, b, what in zip(_FIELDS, first, indexes, whats):
        if a != b:
            raise InputError(grid.source, f"{field}[{b}]", f"{what} as {field}[{a}]: {consequence(name, earlier)}")


def _check_file_inputs(grid: Grid, out: Path, generated: list[tuple[Path, str | None]]) -> None:
    """No input file of ``grid`` is a file the sweep writes (``results.csv``, ``results.parquet``, a generated
    input of other contents).

    Raises:
        OutputError: naming the input and the output.
    """
    from wattsched.base.errors import OutputError
    from wattsched.experiments.runner import file_identity

    written = {file_identity(out / name): out / name for name in ("results.csv", "results.parquet")}
    files = []
    for path, text in generated:
        if text is None:
            files.append(path)
        else:
            try:
                same = path.read_text(encoding="utf-8") == text
            except (OSError, UnicodeDecodeError):
                same = False
            if not same:
                written[file_identity(path)] = path
    for path in files:
        target = written.get(file_identity(path))
        if target is not None:
            raise OutputError(f"out (--out) {out}: the sweep writes {target}, an input of the grid ({path}): it "
                              "would overwrite it; give another folder")


def _simulation_text(scheduler: str, options: Mapping[str, Any]) -> str:
    """The scheduler and options as the simulation reads them, for the grid's check of twin runs: a preset's pieces and
    every option's value, defaults filled in and each of its option's type (``{x: 600}`` beside ``{x: 600.0}`` of a
    number option, or ``{}`` beside a default written out, are one simulation; noticed in earlier sessions); another
    scheduler's name and options as given. A run's folder keeps the key of the options as given, so that the runs of
    an earlier sweep are found again."""
    from wattsched.experiments.runner import preset_of
    from wattsched.schedulers.presets import PRESETS

    preset = PRESETS.get(preset_of(scheduler) or "")
    if preset is None:
        return json.dumps([scheduler, options], sort_keys=True)
    chosen, values = preset.validate(options)  # (checked before: no error)
    return json.dumps([chosen, values], sort_keys=True, default=repr)


def grid_runs(grid: Grid, out: str | os.PathLike) -> list[Run]:
    """The runs of ``grid``, their outputs under ``out/runs/<key>`` (module docstring). Every entry is checked
    and every generated input made before anything is written: a bad grid leaves ``out`` as it was.

    Raises:
        InputError: a missing input file or a malformed generator entry (naming the grid field).
        OutputError: ``out`` cannot be a folder written to (a file, a parent that is a file, read-only).
    """
    from wattsched.base.batsim_files import output_paths
    from wattsched.base.validate import check_output_files
    from wattsched.experiments.runner import check_options

    out = Path(out)
    option = f"out (--out) {out}"
    check_output_files([*results_paths(out), out / "inputs" / "x", out / "runs" / "x"], option)
    _check_size(grid)
    _check_schedulers(grid)
    inputs = out / "inputs"
    platforms = [_platform_file(p, grid, i, inputs) for i, p in enumerate(grid.platforms)]
    workloads = [(i, w) for i, spec in enumerate(grid.workloads) for w in _workload_files(spec, grid, i, inputs)]
    generated = [(p[0], p[2]) for p in platforms] + [(w[0], w[3]) for _, w in workloads]
    # a folder or FIFO left where a generated input goes (reading it to compare raised, or blocked)
    check_output_files([path for path, text in generated if text is not None], option)
    _check_file_inputs(grid, out, generated)
    _check_on_platforms(grid, platforms)
    names: dict[str, tuple[tuple[int, int, int, int], str]] = {}
    for (pi, (_, plabel, _)), (wi, (_, wlabel, seed, _)), (si, (scheduler, own)), (oi, extra) in itertools.product(
            enumerate(platforms), workloads, enumerate(grid.schedulers), enumerate(grid.options)):
        options = {**own, **extra}
        label = scheduler + ("" if not options else " " + ",".join(f"{k}={options[k]}" for k in sorted(options)))
        name = f"{label} | {plabel} | {wlabel}" + ("" if seed is None else f" | seed {seed}")
        _check_twin(grid, names, name, name, (pi, wi, si, oi),
                    ("the same platform label", "the same workload label", "the same scheduler and options",
                     "the same options"), lambda name, _: f"two runs would be named {name!r}")
    contents = {path: path.read_bytes() if text is None else text.encode() for path, text in generated}
    runs: list[Run] = []
    keys: dict[str, tuple[tuple[int, int, int, int], str]] = {}
    for (pi, (ppath, plabel, _)), (wi, (wpath, wlabel, seed, _)), (si, (scheduler, own)), (oi, extra) in \
            itertools.product(enumerate(platforms), workloads, enumerate(grid.schedulers), enumerate(grid.options)):
        options = check_options({**own, **extra})  # numpy's numbers as Python's (checked above: no error)
        options_text = json.dumps(options, sort_keys=True)
        key = _digest(contents[ppath], contents[wpath], scheduler, options_text, str(grid.dynamic_jobs))
        label = scheduler + ("" if not options else " " + ",".join(f"{k}={options[k]}" for k in sorted(options)))
        name = f"{label} | {plabel} | {wlabel}" + ("" if seed is None else f" | seed {seed}")
        simulation = _digest(contents[ppath], contents[wpath], _simulation_text(scheduler, options),
                             str(grid.dynamic_jobs))
        _check_twin(grid, keys, simulation, name, (pi, wi, si, oi),
                    ("the same contents", "the same contents", "the same scheduler and options", "the same options"),
                    lambda name, earlier: f"runs {name!r} and {earlier!r} would be one simulation")
        tags = {"label": label, "platform_label": plabel, "workload_label": wlabel, "seed": seed, "key": key,
                **{f"option_{k}": json.dumps(v) if isinstance(v, (dict, list)) else v for k, v in options.items()}}
        runs.append(Run(name, str(ppath), str(wpath), scheduler, options, str(out / "runs" / key / "out"),
                        window=grid.window, max_power_w=grid.max_power_w, tau_s=grid.tau_s, tags=tags,
                        dynamic_jobs=grid.dynamic_jobs))
    # what an earlier sweep (or anything else) left in out/runs: a file where a run's folder goes, a folder where
    # one of its outputs goes (which would also pass for a finished run)
    check_output_files([path for run in runs for path in output_paths(run.prefix).values()], option)
    for path, text in generated:
        if text is not None:
            write_if_changed(path, text)
    return runs


def results_paths(out: str | os.PathLike) -> list[Path]:
    """The files :func:`write_results` may write in ``out``: the table and every comparison plot (checked before
    a sweep starts: a ``plots`` that is a file was found only once every run had ended)."""
    out = Path(out)
    return [out / "results.csv", out / "results.parquet", *(out / "plots" / f"{m}.png" for m in COMPARED_METRICS)]


def write_results(frame: pd.DataFrame, out: str | os.PathLike) -> list[Path]:
    """``results.csv`` and ``results.parquet`` (every run: metrics, options, status) and one comparison plot
    per metric in ``plots/`` (mean over seeds and inputs of each scheduler and options, with min and max);
    returns the files written."""
    out = Path(out)
    saves: dict[Path, Callable[[Path], object]] = {
        out / "results.csv": lambda p: frame.to_csv(p, index=False),
        out / "results.parquet": lambda p: frame.astype({c: str for c in frame.columns
                                                         if frame[c].dtype == object}).to_parquet(p)}
    write_files(saves)  # both tables or neither (a full disk after the CSV left it beside the last sweep's parquet)
    written = [*saves, *_comparison_plots(frame, out / "plots")]
    return written


def _comparison_plots(frame: pd.DataFrame, folder: Path) -> list[Path]:
    from matplotlib.figure import Figure

    from wattsched.analysis.plots import save_figure

    ok = frame[frame["status"] != "failed"] if "status" in frame else frame
    label = ok["label"] if "label" in ok else ok["name"]
    paths = []
    for metric in COMPARED_METRICS:
        if ok.empty or metric not in ok:  # an earlier sweep's plot of it (every run failed now) is not this one's
            (folder / f"{metric}.png").unlink(missing_ok=True)
            continue
        stats = pd.DataFrame({"label": label, "value": pd.to_numeric(ok[metric], errors="coerce")}) \
            .groupby("label", sort=False)["value"].agg(["mean", "min", "max"])
        longest = max(len(str(name)) for name in stats.index)
        figure = Figure(figsize=(6.0 + 0.07 * longest, 1.2 + 0.45 * len(stats)))
        axes = figure.add_subplot()
        y = list(range(len(stats)))[::-1]  # the first scheduler on top
        axes.barh(y, stats["mean"], color="tab:blue", alpha=0.8)
        axes.errorbar(stats["mean"], y, xerr=[stats["mean"] - stats["min"], stats["max"] - stats["mean"]],
                      fmt="none", ecolor="black", capsize=3)
        # labels as they are: an option value holding two '$' is no mathtext (a backslash there raised a ValueError)
        axes.set_yticks(y, [str(name) for name in stats.index], fontsize=8, parse_math=False)
        axes.set_xlabel(metric)
        axes.set_title(f"{metric} (mean over inputs and seeds; whiskers: min to max)", fontsize=10)
        figure.tight_layout()
        paths.append(save_figure(figure, folder / f"{metric}.png"))
    return paths
