"""The EAR model (energy_models/ear.py): the shipped data, eq. 1-3 by hand, the guards, malformed files."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from wattsched.base.errors import InputError
from wattsched.energy_models.ear import DATA_DIR, ear_node, load_ear_model, parse_app, parse_partitions

MODULES = {"normal": (0, 16, 2.7), "normal2": (1, 20, 3.1)}  # index, frequencies, reference GHz


def rows(path: Path) -> list[list[float]]:
    return [[float(x) for x in line.split()] for line in path.read_text().splitlines() if line.strip()]


def test_the_shipped_data_ships_with_the_package() -> None:
    assert DATA_DIR.is_dir() and DATA_DIR.parent.parent.name == "energy_models"
    assert {p.name for p in DATA_DIR.iterdir()} >= {
        "apps", "modules", "README.md", *(f"{m}.{k}" for m in MODULES for k in ("energy", "power", "time"))}


@pytest.mark.parametrize("module", MODULES)
def test_row_counts_frequencies_and_the_diagonal(module: str) -> None:
    _, n, ref = MODULES[module]
    for kind in ("energy", "power", "time"):
        assert len(rows(DATA_DIR / f"{module}.{kind}")) == {"normal": 256, "normal2": 400}[module]
    model = load_ear_model()
    mod = model.modules[module]
    assert mod.frequencies_mhz == tuple(1200 + 100 * k for k in range(n))  # integer steps: 1.2 .. 2.7 / 3.1
    assert mod.reference_mhz == round(ref * 1000) == mod.frequencies_mhz[-1]
    energy = rows(DATA_DIR / f"{module}.energy")
    with_data = 0
    for k in range(n):
        diagonal = energy[k * n + k]
        if any(any(row) for row in energy[k * n:(k + 1) * n]):
            assert diagonal == [1, 0, 0, 1, 0, 0]
            with_data += 1
        else:  # a reference frequency without data: its whole slice is zeros
            assert diagonal == [0] * 6
    assert with_data == {"normal": 15, "normal2": 15}[module]
    assert tuple(mod.coefficients[mod.reference_index, mod.reference_index]) == (1, 0, 0, 1, 0, 0)


def signature(app: int, module: str) -> tuple[float, float, float, float]:
    """T_ref, P_ref, CPI_ref, TPI_ref read from the apps file's text."""
    index = MODULES[module][0]
    for line in (DATA_DIR / "apps").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[:3] == [str(app), str(index), "4"]:
            return tuple(float(x) for x in fields[3:])  # type: ignore[return-value]
    raise AssertionError(f"no signature of {app} on {module}")


@pytest.mark.parametrize("app,module,ghz", [(1, "normal", 1.8), (4, "normal", 2.7), (6, "normal", 1.2),
                                            (8, "normal2", 1.2), (2, "normal2", 3.0), (7, "normal2", 2.4)])
def test_time_and_energy_by_hand_from_eq_1_to_3(app: int, module: str, ghz: float) -> None:
    _, n, ref = MODULES[module]
    t_ref, p_ref, cpi_ref, tpi_ref = signature(app, module)
    target = round((ghz - 1.2) * 10)
    reference = round((ref - 1.2) * 10)
    a, b, c, d, e, f = rows(DATA_DIR / f"{module}.energy")[reference * n + target]  # slice = reference frequency
    power = a * p_ref + b * tpi_ref + c  # eq. 1
    cpi = d * cpi_ref + e * tpi_ref + f  # eq. 2
    time = t_ref * cpi / cpi_ref * ref / ghz  # eq. 3
    projection = load_ear_model().projection(app, module)
    assert projection.frequencies_ghz[target] == pytest.approx(ghz)
    assert projection.power_w[target] == pytest.approx(power, rel=1e-12)
    assert projection.cpi[target] == pytest.approx(cpi, rel=1e-12)
    assert projection.time_s[target] == pytest.approx(time, rel=1e-12)
    assert projection.energy_j[target] == pytest.approx(power * time, rel=1e-12)
    if target == reference:  # the model returns the signature at the reference frequency
        assert (projection.time_s[target], projection.power_w[target]) == pytest.approx((t_ref, p_ref))


def test_a_job_of_the_primary_partition_scales_by_the_time_coefficient() -> None:
    model = load_ear_model()
    t_p1 = signature(8, "normal")[0]
    ratio = model.time_ratio(8, "normal2", 0, "normal")  # STREAM on p2 at 1.2 GHz, times given for p1 at 2.7
    assert ratio == pytest.approx(model.projection(8, "normal2").time_s[0] / t_p1)
    assert ratio < 1  # STREAM runs faster on p2 (table 1: 107.55 s vs 81.43 s at the top frequencies)


@pytest.mark.parametrize("module,missing", [("normal", [2.0]), ("normal2", [1.4, 1.8, 2.2, 2.5, 2.9])])
def test_unavailable_pairs_are_nan_and_never_chosen(module: str, missing: list[float]) -> None:
    model = load_ear_model()
    for app in model.apps:
        projection = model.projection(app, module)
        gone = [round((g - 1.2) * 10) for g in missing]
        assert not projection.available[gone].any()
        assert np.isnan(projection.energy_j[gone]).all() and np.isnan(projection.time_s[gone]).all()
        assert projection.available.sum() == len(projection.available) - len(missing)
        assert projection.min_energy_index() not in gone and projection.min_time_index() not in gone
        assert math.isfinite(projection.min_energy_j) and projection.min_energy_j > 0


def copy_data(tmp_path: Path) -> Path:
    folder = tmp_path / "ear"
    shutil.copytree(DATA_DIR, folder)
    return folder


def edit_line(path: Path, lineno: int, text: str) -> None:
    lines = path.read_text().splitlines()
    lines[lineno - 1] = text
    path.write_text("\n".join(lines) + "\n")


def test_a_zero_first_entry_is_not_the_minimum(tmp_path: Path) -> None:
    """The published plugin's pitfall: its minimum search starts with entry 0 even when it is 0 (no data)."""
    folder = copy_data(tmp_path)
    line = 15 * 16 + 0 + 1  # normal: reference slice 15 (2.7 GHz), target 0 (1.2 GHz)
    edit_line(folder / "normal.energy", line, "0 0 0 0 0 0")
    edit_line(folder / "normal.power", line, "0 0 0")
    edit_line(folder / "normal.time", line, "0 0 0")
    model = load_ear_model(folder)
    from wattsched.schedulers.eamc import EnergyPrediction

    epm = EnergyPrediction(1.0)
    for app in model.apps:
        projection = model.projection(app, "normal")
        assert not projection.available[0]
        assert projection.min_energy_j > 0 and projection.min_time_s > 0
        for rule in ("eamc", "min-runtime", "min-energy", "top"):
            assert epm.index(projection, projection.available, rule) != 0


def test_an_application_without_signature_has_no_projection(tmp_path: Path) -> None:
    folder = copy_data(tmp_path)
    lines = (folder / "apps").read_text().splitlines()
    (folder / "apps").write_text("\n".join(line for line in lines if not line.startswith("3 1 ")) + "\n")
    model = load_ear_model(folder)
    assert model.has(3, "normal") and not model.has(3, "normal2")
    with pytest.raises(KeyError, match="no data for application 3"):
        model.projection(3, "normal2")


@pytest.mark.parametrize("file,line,text,fragment", [
    ("normal.energy", 17, "1 2 3 4 5", "line 17: expected 6 numbers (A B C D E F), got 5"),
    ("normal.energy", 3, "1.1 x 0 1 0 0", "line 3: coefficient: 'x' is not a number"),
    ("normal.energy", 5, "1 0 0 1 0 nan", "line 5: coefficient: 'nan' is not a finite number"),
    ("normal2.power", 40, "9 9 9", "line 40: A B C differ from line 40 of normal2.energy"),
    ("normal2.time", 2, "1 0", "line 2: expected 3 numbers (D E F), got 2"),
    ("normal.energy", 1, "0.5 0 0 1 0 0", "line 1: a diagonal row"),
    ("apps", 1, "9", "line 1: announces 9 applications, the file describes 8"),
    ("apps", 4, "2 5 4 64.2 348.8 0.59 0.008", "line 4: module 5 is not declared"),
    ("apps", 5, "2 1 3 74.2 336.9 0.59 0.008", "line 5: expected 4 parameters, got 3"),
    ("apps", 6, "3 0 4 -43.9 416.6 0.38 3.68", "line 6: T_ref, P_ref and CPI_ref must be > 0"),
    ("modules", 6, "0 normal cpu 96 1.2 0.1 2.75", "line 6: frequencies must be positive"),
])
def test_a_malformed_model_file_is_one_line_naming_the_file_and_the_line(tmp_path: Path, file: str, line: int,
                                                                         text: str, fragment: str) -> None:
    folder = copy_data(tmp_path)
    edit_line(folder / file, line, text)
    with pytest.raises(InputError) as info:
        load_ear_model(folder)
    message = str(info.value)
    assert "\n" not in message and f"{file}: " in message and fragment in message, message


def test_missing_and_truncated_files(tmp_path: Path) -> None:
    folder = copy_data(tmp_path)
    (folder / "normal2.time").unlink()
    with pytest.raises(InputError, match=r"normal2\.time: missing"):
        load_ear_model(folder)
    folder = copy_data(tmp_path / "b")
    lines = (folder / "normal.energy").read_text().splitlines()
    (folder / "normal.energy").write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(InputError, match=r"normal\.energy: line 255: 255 rows: not n × n rows"):
        load_ear_model(folder)
    with pytest.raises(InputError, match="not a folder"):
        load_ear_model(tmp_path / "nowhere")


def test_job_fields() -> None:
    assert parse_app(8) == 8 and parse_app(3.0) == 3
    for bad in (0, -1, 2.5, "8", True, None):
        with pytest.raises(ValueError):
            parse_app(bad)
    assert parse_partitions(["p2", "p1"]) == ("p2", "p1")
    for bad in ([], "p1", ["p1", "p1"], [1], None):
        with pytest.raises(ValueError):
            parse_partitions(bad)


def test_the_platform_node_of_a_module() -> None:
    model = load_ear_model()
    node = ear_node(model, "normal2")
    speeds = [p.speed_flops for p in node.pstates]
    assert speeds[0] == 3.1e9 and speeds[4:] == [f * 1e8 for f in range(30, 11, -1)]  # 3.0 … 1.2 GHz
    assert (node.sleep_pstate, node.switch_off_pstate, node.switch_on_pstate) == (1, 2, 3)
    # full wattage: the mean of the applications' eq. 1 powers where they have data
    powers = np.array([model.projection(app, "normal2").power_w for app in model.apps])
    assert node.pstates[0].full_w == pytest.approx(float(np.nanmean(powers[:, 19])))
    assert node.pstates[4 + 1].full_w > node.pstates[4 + 2].full_w > node.pstates[4 + 3].full_w  # 2.9 GHz interpolated
