"""The EAR energy model of the EAMC paper (§3.1, eq. 1-3): time, power and energy of an application on a
partition at every frequency, from its signature at the reference frequency and the partition's learned
coefficients.

An application's **signature** on a **module** (the EAR word for a kind of node: one per partition) is what
EAR measured at the module's reference frequency f_ref on one node: run time T_ref, DC node power P_ref,
cycles per instruction CPI_ref and memory transactions per instruction TPI_ref. The module's coefficients
A … F, learned by regression for every pair (reference frequency, target frequency), project it to any
target frequency f (EAMC paper eq. 1-3; EAR's ``basic_model.c``; ``REFERENCE.md`` §1.1)::

    P(f)   = A·P_ref + B·TPI_ref + C                    (eq. 1, watts per node)
    CPI(f) = D·CPI_ref + E·TPI_ref + F                  (eq. 2)
    T(f)   = T_ref · CPI(f)/CPI_ref · f_ref/f           (eq. 3, seconds)
    E(f)   = P(f) · T(f)                                (joules per node; × nodes for a job)

**Data** (:func:`load_ear_model`; the shipped folder ``energy_models/data/eamc/``, whose README says where
it comes from): ``apps`` (signatures), ``modules`` (our one-line-per-module form of ``2hw.conf``) and per
module the cubes ``<name>.energy`` (A-F), ``.power`` (A-C) and ``.time`` (D-F) of ``REFERENCE.md`` §1.2:
n slices (reference frequency index) × n rows (target frequency index) × columns, one row per line. n is
read from the row count (256 = 16², 400 = 20²) and the frequencies are ``freq_min + k × freq_inc`` built
with integer steps in MHz (the original reader's floating-point loop is why 2.8 and 3.2 GHz are absent).
Every malformed value is an :class:`~wattsched.base.errors.InputError` naming the file and the line;
``.power`` and ``.time`` must repeat the columns of ``.energy``, and every diagonal row (reference = target)
must be ``1 0 0 1 0 0`` (the model then returns the signature itself at f_ref).

**Guards the published plugin lacks** (``REFERENCE.md`` §1.3): a row of zeros means "no coefficients for
this pair" and makes the frequency *unavailable* (the plugin projects an energy of 0 there and only skips it
past index 0, so a zero first entry becomes the minimum and divides by zero); so does a projection whose power,
CPI or time is not a positive finite number. Unavailable values are NaN in a :class:`Projection` and never
chosen; minima are taken over available frequencies only. An application without a signature on a module
(a missing pair) has no projection there (:meth:`EarModel.projection` raises ``KeyError``): the scheduler
does not run it on that partition.

**A job** of application ``app`` whose requested time (walltime) and run time are given for the top
frequency of its first requested partition p0 (the paper's "primary partition", §3.3) takes, on partition p
at frequency f, ``ratio = T(app, p, f) / T_ref(app, p0)`` times as long (:meth:`EarModel.time_ratio`): the
time coefficient of §3.3 (``T_ref(p)/T_ref(p0)``, the plugin's ``time_parameter / time_proportion``) times
eq. 3. The reference frequency of both shipped modules is their top frequency.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Collection, Mapping, Sequence

import numpy as np

from wattsched.base.errors import InputError
from wattsched.base.fileio import require_regular_file

__all__ = ["APP_FIELD", "DATA_DIR", "EarModel", "Module", "PARTITIONS_FIELD", "Projection", "Signature",
           "load_ear_model", "parse_app", "parse_partitions"]

#: The job field naming the job's application (an id of the model's ``apps``; EAMC paper §3.4: "appID").
APP_FIELD = "app"
#: The job field listing the partitions a job may run on, the first one its primary partition (§3.3-3.4).
PARTITIONS_FIELD = "partitions"

#: The shipped data of the EAMC paper's p1/p2 system.
DATA_DIR = Path(__file__).resolve().parent / "data" / "eamc"

#: Columns of each cube file.
CUBE_COLUMNS: Mapping[str, tuple[str, ...]] = {
    "energy": ("A", "B", "C", "D", "E", "F"), "power": ("A", "B", "C"), "time": ("D", "E", "F")}
_DIAGONAL = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)


@dataclass(frozen=True)
class Signature:
    """An application measured on one node of a module at the module's reference frequency (``apps``)."""

    app: int
    module: str
    time_s: float
    power_w: float
    cpi: float
    tpi: float


@dataclass(frozen=True, eq=False)
class Module:
    """A kind of node (one partition's hardware): its frequencies and learned coefficients.

    Attributes:
        index: the module index of the ``apps`` file.
        name: the name of its cube files (``normal``, ``normal2``).
        cpu, cores: description (``modules`` file).
        frequencies_mhz: every frequency, ascending, in MHz (integer steps).
        reference_mhz: the frequency at which the signatures were measured (``freqNom``).
        coefficients: ``[reference index][target index]`` → A B C D E F (read-only array n × n × 6).
    """

    index: int
    name: str
    cpu: str
    cores: int
    frequencies_mhz: tuple[int, ...]
    reference_mhz: int
    coefficients: np.ndarray = field(repr=False)

    @property
    def frequencies_ghz(self) -> tuple[float, ...]:
        return tuple(f / 1000.0 for f in self.frequencies_mhz)

    @property
    def reference_index(self) -> int:
        return self.frequencies_mhz.index(self.reference_mhz)

    def frequency_index(self, ghz: float) -> int | None:
        """The index of the frequency ``ghz`` (within 0.5 MHz), or None when the module has no such step."""
        mhz = ghz * 1000.0
        for k, f in enumerate(self.frequencies_mhz):
            if abs(f - mhz) < 0.5:
                return k
        return None


@dataclass(frozen=True, eq=False)
class Projection:
    """One application on one module at every frequency of the module (eq. 1-3), per node.

    Arrays are indexed like :attr:`Module.frequencies_mhz` (ascending); unavailable frequencies (no
    coefficients, or a non-positive projection) hold NaN and ``available`` is False there.
    """

    signature: Signature
    frequencies_ghz: np.ndarray
    power_w: np.ndarray
    cpi: np.ndarray
    time_s: np.ndarray
    energy_j: np.ndarray
    available: np.ndarray

    @property
    def available_indexes(self) -> np.ndarray:
        return np.flatnonzero(self.available)

    def min_time_index(self) -> int:
        """The frequency of the shortest time (the highest one among equals): Min runtime's choice."""
        return _argmin_last(self.time_s, self.available)

    def min_energy_index(self) -> int:
        """The frequency of the least energy (the highest one among equals): Min energy's choice."""
        return _argmin_last(self.energy_j, self.available)

    @property
    def min_time_s(self) -> float:
        return float(np.nanmin(self.time_s))

    @property
    def min_energy_j(self) -> float:
        return float(np.nanmin(self.energy_j))


def _argmin_last(values: np.ndarray, available: np.ndarray) -> int:
    """The index of the smallest available value, the last (highest frequency) among equal ones."""
    best = -1
    for k in np.flatnonzero(available):
        if best < 0 or values[k] <= values[best]:
            best = int(k)
    return best


@dataclass(frozen=True, eq=False)
class EarModel:
    """Modules and signatures (:func:`load_ear_model`); projections are computed once and cached."""

    source: str
    modules: Mapping[str, Module]
    signatures: Mapping[tuple[int, str], Signature]
    _projections: dict[tuple[int, str], Projection] = field(default_factory=dict, repr=False)

    @property
    def apps(self) -> tuple[int, ...]:
        """Every application id with at least one signature, ascending."""
        return tuple(sorted({app for app, _ in self.signatures}))

    def has(self, app: int, module: str) -> bool:
        return (app, module) in self.signatures

    def projection(self, app: int, module: str) -> Projection:
        """``app`` on ``module`` at every frequency (eq. 1-3, per node).

        Raises:
            KeyError: the module is unknown or the application has no signature on it.
        """
        key = (app, module)
        cached = self._projections.get(key)
        if cached is not None:
            return cached
        if module not in self.modules:
            raise KeyError(f"EAR model {self.source} has no module '{module}' (modules: {', '.join(self.modules)})")
        signature = self.signatures.get(key)
        if signature is None:
            raise KeyError(f"EAR model {self.source} has no data for application {app} on module '{module}'")
        projection = self._project(signature, self.modules[module])
        self._projections[key] = projection
        return projection

    @staticmethod
    def _project(sig: Signature, module: Module) -> Projection:
        ref = module.reference_index
        c = module.coefficients[ref]  # one row per target frequency
        freqs = np.asarray(module.frequencies_mhz, dtype=float)
        a, b, cc, d, e, f = (c[:, i] for i in range(6))
        with np.errstate(all="ignore"):
            power = a * sig.power_w + b * sig.tpi + cc                       # eq. 1
            cpi = d * sig.cpi + e * sig.tpi + f                               # eq. 2
            time = sig.time_s * cpi / sig.cpi * (module.reference_mhz / freqs)  # eq. 3
            energy = power * time
        available = (~np.all(c == 0.0, axis=1) & np.isfinite(energy) & (power > 0) & (cpi > 0) & (time > 0))
        nan = np.full(len(freqs), np.nan)
        arrays = [np.where(available, x, nan) for x in (power, cpi, time, energy)]
        for x in (*arrays, available):
            x.setflags(write=False)
        ghz = freqs / 1000.0
        ghz.setflags(write=False)
        return Projection(sig, ghz, arrays[0], arrays[1], arrays[2], arrays[3], available)

    def time_ratio(self, app: int, module: str, index: int, primary_module: str) -> float:
        """How many times its reference run time a job of ``app`` whose times are given for the reference
        frequency of ``primary_module`` takes on ``module`` at frequency ``index`` (module docstring):
        ``T(app, module, f) / T_ref(app, primary_module)``; NaN when that frequency is unavailable.

        Raises:
            KeyError: no signature of ``app`` on either module.
        """
        primary = self.signatures.get((app, primary_module))
        if primary is None:
            raise KeyError(f"EAR model {self.source} has no data for application {app} on module '{primary_module}'")
        return float(self.projection(app, module).time_s[index]) / primary.time_s


# ------------------------------------------------------------------------------------------ job fields
def parse_app(value: object) -> int:
    """A job's ``app`` field: an integer ≥ 1 (``ValueError`` otherwise; whether the model knows it is the
    caller's check)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value) or value < 1:
        raise ValueError(f"must be an application id (an integer >= 1), got {value!r}")
    return int(value)


def parse_partitions(value: object) -> tuple[str, ...]:
    """A job's ``partitions`` field: a non-empty list of distinct partition names (``ValueError`` otherwise)."""
    if not isinstance(value, (list, tuple)) or not value or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"must be a non-empty list of partition names, got {value!r}")
    if len(set(value)) != len(value):
        raise ValueError(f"names a partition twice: {value!r}")
    return tuple(value)


def check_job_fields(fields: Mapping[str, object], source: object, where: str, apps: Collection[int] | None,
                     partitions: Sequence[str]) -> tuple[int | None, tuple[str, ...] | None]:
    """A job's ``app`` and ``partitions`` fields checked against an EAR model's applications (None: no model) and
    a platform's partition names: ``(app, requested partitions)``, None for a field the job does not give.

    Raises:
        InputError: naming ``source``, the job (``where``) and the field: an application id that is not an
            integer ≥ 1 or that the model does not know, a ``partitions`` value that is not a list of names or
            names a partition the platform lacks.
    """
    app: int | None = None
    requested: tuple[str, ...] | None = None
    if APP_FIELD in fields:
        try:
            app = parse_app(fields[APP_FIELD])
        except ValueError as exc:
            raise InputError(source, f"{where}.{APP_FIELD}", str(exc)) from None
        if apps is None or app not in apps:
            known = "no EAR model on this platform" if apps is None else (
                f"the EAR model knows {', '.join(map(str, sorted(apps)))}")
            raise InputError(source, f"{where}.{APP_FIELD}", f"unknown application {app} ({known})")
    if PARTITIONS_FIELD in fields:
        try:
            requested = parse_partitions(fields[PARTITIONS_FIELD])
        except ValueError as exc:
            raise InputError(source, f"{where}.{PARTITIONS_FIELD}", str(exc)) from None
        for name in requested:
            if name not in partitions:
                raise InputError(source, f"{where}.{PARTITIONS_FIELD}", f"the platform has no partition '{name}' "
                                 f"(partitions: {', '.join(partitions) or 'none'})")
    return app, requested


def too_wide_for_partitions(res: int, requested: Sequence[str], sizes: Mapping[str, int],
                            ranges: Mapping[str, int]) -> str:
    """The refusal of a job of ``res`` hosts that no partition it may use holds in one range of host ids (placement
    ``partitions``: first-fit inside a range): each partition's hosts (``sizes``), and the longest range of those
    made of several (``ranges``)."""
    held = ", ".join(f"{p or 'platform'} {sizes[p]}" for p in requested)
    split = ", ".join(f"{p or 'platform'} {ranges[p]}" for p in requested if ranges[p] < sizes[p])
    if split:
        held += f"; in one range of host ids, the most a job gets there: {split}"
    return f"{res} hosts: more than any of its partitions has ({held})"


# ---------------------------------------------------------------------------------------------- files
def _numbers(path: Path, lineno: int, fields: list[str], what: str) -> list[float]:
    values = []
    for text in fields:
        try:
            value = float(text)
        except ValueError:
            raise InputError(path, f"line {lineno}", f"{what}: {text!r} is not a number") from None
        if not math.isfinite(value):
            raise InputError(path, f"line {lineno}", f"{what}: {text!r} is not a finite number")
        values.append(value)
    return values


def _lines(path: Path) -> list[tuple[int, list[str]]]:
    """The non-blank, non-comment lines of ``path`` as (line number, fields)."""
    try:
        require_regular_file(path)
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(path, "", "missing: the EAR model needs this file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, "", f"cannot read it ({exc})") from None
    out = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        fields = line.split("#", 1)[0].split()
        if fields:
            out.append((lineno, fields))
    return out


@dataclass(frozen=True)
class _ModuleLine:
    index: int
    name: str
    cpu: str
    cores: int
    min_mhz: int
    inc_mhz: int
    ref_mhz: int


def _read_modules(path: Path) -> list[_ModuleLine]:
    modules: list[_ModuleLine] = []
    for lineno, fields in _lines(path):
        if len(fields) != 7:
            raise InputError(path, f"line {lineno}", f"expected 7 fields (index name cpu cores freq_min_ghz "
                                                     f"freq_inc_ghz freq_ref_ghz), got {len(fields)}")
        try:
            index, cores = int(fields[0]), int(fields[3])
        except ValueError:
            raise InputError(path, f"line {lineno}", "index and cores must be integers") from None
        fmin, finc, fref = (round(x * 1000.0) for x in _numbers(path, lineno, fields[4:], "frequency"))
        if fmin <= 0 or finc <= 0 or fref < fmin or (fref - fmin) % finc:
            raise InputError(path, f"line {lineno}", "frequencies must be positive and the reference frequency "
                                                     "a step of freq_inc above freq_min")
        if any(m.index == index or m.name == fields[1] for m in modules):
            raise InputError(path, f"line {lineno}", f"module {index} '{fields[1]}' is declared twice")
        modules.append(_ModuleLine(index, fields[1], fields[2], cores, fmin, finc, fref))
    if not modules:
        raise InputError(path, "", "no module declared")
    return modules


def _read_cube(path: Path, columns: tuple[str, ...]) -> tuple[np.ndarray, list[int]]:
    """The rows of a cube file (rows × columns) and the line number of each row."""
    rows, linenos = [], []
    for lineno, fields in _lines(path):
        if len(fields) != len(columns):
            raise InputError(path, f"line {lineno}", f"expected {len(columns)} numbers ({' '.join(columns)}), "
                                                     f"got {len(fields)}")
        rows.append(_numbers(path, lineno, fields, "coefficient"))
        linenos.append(lineno)
    if not rows:
        raise InputError(path, "", "no coefficients (empty file)")
    return np.asarray(rows, dtype=float), linenos


def _read_module(folder: Path, line: _ModuleLine) -> Module:
    energy_path = folder / f"{line.name}.energy"
    energy, linenos = _read_cube(energy_path, CUBE_COLUMNS["energy"])
    n = math.isqrt(len(energy))
    if n * n != len(energy):
        raise InputError(energy_path, f"line {linenos[-1]}", f"{len(energy)} rows: not n × n rows (one per pair of "
                                                             "reference and target frequencies)")
    for k in range(n):
        row = k * n + k
        if tuple(energy[row]) != _DIAGONAL and energy[row].any():
            raise InputError(energy_path, f"line {linenos[row]}", "a diagonal row (reference = target frequency) "
                                                                   "must be 1 0 0 1 0 0 (or zeros: no data)")
    frequencies = tuple(line.min_mhz + k * line.inc_mhz for k in range(n))
    if line.ref_mhz not in frequencies:
        raise InputError(folder / "modules", f"module '{line.name}'",
                         f"reference frequency {line.ref_mhz / 1000:g} GHz is not among the {n} frequencies of the "
                         f"cubes ({frequencies[0] / 1000:g}-{frequencies[-1] / 1000:g} GHz)")
    ref = frequencies.index(line.ref_mhz)
    if tuple(energy[ref * n + ref]) != _DIAGONAL:
        raise InputError(energy_path, f"line {linenos[ref * n + ref]}", f"the reference frequency "
                         f"{line.ref_mhz / 1000:g} GHz has no coefficients (its diagonal row must be 1 0 0 1 0 0)")
    for kind, cols in (("power", slice(0, 3)), ("time", slice(3, 6))):
        path = folder / f"{line.name}.{kind}"
        cube, lines = _read_cube(path, CUBE_COLUMNS[kind])
        if len(cube) != len(energy):
            raise InputError(path, f"line {lines[-1]}", f"{len(cube)} rows, but {energy_path.name} has {len(energy)}")
        differ = np.flatnonzero(np.any(cube != energy[:, cols], axis=1))
        if len(differ):
            k = int(differ[0])
            raise InputError(path, f"line {lines[k]}", f"{' '.join(CUBE_COLUMNS[kind])} differ from line "
                                                       f"{linenos[k]} of {energy_path.name}")
    coefficients = energy.reshape(n, n, 6)
    coefficients.setflags(write=False)
    return Module(line.index, line.name, line.cpu, line.cores, frequencies, line.ref_mhz, coefficients)


def _read_apps(path: Path, modules: Mapping[int, str]) -> dict[tuple[int, str], Signature]:
    lines = _lines(path)
    if not lines:
        raise InputError(path, "", "empty file (expected the number of applications, then one line per "
                                   "application and module)")
    first, fields = lines[0]
    try:
        count = int(fields[0])
        if len(fields) != 1:
            raise ValueError
    except ValueError:
        raise InputError(path, f"line {first}", "the first line must be the number of applications") from None
    signatures: dict[tuple[int, str], Signature] = {}
    for lineno, fields in lines[1:]:
        if len(fields) != 7:
            raise InputError(path, f"line {lineno}", f"expected 7 fields (app module 4 T_ref P_ref CPI_ref TPI_ref), "
                                                     f"got {len(fields)}")
        try:
            app, module, nparams = int(fields[0]), int(fields[1]), int(fields[2])
        except ValueError:
            raise InputError(path, f"line {lineno}", "app, module and parameter count must be integers") from None
        if app < 1:
            raise InputError(path, f"line {lineno}", f"application id must be at least 1, got {app}")
        if module not in modules:
            raise InputError(path, f"line {lineno}", f"module {module} is not declared in 'modules' "
                                                     f"({', '.join(map(str, sorted(modules)))})")
        if nparams != 4:
            raise InputError(path, f"line {lineno}", f"expected 4 parameters, got {nparams}")
        time_s, power_w, cpi, tpi = _numbers(path, lineno, fields[3:], "signature")
        if time_s <= 0 or power_w <= 0 or cpi <= 0 or tpi < 0:
            raise InputError(path, f"line {lineno}", "T_ref, P_ref and CPI_ref must be > 0 and TPI_ref >= 0")
        key = (app, modules[module])
        if key in signatures:
            raise InputError(path, f"line {lineno}", f"application {app} on module {module} is given twice")
        signatures[key] = Signature(app, modules[module], time_s, power_w, cpi, tpi)
    apps = {app for app, _ in signatures}
    if count != len(apps):
        raise InputError(path, f"line {first}", f"announces {count} applications, the file describes {len(apps)}")
    return signatures


@lru_cache(maxsize=8)
def _load(folder: str, stamp: tuple) -> EarModel:
    path = Path(folder)
    lines = _read_modules(path / "modules")
    modules = {line.name: _read_module(path, line) for line in lines}
    signatures = _read_apps(path / "apps", {line.index: line.name for line in lines})
    return EarModel(folder, modules, signatures)


def load_ear_model(directory: str | os.PathLike | None = None) -> EarModel:
    """The EAR model of a data folder (default: the shipped one, :data:`DATA_DIR`), read once per content.

    Raises:
        InputError: a missing or malformed file, naming the file and the line.
    """
    folder = Path(directory) if directory is not None else DATA_DIR
    try:
        if not folder.is_dir():
            raise InputError(folder, "", "not a folder of EAR model data (apps, modules, <module>.energy/.power/.time)")
        stamp = tuple(sorted((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in folder.iterdir()
                             if p.is_file()))
    except OSError as exc:  # a name too long, a folder that cannot be listed: no traceback
        raise InputError(folder, "", f"cannot read the folder ({exc.strerror or exc})") from None
    return _load(str(folder.resolve()), stamp)


# ------------------------------------------------------------------------------------- platform node
#: Idle power of a node, watts: not in the EAR data (the paper's energy metric excludes idle nodes); a
#: typical dual-socket node, only used for the platform's own energy (Batsim's ``consumed_joules``).
IDLE_W = 100.0


@dataclass(frozen=True)
class EarNode:
    """A partition's node as SimGrid pstates (the attributes :mod:`wattsched.platforms.generate` writes).

    Pstate 0 is the top frequency, 1 the sleep pstate, 2 and 3 the virtual switch-off and switch-on pstates
    (the same indices on every partition, so that one power manager switches them all), then every lower
    frequency step in descending order: pstate 3 + k is the k-th step below the top. A computation pstate's
    speed is its frequency (``2700.0Mf`` at 2.7 GHz: one flop per cycle), its ``idle`` wattage
    :data:`IDLE_W` and its ``full`` wattage the mean over the model's applications of eq. 1's power at that
    frequency (linearly interpolated between neighbouring frequencies where no application has data). The
    sleep and transition pstates are the Taurus node's (energy-budget paper table I, :mod:`.taurus`).
    """

    module: str
    frequencies_ghz: tuple[float, ...]  # of the computation pstates, in pstate order
    pstates: tuple  # of taurus.Pstate
    sleep_pstate: int = 1
    switch_off_pstate: int = 2
    switch_on_pstate: int = 3
    off_w: float = 0.0


def ear_node(model: EarModel, module: str, idle_w: float = IDLE_W) -> EarNode:
    """The SimGrid node of ``module`` (:class:`EarNode`).

    Raises:
        KeyError: the model has no such module.
    """
    from wattsched.energy_models.taurus import TAURUS, Pstate, PstateKind

    mod = model.modules[module]
    freqs = np.asarray(mod.frequencies_ghz)
    powers = [model.projection(app, module).power_w for app in model.apps if model.has(app, module)]
    stacked = np.vstack(powers) if powers else np.full((1, len(freqs)), np.nan)
    counts = np.sum(~np.isnan(stacked), axis=0)
    with np.errstate(all="ignore"):
        mean = np.where(counts > 0, np.nansum(stacked, axis=0) / np.maximum(counts, 1), np.nan)
    known = ~np.isnan(mean)
    full = np.interp(freqs, freqs[known], mean[known]) if known.any() else np.full(len(freqs), idle_w)
    order = list(range(len(freqs) - 1, -1, -1))  # top frequency first
    top, lower = order[0], order[1:]
    taurus = TAURUS.pstates
    sleep, off, on = (taurus[TAURUS.sleep_pstate], taurus[TAURUS.switch_off_pstate], taurus[TAURUS.switch_on_pstate])
    pstates = [Pstate(0, PstateKind.COMPUTATION, mod.frequencies_mhz[top] * 1.0, "Mf", idle_w, float(full[top])),
               Pstate(1, PstateKind.SLEEP, sleep.speed_value, sleep.speed_unit, sleep.idle_w, sleep.full_w),
               Pstate(2, PstateKind.SWITCH_OFF, off.speed_value, off.speed_unit, off.idle_w, off.full_w),
               Pstate(3, PstateKind.SWITCH_ON, on.speed_value, on.speed_unit, on.idle_w, on.full_w)]
    for i, k in enumerate(lower):
        pstates.append(Pstate(4 + i, PstateKind.COMPUTATION, mod.frequencies_mhz[k] * 1.0, "Mf", idle_w, float(full[k])))
    ghz = tuple(float(freqs[k]) for k in order)
    return EarNode(module, ghz, tuple(pstates), off_w=sleep.idle_w)
