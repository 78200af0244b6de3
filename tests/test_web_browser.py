"""End to end in a real headless browser: Debian's ``chromium`` driven by selenium through ``chromedriver``.

``wattsched web`` is started as a user would start it; the browser fills the forms (energy-bud with
shutdown on the demo inputs: the switch brings the shutdown piece's options into the form through htmx),
launches, waits for the run to finish (live progress, then the page reloads with the results), checks that
the metrics shown equal those ``wattsched metrics`` prints on the same outputs, launches an EASY run, opens
the comparison of the two and shows an out-of-range option refused next to its field. A screenshot of each
page is kept in ``results/web-e2e/`` (or ``$WATTSCHED_E2E_ARTIFACTS``).

Skipped when chromium, chromedriver or selenium is missing (``apt-get install chromium chromium-driver``).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER), reason="needs chromium and chromium-driver")
webdriver = pytest.importorskip("selenium.webdriver")
pytest.importorskip("starlette")

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.select import Select  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

ARTIFACTS = Path(os.environ.get("WATTSCHED_E2E_ARTIFACTS", ROOT / "results" / "web-e2e"))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    workspace = tmp_path_factory.mktemp("web-e2e") / "ws"
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen([sys.executable, "-m", "wattsched", "web", "--port", str(port), "--workspace",
                                str(workspace), "-j", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            assert process.poll() is None and time.monotonic() < deadline, process.stderr.read()
            time.sleep(0.2)
    yield url, workspace
    process.terminate()
    _, stderr = process.communicate(timeout=30)
    assert "Traceback" not in stderr, stderr


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--window-size=1280,1600"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def shot(driver, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    height = driver.execute_script("return document.body.scrollHeight")
    driver.set_window_size(1280, max(900, min(int(height) + 300, 6000)))
    driver.save_screenshot(str(path))
    driver.set_window_size(1280, 1600)
    return path


def choose(driver, field_id: str, value: str) -> None:
    """Select ``value`` in a select; a switch then reloads the options fieldset (htmx): wait for it."""
    select = Select(driver.find_element(By.ID, field_id))
    if select.first_selected_option.get_attribute("value") == value:
        return  # no change, no reload
    old = driver.find_element(By.ID, "options")
    select.select_by_value(value)
    WebDriverWait(driver, 20).until(EC.staleness_of(old))


def fill_and_launch(driver, url: str, scheduler: str, name: str, options: dict[str, str],
                    screenshot: str | None = None) -> str:
    driver.get(f"{url}/new")
    Select(driver.find_element(By.ID, "platform")).select_by_value("shipped:taurus_16.xml")
    Select(driver.find_element(By.ID, "workload")).select_by_value("shipped:demo_taurus16.json")
    choose(driver, "scheduler", scheduler)
    for field, value in options.items():
        element = driver.find_element(By.ID, f"opt.{field}")
        if element.tag_name == "select":
            choose(driver, f"opt.{field}", value)
        else:
            element.clear()
            element.send_keys(value)
    driver.find_element(By.ID, "name").send_keys(name)
    if options.get("shutdown") == "true":  # the switch brought the shutdown piece's own option into the form
        assert driver.find_elements(By.ID, "opt.sleep_pstate")
    if screenshot:
        shot(driver, screenshot)
    driver.find_element(By.ID, "launch").click()
    WebDriverWait(driver, 20).until(EC.url_matches(r"/runs/[0-9-a-f]+$"))
    return driver.current_url.rsplit("/", 1)[1]


def wait_for_results(driver) -> None:
    WebDriverWait(driver, 120).until(EC.presence_of_element_located((By.ID, "metrics")))
    WebDriverWait(driver, 30).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".chart .main-svg")) >= 3)


def cli_metrics(prefix: Path) -> dict[str, str]:
    """The table ``wattsched metrics PREFIX`` prints, as ``{metric: text}``."""
    out = subprocess.run([sys.executable, "-m", "wattsched", "metrics", str(prefix)], capture_output=True, text=True,
                         check=True, timeout=120).stdout
    return dict(re.findall(r"^│ (\S+)\s+│\s+(\S+) │$", out, re.M))


def test_configure_launch_watch_and_compare_in_a_browser(server, browser):
    url, workspace = server
    budget = fill_and_launch(browser, url, "energy-bud", "energyBud 60% + shutdown",
                             {"shutdown": "true", "budget_fraction": "0.6", "window_end_s": "20000"}, "new")
    assert browser.find_element(By.ID, "state").text in ("queued", "running", "done")
    wait_for_results(browser)
    assert browser.find_element(By.ID, "state").text == "done"
    shown = {row.find_element(By.TAG_NAME, "td").text: row.find_element(By.CSS_SELECTOR, "td.num").text
             for row in browser.find_elements(By.CSS_SELECTOR, "#metrics tbody tr")}
    expected = cli_metrics(workspace / "runs" / budget / "out")
    assert shown == expected and shown["nb_jobs"] == "210"
    titles = [t.text for t in browser.find_elements(By.CSS_SELECTOR, ".chart .gtitle")]
    assert any(t.startswith("Gantt chart: 210 jobs ran") for t in titles)
    assert "Platform power (compute hosts)" in titles and "Host states (16 hosts)" in titles
    legend = " ".join(t.text for t in browser.find_elements(By.CSS_SELECTOR, "#chart-power .legendtext"))
    assert "budget power" in legend and "budget window 0-20000 s" in legend
    links = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "#downloads a")]
    assert links == ["jobs.csv", "schedule.csv", "machine_states.csv", "consumed_energy.csv", "pstate_changes.csv",
                     "paraver.prv", "paraver.pcf", "paraver.row"]
    shot(browser, "run")

    easy = fill_and_launch(browser, url, "easy-backfill", "EASY", {})
    wait_for_results(browser)
    browser.get(url)
    for run_id in (budget, easy):
        browser.find_element(By.CSS_SELECTOR, f'input[name="run"][value="{run_id}"]').click()
    shot(browser, "runs")
    browser.find_element(By.ID, "compare").click()
    WebDriverWait(browser, 30).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".chart .main-svg")) >= 2)
    header = [th.text.splitlines()[0] for th in browser.find_elements(By.CSS_SELECTOR, "#compare-metrics th")]
    assert header == ["metric", "EASY", "energyBud 60% + shutdown"]  # as listed: newest first
    energy = next(r for r in browser.find_elements(By.CSS_SELECTOR, "#compare-metrics tbody tr")
                  if r.find_element(By.TAG_NAME, "td").text == "total_energy_j")
    values = [td.text for td in energy.find_elements(By.CSS_SELECTOR, "td.num")]
    assert values == [cli_metrics(workspace / "runs" / easy / "out")["total_energy_j"], expected["total_energy_j"]]
    legend = [t.text for t in browser.find_elements(By.CSS_SELECTOR, "#chart-utilization .legendtext")]
    assert len(legend) == 2 and legend[1].startswith("energyBud 60% + shutdown")
    shot(browser, "compare")

    # an option out of range: refused next to its field, nothing launched
    runs_before = sorted((workspace / "runs").iterdir())
    browser.get(f"{url}/new")
    choose(browser, "scheduler", "esc")
    browser.find_element(By.ID, "opt.period_s").send_keys("0")
    browser.find_element(By.ID, "launch").click()
    error = WebDriverWait(browser, 20).until(EC.presence_of_element_located((By.ID, "error-period_s")))
    assert error.text.startswith("option 'period_s' of esc is out of range, got 0")
    assert sorted((workspace / "runs").iterdir()) == runs_before
    shot(browser, "refused-option")
    browser.get(f"{url}/inputs")
    assert "taurus_16.xml (shipped)" in browser.find_element(By.ID, "platforms").text
    shot(browser, "inputs")

    # a workload uploaded with the run on its own form, then that run deleted from its page
    browser.get(f"{url}/new")
    Select(browser.find_element(By.ID, "platform")).select_by_value("shipped:taurus_16.xml")
    browser.find_element(By.ID, "workload_file").send_keys(str(ROOT / "workloads" / "demo_taurus16.json"))
    browser.find_element(By.ID, "name").send_keys("uploaded")
    browser.find_element(By.ID, "launch").click()
    WebDriverWait(browser, 20).until(EC.url_matches(r"/runs/[0-9-a-f]+$"))
    uploaded = browser.current_url.rsplit("/", 1)[1]
    wait_for_results(browser)
    run_json = (workspace / "runs" / uploaded / "run.json").read_text()
    assert '"workload": "workspace:workload-' in run_json
    assert {p.name.split("-", 2)[2] for p in (workspace / "inputs").iterdir()} == {"demo_taurus16.json"}
    browser.find_element(By.ID, "delete").click()
    WebDriverWait(browser, 20).until(EC.presence_of_element_located((By.ID, "confirm-question")))
    assert (workspace / "runs" / uploaded).is_dir()  # asked first, nothing deleted yet
    shot(browser, "delete-confirm")
    browser.find_element(By.ID, "confirm-delete").click()
    deleted = WebDriverWait(browser, 20).until(EC.presence_of_element_located((By.ID, "deleted")))
    assert uploaded in deleted.text and not browser.find_elements(By.ID, f"row-{uploaded}")
    assert browser.find_elements(By.ID, f"row-{budget}") and not (workspace / "runs" / uploaded).exists()
