"""Bad inputs hunt 32: the experiment commands (``wattsched reproduce``, ``wattsched sweep``, ``wattsched web``).

* before: a reproduction whose ``--out`` held a folder where it writes a table (``results.csv``; ``summary.csv``,
  ``runs.csv``, ``table1.csv``...) simulated every run, then gave an ``IsADirectoryError`` traceback (exit 1); one
  holding a folder ``timing.json`` was refused only after the runs. Now refused before anything is made, naming
  ``--out`` and the file, and the tables are written atomically (an interruption leaves no half-written table).
* before: ``reproduce upas``, ``esc`` or ``eamc`` run again into a folder whose ``timing.json`` was edited (not JSON,
  not an object, a field of the wrong type, not UTF-8) re-rendered every figure, then gave a traceback
  (``JSONDecodeError``, ``TypeError``, ``ValueError: Unknown format code``, ``UnicodeDecodeError``). Now one line
  naming the file and the field, before the runs.
* before: ``reproduce upas --synthetic --pwa /mistyped`` and ``reproduce energy-budget --synthetic --pwa /mistyped``
  ran without a word about the folder (``esc``, ``efs`` and both without ``--synthetic`` refuse it). Now refused.
* before: a runs file (``wattsched sweep runs.json``) whose run has an extra window named ``window`` (or ``total``,
  ``whole_run``, ``jobs``) wrote that window's energy as the run's ``window_energy_j`` (``total_energy_j``...) without
  a word, and a tag named like a metric (``tags: {"utilization": ...}``) vanished from the table under the metric.
  Now refused before any run, naming the run and the field; ``compute_metrics`` refuses such a window too.
* before: a grid's ``{synth: {days: 1e308}}`` and the web page's generated workload of ``days`` 1e308 said
  ``duration_s must be a positive number, got inf`` (a name of the code, a value no one typed; beyond the days bound,
  ``duration_s: 5000 days``). Now the field ``days`` and the bound, as ``wattsched synth --days``.

Checked and found clean: the web page's forms and endpoints with missing, duplicated, oversized and non-UTF-8
fields, path traversal in input choices, run ids and file names, uploads that are not XML or JSON, NaN and huge
option values; ``reproduce`` option bounds (``--scale``, ``--seeds``, ``--mixes``, ``--swf``, ``--jobs``,
``--days``); grid and runs files with NaN, huge or mistyped values.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bad_inputs_checks import one_line, refused
from wattsched.base.errors import InputError, OptionError
from wattsched.cli import main
from wattsched.experiments.sweep import read_timing

ROOT = Path(__file__).resolve().parent.parent
TAURUS = ROOT / "platforms" / "taurus_16.xml"
DEMO = ROOT / "workloads" / "demo_taurus16.json"

#: The smallest run of each paper (should a check be missing, the reproduction stays short).
SMALL = {
    "energy-budget": ["--scale", "0.001", "--machines", "sdsc-blue", "--synthetic"],
    "efs": ["--parts", "lightesp", "--seeds", "1"],
    "esc": ["--days", "0.01", "--no-grid"],
    "upas": ["--jobs", "10", "--machines", "sdsc", "--synthetic"],
    "eamc": ["--scale", "0.1", "--seeds", "1", "--mixes", "13"],
}


# -------------------------------------------------------------------- 1. a folder where a table is written
@pytest.mark.parametrize("paper, table", [("energy-budget", "results.csv"), ("efs", "runs.csv"), ("efs", "table1.csv"),
                                          ("esc", "results.csv"), ("esc", "timing.json"), ("upas", "results.csv"),
                                          ("eamc", "summary.csv")])
def test_a_folder_where_a_reproduction_writes_a_table_is_refused_first(capsys, tmp_path, paper, table):
    out = tmp_path / "out"
    (out / table).mkdir(parents=True)
    refused(capsys, ["reproduce", paper, *SMALL[paper], "--out", str(out), "-j", "1", "-q"],
            f"--out {out}", f"{out / table} is a folder")
    assert sorted(p.name for p in out.iterdir()) == [table]  # no input made, no run


def test_a_table_is_written_atomically(tmp_path):
    import pandas as pd

    from wattsched.base.errors import OutputError
    from wattsched.experiments.sweep import write_table

    (tmp_path / "t.csv").mkdir()
    with pytest.raises(OutputError) as error:
        write_table(pd.DataFrame({"a": [1]}), tmp_path / "t.csv")
    one_line(error, "t.csv", "folder")
    write_table(pd.DataFrame({"a": [1]}), tmp_path / "sub" / "u.csv")
    assert (tmp_path / "sub" / "u.csv").read_text() == "a\n1\n"


# -------------------------------------------------------------------- 2. timing.json edited by hand
@pytest.mark.parametrize("content, needles", [
    (b"garbage{", ("malformed JSON",)),
    (b"[1, 2]", ("expected a JSON object",)),
    (b'{"wall_s": "x", "runs": 20, "workers": 1}', ("wall_s", "'x' is not a number")),
    (b'{"wall_s": 1.5, "workers": 1}', ("runs: missing",)),
    (b'{"wall_s": 1.5, "runs": 2, "workers": 0.5}', ("workers", "not an integer")),
    (b"\xff\xfe{}", ("UTF-8",)),
], ids=["not-json", "a-list", "wall-a-string", "runs-missing", "workers-float", "utf-16"])
def test_a_timing_file_edited_by_hand_is_one_line(tmp_path, content, needles):
    path = tmp_path / "timing.json"
    path.write_bytes(content)
    with pytest.raises(InputError) as error:
        read_timing(path)
    one_line(error, str(path), *needles)


def test_a_timing_file_as_written_is_read(tmp_path):
    assert read_timing(tmp_path / "timing.json") is None
    (tmp_path / "timing.json").write_text(json.dumps({"wall_s": 5.4, "runs": 20, "workers": 1}))
    assert read_timing(tmp_path / "timing.json") == {"wall_s": 5.4, "runs": 20, "workers": 1}


@pytest.mark.parametrize("paper", ["esc", "upas", "eamc"])
def test_a_reproduction_refuses_a_timing_file_edited_by_hand_before_its_runs(capsys, tmp_path, paper):
    out = tmp_path / "out"
    out.mkdir()
    (out / "timing.json").write_text('{"wall_s": "x"}')
    refused(capsys, ["reproduce", paper, *SMALL[paper], "--out", str(out), "-j", "1", "-q"],
            str(out / "timing.json"), "wall_s")
    assert [p.name for p in out.iterdir()] == ["timing.json"]


# -------------------------------------------------------------------- 3. --pwa with --synthetic
@pytest.mark.parametrize("paper", ["upas", "energy-budget"])
def test_a_mistyped_pwa_is_refused_with_synthetic_too(capsys, tmp_path, paper):
    out = tmp_path / "out"
    refused(capsys, ["reproduce", paper, *SMALL[paper], "--pwa", str(tmp_path / "nope"), "--out", str(out),
                     "-j", "1", "-q"], f"--pwa {tmp_path / 'nope'}: no such folder")
    assert not out.exists()


# -------------------------------------------------------------------- 4. extra windows and tags of a runs file
def _runs_file(tmp_path: Path, **fields: object) -> Path:
    entry = {"name": "a", "platform": str(TAURUS), "workload": str(DEMO), "scheduler": "fcfs", "options": {},
             "prefix": str(tmp_path / "o" / "a"), **fields}
    path = tmp_path / "runs.json"
    path.write_text(json.dumps([entry]))
    return path


@pytest.mark.parametrize("name, metric", [("window", "window_energy_j"), ("total", "total_energy_j"),
                                          ("whole_run", "whole_run_utilization"), ("jobs", "jobs_energy_j")])
def test_an_extra_window_named_like_a_metric_is_refused_before_the_runs(capsys, tmp_path, name, metric):
    path = _runs_file(tmp_path, extra_windows={name: [0, 10]})
    refused(capsys, ["sweep", str(path), "--out", str(tmp_path / "out"), "-j", "1", "-q"],
            f"{path}: run 0: extra_windows.{name}", metric)
    assert not (tmp_path / "o").exists() and not (tmp_path / "out").exists()


@pytest.mark.parametrize("tags, shown", [({"utilization": "mine"}, "tags.utilization"),
                                         ({"nb_jobs": 3}, "tags.nb_jobs"),
                                         ({"budget_energy_j": 1}, "tags.budget_energy_j")])
def test_a_tag_named_like_a_metric_is_refused(capsys, tmp_path, tags, shown):
    path = _runs_file(tmp_path, tags=tags, extra_windows={"budget": [0, 10]})
    refused(capsys, ["sweep", str(path), "--out", str(tmp_path / "out"), "-j", "1", "-q"],
            f"{path}: run 0: {shown}", "a metric")


def test_compute_metrics_refuses_an_extra_window_named_like_a_metric(tmp_path):
    from wattsched.analysis.metrics import compute_metrics

    with pytest.raises(OptionError) as error:
        compute_metrics(tmp_path / "out", extra_windows={"window": (0.0, 10.0)})
    one_line(error, "extra window 'window'", "window_energy_j")


def test_other_extra_windows_and_tags_are_kept(tmp_path):
    from wattsched.experiments.sweep import load_runs

    runs = load_runs(_runs_file(tmp_path, extra_windows={"budget": [0, 10], "week": [0, 20]},
                                tags={"machine": "taurus", "budget_fraction": 0.5}))
    assert dict(runs[0].extra_windows) == {"budget": (0.0, 10.0), "week": (0.0, 20.0)}
    assert dict(runs[0].tags) == {"machine": "taurus", "budget_fraction": 0.5}


# -------------------------------------------------------------------- 5. days beyond their bound
@pytest.mark.parametrize("days", ["1e308", "5000"])
def test_a_grid_synthetic_workload_of_too_many_days_names_the_field(tmp_path, days):
    from wattsched.experiments.grid import grid_runs, load_grid

    grid = tmp_path / "g.yaml"
    grid.write_text(f"platforms: [{TAURUS}]\nworkloads: [{{synth: {{hosts: 4, days: {days}}}}}]\nschedulers: [fcfs]\n")
    with pytest.raises(InputError) as error:
        grid_runs(load_grid(grid), tmp_path / "out")
    text = one_line(error, f"{grid}: workloads[0].synth.days: ", "days; at most", "WATTSCHED_LIMIT_DAYS")
    assert "inf" not in text and "duration_s" not in text
    assert not (tmp_path / "out").exists()


def test_the_web_page_bounds_the_days_of_a_generated_workload(tmp_path):
    pytest.importorskip("starlette")
    pytest.importorskip("httpx")
    from tests.test_web_bad_inputs import cli_error, field_error
    from tests.test_web import TestClient, create_app

    with TestClient(create_app(tmp_path / "ws", processes=False), raise_server_exceptions=False) as client:
        for days in ("1e308", "5000"):
            response = client.post("/inputs/workload", data={"hosts": "4", "seed": "1", "days": days})
            assert response.status_code == 400
            assert field_error(response.text, "workload-days") == cli_error("synth", "--hosts", "4", "--seed", "1",
                                                                            "--days", days)
    assert list((tmp_path / "ws" / "inputs").iterdir()) == []


# -------------------------------------------------------------------- 6. form fields that are not UTF-8 text
@pytest.mark.parametrize("body, kind", [
    (b"&name=bad%ff%fe", "urlencoded-escapes"),  # replaced by U+FFFD: a run named 'bad��'
    (b"&name=bad\xff\xfe", "urlencoded-raw"),  # read as Latin-1: a run named 'badÿþ'
    (b"multipart", "multipart"),  # read as Latin-1
], ids=lambda value: value if isinstance(value, str) else None)
def test_a_form_field_that_is_not_utf8_is_refused(tmp_path, body, kind):
    pytest.importorskip("starlette")
    pytest.importorskip("httpx")
    from tests.test_web_bad_inputs import field_error
    from tests.test_web import TestClient, create_app

    fields = {"platform": "shipped:taurus_16.xml", "workload": "shipped:demo_taurus16.json", "scheduler": "fcfs"}
    if kind == "multipart":
        parts = [f'--XX\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode() for k, v in fields.items()]
        content = b"".join(parts) + b'--XX\r\nContent-Disposition: form-data; name="name"\r\n\r\nbad\xff\xfe\r\n--XX--\r\n'
        headers = {"content-type": "multipart/form-data; boundary=XX"}
    else:
        content = "&".join(f"{k}={v}" for k, v in fields.items()).encode() + body
        headers = {"content-type": "application/x-www-form-urlencoded"}
    with TestClient(create_app(tmp_path / "ws", processes=False), raise_server_exceptions=False) as client:
        response = client.post("/runs", content=content, headers=headers, follow_redirects=False)
        assert response.status_code == 400
        assert field_error(response.text, "name") == ("the form could not be read: field 'name' is not UTF-8 text "
                                                      "(post it from the page)")
        response = client.post("/inputs/workload", content=b"hosts=4&seed=1&days=%ff",
                               headers={"content-type": "application/x-www-form-urlencoded"})
        assert response.status_code == 400 and "'days' is not UTF-8" in field_error(response.text, "workload-days")
        accented = "&".join(f"{k}={v}" for k, v in fields.items()) + "&name=%C3%A9t%C3%A9+%E2%98%83"
        response = client.post("/runs", content=accented.encode(), headers={"content-type":
                                                                              "application/x-www-form-urlencoded"},
                               follow_redirects=False)
        assert response.status_code == 303
    (run,) = (tmp_path / "ws" / "runs").iterdir()
    assert json.loads((run / "run.json").read_text())["name"] == "été ☃"


# -------------------------------------------------------------------- 7. a run id of any length in a link
def test_an_unknown_run_id_is_shown_cut(tmp_path):
    """``/compare?run=<5,000 characters>`` (and a run's pages) repeated the whole id in the 404 (found by hunt 32,
    left then): now cut, as the CLI shows a value."""
    pytest.importorskip("starlette")
    pytest.importorskip("httpx")
    from tests.test_web import TestClient, create_app

    run_id = "x" * 5000
    with TestClient(create_app(tmp_path / "ws", processes=False), raise_server_exceptions=False) as client:
        for url in (f"/compare?run={run_id}&run={run_id}", f"/runs/{run_id}"):
            response = client.get(url)
            assert response.status_code == 404, url
            assert "x" * 100 not in response.text and "(5000 characters)" in response.text, url


# -------------------------------------------------------------------- 8. reproduce efs -q
@pytest.mark.parametrize("quiet", [True, False])
def test_reproduce_efs_quiet_prints_no_step_note(tmp_path, capsys, monkeypatch, quiet):
    """``-q``: "no progress nor step notes on standard error"; the line naming the Parallel Workloads Archive logs
    was printed anyway (noticed by the help audit). The study itself is replaced by a stub here."""
    from types import SimpleNamespace

    import pandas as pd

    import wattsched.experiments.efs as efs

    monkeypatch.setattr(efs, "run_experiment", lambda *args, **kwargs: SimpleNamespace(
        frame=pd.DataFrame({"status": ["done"]}), wall_s=0.0, report=tmp_path / "report.md"))
    assert main(["reproduce", "efs", "--out", str(tmp_path / "out"), *(["-q"] if quiet else [])]) == 0
    assert ("Parallel Workloads Archive logs" in capsys.readouterr().err) is not quiet
