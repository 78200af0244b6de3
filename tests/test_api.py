"""The Python API (wattsched.api): inputs as paths or objects, the five outputs as DataFrames, metrics, plots,
errors, the example notebook run as a user would, and evalys reading our outputs."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pandas as pd
import pytest

from wattsched import api
from wattsched.analysis.metrics import compute_metrics

ROOT = Path(__file__).resolve().parents[1]
PLATFORM = ROOT / "platforms" / "taurus_16.xml"
WORKLOAD = ROOT / "workloads" / "demo_taurus16.json"


@pytest.fixture(scope="module")
def easy(tmp_path_factory):
    return api.simulate(PLATFORM, WORKLOAD, "easy-backfill", out=tmp_path_factory.mktemp("easy") / "out")


def test_the_five_outputs_are_dataframes_read_from_the_written_files(easy):
    jobs = pd.read_csv(str(easy.prefix) + "_jobs.csv")
    assert len(easy.jobs) == len(jobs) == len(json.loads(WORKLOAD.read_text())["jobs"])
    assert sorted(easy.jobs["job_id"].astype(str)) == sorted(jobs["job_id"].astype(str))
    assert easy.schedule.loc[0, "nb_computing_machines"] == 16
    assert {"time", "nb_computing"} <= set(easy.machine_states.columns)
    assert easy.consumed_energy["energy"].is_monotonic_increasing
    assert len(easy.pstate_changes) >= 1
    assert easy.metrics == compute_metrics(easy.prefix, workload=WORKLOAD)
    assert easy.stats.events > 0


def test_objects_built_in_python_give_the_same_jobs_as_files(easy):
    result = api.simulate(PLATFORM.read_text(), json.loads(WORKLOAD.read_text()), "easy-backfill")
    columns = ["job_id", "starting_time", "finish_time", "allocated_resources", "consumed_energy"]
    pd.testing.assert_frame_equal(result.jobs[columns].sort_values("job_id").reset_index(drop=True),
                                  easy.jobs[columns].sort_values("job_id").reset_index(drop=True))


def test_a_default_output_folder_is_removed_with_its_result():
    work = api.synthetic_workload(8, seed=3, days=0.2, load=0.5)
    result = api.simulate(api.taurus_platform(8), work)
    folder = result.prefix.parent
    assert (folder / "out_jobs.csv").exists() and result.metrics["nb_jobs"] == len(work["jobs"])
    del result
    gc.collect()
    assert not folder.exists()


def test_a_bad_option_raises_one_line_and_writes_nothing(tmp_path):
    with pytest.raises(api.OptionError) as error:
        api.simulate(PLATFORM, WORKLOAD, "energy-bud", {"budget_fractoin": 0.5}, out=tmp_path / "out")
    assert "budget_fractoin" in str(error.value) and "\n" not in str(error.value)
    assert list(tmp_path.iterdir()) == []


def test_a_malformed_workload_object_is_an_input_error(tmp_path):
    with pytest.raises(api.InputError, match=r"^<workload object>: job 'w0!1'.profile: profile 'p' does not exist$"):
        api.simulate(PLATFORM, {"nb_res": 16, "jobs": [{"id": "1", "subtime": 0, "res": 1, "profile": "p"}],
                                "profiles": {}}, out=tmp_path / "out")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(api.InputError, match=r"^<platform XML text>: line 1: malformed XML"):
        api.simulate("<platform version='4.1'>", WORKLOAD, out=tmp_path / "out")
    assert list(tmp_path.iterdir()) == []


def test_plots_and_comparison(easy):
    budget = api.simulate(PLATFORM, WORKLOAD, "energy-bud", {"budget_fraction": 0.5, "window_end_s": 43200})
    figure = budget.plot_power(budget_window=(0, 43200), budget_power_w=1000.0)
    assert figure.axes and figure.axes[0].get_ylabel() == "power (W)"
    assert budget.plot_gantt().axes and budget.plot_machine_states().axes
    table = api.compare([easy, budget])
    assert list(table.columns) == ["easy-backfill", "energy-bud budget_fraction=0.5 window_end_s=43200"]
    # The budget delays jobs: it cannot make them wait less on average than EASY.
    assert table.loc["mean_waiting_time_s"].iloc[1] >= table.loc["mean_waiting_time_s"].iloc[0]


# evalys's JobSet renames a column in place, which pandas 3.1 deprecates: its warning, not ours
@pytest.mark.filterwarnings("ignore:The inplace keyword in DataFrame.rename is deprecated")
def test_evalys_reads_our_jobs_and_agrees_with_our_metrics(easy):
    from evalys.jobset import JobSet

    jobset = JobSet.from_csv(str(easy.prefix) + "_jobs.csv", resource_bounds=(0, 15))
    ours = easy.jobs.set_index(easy.jobs["job_id"].astype(str))
    theirs = jobset.df.set_index(jobset.df["jobID"].astype(str))
    pd.testing.assert_series_equal(theirs["waiting_time"].sort_index(), ours["waiting_time"].sort_index(),
                                   check_names=False, check_index_type=False)
    start, end = easy.metrics["window_start_s"], easy.metrics["window_end_s"]
    assert jobset.mean_utilisation(start, end) / 16 == pytest.approx(easy.metrics["utilization"], rel=1e-9)


def test_the_example_notebook_runs():
    import nbclient
    import nbformat

    notebook = nbformat.read(ROOT / "docs" / "api.ipynb", as_version=4)
    nbclient.NotebookClient(notebook, timeout=300, resources={"metadata": {"path": str(ROOT / "docs")}}).execute()
    errors = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert errors == []
    text = "".join(str(o.get("text", "")) for c in notebook.cells for o in c.get("outputs", []))
    assert "unknown option 'budget_fractoin'" in text


def test_a_pybatsim_scheduler_class_runs_as_its_name_does(tmp_path):
    """A class is built with ``cls(options)`` as pybatsim builds it: the same jobs as its entry-point name."""
    from pybatsim.schedulers import easyBackfill as easy_backfill

    by_name = api.simulate(PLATFORM, WORKLOAD, "backfill-easy", out=tmp_path / "name" / "out")
    by_class = api.simulate(PLATFORM, WORKLOAD, easy_backfill.EasyBackfill, out=tmp_path / "class" / "out")
    assert by_class.scheduler == "pybatsim.schedulers.easyBackfill:EasyBackfill"
    columns = ["job_id", "starting_time", "allocated_resources"]
    assert by_class.jobs[columns].equals(by_name.jobs[columns])


def test_a_scheduler_class_of_ones_own_gets_its_options_and_its_errors_name_it(tmp_path):
    from pybatsim.batsim.batsim import BatsimScheduler

    seen = []

    class Refuser(BatsimScheduler):
        def __init__(self, options):
            super().__init__(options)
            seen.append(dict(options))

        def onJobSubmission(self, job):
            raise RuntimeError(f"no job {job.id} today")

    with pytest.raises(api.OptionError) as error:
        api.simulate(PLATFORM, WORKLOAD, Refuser, {"mood": "grumpy"}, out=tmp_path / "out")
    assert seen == [{"mood": "grumpy"}]
    text = str(error.value)
    assert "\n" not in text and "test_api:test_a_scheduler_class_of_ones_own" in text and "RuntimeError: no job" in text
    assert list(tmp_path.iterdir()) == []
