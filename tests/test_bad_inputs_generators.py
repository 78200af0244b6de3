"""Odd but plausible inputs of the generators and converters (``swf``, ``synth``, ``lightesp``,
``eamc-workload``, ``platform``) and of ``reproduce``'s options: each refused with one line naming the file or
option and the field (exit 2), or read as it says, never written as something ``wattsched run`` would refuse."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wattsched.base.errors import InputError, OptionError
from wattsched.cli import main
from wattsched.workloads.swf import busiest_window, read_swf_trace, swf_to_batsim

HEADER = "; MaxProcs: 8\n; UnixStartTime: 1000000000\n"
JOB1 = "1 100 5 60 2 -1 -1 2 120 -1 1 3 1 -1 1 -1 -1 -1\n"


def _swf(tmp_path: Path, text: str | bytes, name: str = "t.swf") -> Path:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def test_swf_byte_order_mark_is_not_part_of_the_first_line(tmp_path: Path) -> None:
    path = _swf(tmp_path, b"\xef\xbb\xbf" + (HEADER + JOB1).encode())
    header, jobs = read_swf_trace(path)
    assert header.max_procs == 8 and len(jobs) == 1


@pytest.mark.parametrize("value", ["8.5", "1e3", "0x10"])
def test_swf_header_max_procs_not_a_whole_number_is_refused(tmp_path: Path, value: str) -> None:
    path = _swf(tmp_path, f"; MaxProcs: {value}\n" + JOB1)
    with pytest.raises(InputError, match="header MaxProcs"):
        swf_to_batsim(path, speed_flops=100e6)


def test_swf_header_max_procs_with_a_comment_is_read(tmp_path: Path) -> None:
    path = _swf(tmp_path, "; MaxProcs: 338 (batch partition; 512 total)\n" + JOB1)
    assert swf_to_batsim(path, speed_flops=100e6)["nb_res"] == 338


@pytest.mark.parametrize("value", ["1e20", "99999999999999999999999"])
def test_swf_unix_start_time_beyond_a_date_is_unknown_not_wrong(tmp_path: Path, value: str) -> None:
    header, _ = read_swf_trace(_swf(tmp_path, f"; UnixStartTime: {value}\n" + JOB1))
    assert header.unix_start_time is None


@pytest.mark.parametrize("column, field", [(0, "job_number"), (11, "user_id"), (12, "group_id")])
def test_swf_fractional_ids_are_refused(tmp_path: Path, column: int, field: str) -> None:
    parts = JOB1.split()
    parts[column] = "3.9"
    path = _swf(tmp_path, HEADER + " ".join(parts) + "\n")
    with pytest.raises(InputError, match=f"line 3, field '{field}': 3.9 is not a whole number"):
        swf_to_batsim(path, speed_flops=100e6)


def test_swf_speed_overflowing_the_flops_is_refused(tmp_path: Path) -> None:
    with pytest.raises(OptionError, match=r"--speed.*job 1 \(line 3\)"):
        swf_to_batsim(_swf(tmp_path, HEADER + JOB1), speed_flops=1e308)


def test_busiest_window_longer_than_the_log_does_not_hang(tmp_path: Path) -> None:
    path = _swf(tmp_path, HEADER + JOB1)
    start_s, load = busiest_window(path, nb_hosts=8, duration_s=1e9 * 86400.0, step_s=86400.0)
    assert start_s == 0.0 and load == pytest.approx(2 * 60 / (8 * 1e9 * 86400.0))


def test_busiest_window_of_half_a_day_counts_half_a_day(tmp_path: Path) -> None:
    # 2 processors x 60 s at 100 s, and 2 x 60 s at 50,000 s (after the first half day): the best half day
    # from 0 holds one job only
    late = "2 50000 5 60 2 -1 -1 2 120 -1 1 3 1 -1 1 -1 -1 -1\n"
    path = _swf(tmp_path, HEADER + JOB1 + late)
    start_s, load = busiest_window(path, nb_hosts=8, duration_s=43200.0, step_s=86400.0)
    assert start_s == 0.0 and load == pytest.approx(120 / (8 * 43200.0))


def test_synth_speed_overflowing_the_flops_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "w.json"
    assert main(["synth", "--hosts", "4", "--seed", "1", "--days", "0.1", "--speed", "1e308",
                 "--output", str(out)]) == 2
    assert "--speed" in capsys.readouterr().err and not out.exists()


@pytest.mark.parametrize("option, value, field", [("--walltime-factor", "1e9", "walltime_factor"),
                                                  ("--speed", "1e308", "--speed")])
def test_lightesp_values_run_would_refuse(capsys: pytest.CaptureFixture[str], tmp_path: Path, option: str,
                                          value: str, field: str) -> None:
    out = tmp_path / "w.json"
    assert main(["lightesp", "--copies", "1", option, value, "--output", str(out)]) == 2
    assert field in capsys.readouterr().err and not out.exists()


@pytest.mark.parametrize("args, field", [(["--days", "1e7"], "--days"), (["--jobs", "20000000"], "nb_jobs"),
                                         (["--max-res", "1000001"], "max_res"),
                                         (["--jobs", "100", "--mean-runtime-h", "10000"], "--mean-runtime-h")])
def test_eamc_workload_bounds(capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str],
                              field: str) -> None:
    out = tmp_path / "w.json"
    try:
        status = main(["eamc-workload", *args, "--output", str(out)])
    except SystemExit as stop:  # a usage error: the option's own bound (--days)
        status = stop.code
    assert status == 2
    assert field in capsys.readouterr().err and not out.exists()


def test_eamc_platform_beyond_the_hosts_bound(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "p.xml"
    assert main(["platform", "--node", "eamc", "--hosts", "1000001", "--output", str(out)]) == 2
    assert "hosts" in capsys.readouterr().err and not out.exists()


@pytest.mark.parametrize("args, message", [(["--scale", "0.1"], "--scale 0.1"), (["--mixes", "13,13"], "twice"),
                                           (["--full", "--scale", "0.5"], "--full and --scale")])
def test_reproduce_eamc_options_fail_before_any_file(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                     args: list[str], message: str) -> None:
    out = tmp_path / "r"
    assert main(["reproduce", "eamc", "--out", str(out), "-j", "1", *args]) == 2
    assert message in capsys.readouterr().err and not out.exists()


@pytest.mark.parametrize("args, message", [(["--swf", "sdsc-blue={swf}:nan"], "START_S"),
                                           (["--swf", "sdsc-blue={swf}", "--swf", "sdsc-blue={swf}"], "given twice"),
                                           (["--machines", "curie", "--swf", "sdsc-blue={swf}"], "not simulated"),
                                           (["--full", "--scale", "0.5"], "--full and --scale")])
def test_reproduce_energy_budget_options_fail_fast(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                   args: list[str], message: str) -> None:
    swf = _swf(tmp_path, HEADER + JOB1)
    out = tmp_path / "r"
    assert main(["reproduce", "energy-budget", "--out", str(out), "-j", "1",
                 *(a.format(swf=swf) for a in args)]) == 2
    assert message in capsys.readouterr().err and not out.exists()
