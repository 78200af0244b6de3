"""Tests of docker/: the compose file (parsed, and checked by `docker compose config` / `docker-compose
config` when one is installed), the Dockerfile and the scheduler entry point (run with a fake pybatsim).

No Docker engine is needed: `config` only reads and resolves the file.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml", reason="PyYAML is needed to parse docker/docker-compose.yml")

ROOT = Path(__file__).resolve().parent.parent
DOCKER = ROOT / "docker"
COMPOSE = DOCKER / "docker-compose.yml"
DEFAULT_RE = re.compile(r"^\$\{(?P<name>\w+):-(?P<default>[^}]*)\}$")


def default_of(value: str) -> str:
    """The default of a ``${VAR:-default}`` value, or the value itself."""
    match = DEFAULT_RE.match(value)
    return match.group("default") if match else value


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def test_batsim_image_is_a_pinned_4x_tag(compose: dict) -> None:
    image = default_of(compose["services"]["batsim"]["image"])
    assert re.fullmatch(r"oarteam/batsim:4\.\d+\.\d+", image), image  # never `latest` (Batsim 5)


def test_batsim_runs_in_energy_mode_and_connects_to_the_scheduler(compose: dict) -> None:
    batsim = compose["services"]["batsim"]
    command = batsim["command"]
    assert "--energy" in command or "-E" in command
    arguments = dict(zip(command[::2], command[1::2]))
    assert arguments["-p"] == "/data/platform.xml"
    assert arguments["-w"] == "/data/workload.json"
    assert arguments["-e"] == "/output/out"
    assert command[command.index("-s") + 1] == "tcp://scheduler:28000"
    assert "scheduler" in batsim["depends_on"]


def test_batsim_mounts_platform_workload_and_output(compose: dict) -> None:
    mounts = {}
    for volume in compose["services"]["batsim"]["volumes"]:
        source, target = _split_volume(volume)
        mounts[target] = source
    assert DEFAULT_RE.match(mounts["/data/platform.xml"]).group("name") == "PLATFORM"
    assert DEFAULT_RE.match(mounts["/data/workload.json"]).group("name") == "WORKLOAD"
    assert DEFAULT_RE.match(mounts["/output"]).group("name") == "OUTPUT_DIR"
    # the default inputs exist, relative to the compose file's folder
    assert (DOCKER / default_of(mounts["/data/platform.xml"])).resolve() == ROOT / "platforms" / "taurus_16.xml"
    assert (DOCKER / default_of(mounts["/data/platform.xml"])).is_file()
    assert (DOCKER / default_of(mounts["/data/workload.json"])).is_file()


def _split_volume(volume: str) -> tuple[str, str]:
    """``${VAR:-a/b}:/target[:ro]`` → (``${VAR:-a/b}``, ``/target``)."""
    end = volume.index("}") + 1
    return volume[:end], volume[end + 1:].split(":")[0]


def test_scheduler_service_builds_the_image_and_takes_env_vars(compose: dict) -> None:
    scheduler = compose["services"]["scheduler"]
    assert scheduler["build"] == {"context": "..", "dockerfile": "docker/Dockerfile"}
    assert (DOCKER / scheduler["build"]["context"] / scheduler["build"]["dockerfile"]).resolve().is_file()
    environment = scheduler["environment"]
    assert environment["WATTSCHED_SCHEDULER"] == "${SCHEDULER:-easy-backfill}"
    assert DEFAULT_RE.match(environment["WATTSCHED_OPTIONS"]).group("name") == "SCHEDULER_OPTIONS"


def test_dockerfile_installs_pybatsim_without_deps_then_the_project() -> None:
    text = (DOCKER / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.11-slim$", text, re.M)
    runs = [line for line in text.splitlines() if line.startswith("RUN ")]
    no_deps = next(i for i, line in enumerate(runs) if "pip install --no-deps pybatsim==4.0.0a0" in line)
    project = next(i for i, line in enumerate(runs) if re.search(r"pip install '\.\[pybatsim\]'(\s|$)", line))
    assert no_deps < project
    assert 'ENTRYPOINT ["wattsched-entrypoint"]' in text
    assert "docker/entrypoint.sh" in text


def run_entrypoint(tmp_path: Path, env: dict[str, str], *args: str) -> list[str]:
    """Run docker/entrypoint.sh with a fake ``pybatsim`` that records its arguments, one per line."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    record = tmp_path / "argv.txt"
    fake = bin_dir / "pybatsim"
    fake.write_text(f'#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done > "{record}"\n')
    fake.chmod(0o755)
    full_env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "WATTSCHED_LINGER_S": "0", **env}
    subprocess.run(["sh", str(DOCKER / "entrypoint.sh"), *args], env=full_env, check=True, timeout=30)
    return record.read_text().splitlines()


def test_entrypoint_runs_pybatsim_without_timeout(tmp_path: Path) -> None:
    assert run_entrypoint(tmp_path, {}) == ["-t", "-1", "-s", "tcp://*:28000", "easy-backfill", "-o", "{}"]
    options = '{"a": {"b": 1}}'
    argv = run_entrypoint(tmp_path, {"WATTSCHED_SCHEDULER": "fcfs", "WATTSCHED_OPTIONS": options}, "-e", "x")
    assert argv == ["-t", "-1", "-s", "tcp://*:28000", "fcfs", "-o", options, "-e", "x"]
    # compose passes an empty WATTSCHED_OPTIONS when SCHEDULER_OPTIONS is unset
    assert run_entrypoint(tmp_path, {"WATTSCHED_OPTIONS": ""})[-1] == "{}"


# ------------------------------------------------------------------------------ compose config
def compose_command() -> list[str] | None:
    """`docker compose` or `docker-compose`, whichever works here (WATTSCHED_DOCKER_COMPOSE first)."""
    candidates: list[list[str]] = []
    if os.environ.get("WATTSCHED_DOCKER_COMPOSE"):
        candidates.append(os.environ["WATTSCHED_DOCKER_COMPOSE"].split())
    if shutil.which("docker"):
        candidates.append(["docker", "compose"])
    if shutil.which("docker-compose"):
        candidates.append(["docker-compose"])
    for command in candidates:
        try:
            probe = subprocess.run([*command, "version"], capture_output=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if probe.returncode == 0:
            return command
    return None


def compose_config(env: dict[str, str]) -> dict:
    command = compose_command()
    if command is None:
        pytest.skip("neither `docker compose` nor `docker-compose` is installed (apt-get install docker-compose)")
    keep = {k: v for k, v in os.environ.items() if k not in {"SCHEDULER", "SCHEDULER_OPTIONS", "PLATFORM",
                                                              "WORKLOAD", "OUTPUT_DIR", "BATSIM_IMAGE"}}
    result = subprocess.run(
        [*command, "-f", str(COMPOSE), "config"], capture_output=True, text=True, timeout=120,
        env={**keep, **env}, cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    return yaml.safe_load(result.stdout)


def _mount_sources(service: dict) -> dict[str, str]:
    mounts = {}
    for volume in service["volumes"]:
        if isinstance(volume, dict):  # long syntax (docker compose v2)
            mounts[volume["target"]] = volume["source"]
        else:
            source, target = volume.split(":")[:2]
            mounts[target] = source
    return mounts


def test_compose_config_resolves_defaults() -> None:
    config = compose_config({})
    batsim, scheduler = config["services"]["batsim"], config["services"]["scheduler"]
    assert batsim["image"].startswith("oarteam/batsim:4.")
    mounts = _mount_sources(batsim)
    assert Path(mounts["/data/platform.xml"]) == ROOT / "platforms" / "taurus_16.xml"
    assert Path(mounts["/data/workload.json"]) == ROOT / "workloads" / "demo_taurus16.json"
    assert Path(mounts["/output"]) == DOCKER / "output"
    assert scheduler["environment"]["WATTSCHED_SCHEDULER"] == "easy-backfill"
    assert scheduler["environment"]["WATTSCHED_OPTIONS"] in ("", None)  # the entry point reads it as {}


def test_compose_config_takes_scheduler_and_json_options(tmp_path: Path) -> None:
    options = '{"budget": {"energy_j": 1e9}}'
    config = compose_config({"SCHEDULER": "fcfs", "SCHEDULER_OPTIONS": options, "OUTPUT_DIR": str(tmp_path)})
    environment = config["services"]["scheduler"]["environment"]
    assert environment["WATTSCHED_SCHEDULER"] == "fcfs"
    assert environment["WATTSCHED_OPTIONS"] == options
    assert Path(_mount_sources(config["services"]["batsim"])["/output"]) == tmp_path


DYNAMIC = DOCKER / "docker-compose.dynamic-jobs.yml"


def test_the_dynamic_jobs_override_is_the_batsim_command_plus_the_two_flags(compose: dict) -> None:
    """UPAS (and any composition with it) needs Batsim's dynamic jobs: the override file adds exactly
    --enable-dynamic-jobs --acknowledge-dynamic-jobs to the main file's Batsim command, and changes nothing else."""
    override = yaml.safe_load(DYNAMIC.read_text())
    assert set(override["services"]) == {"batsim"} and set(override["services"]["batsim"]) == {"command"}
    assert override["services"]["batsim"]["command"] == [*compose["services"]["batsim"]["command"],
                                                          "--enable-dynamic-jobs", "--acknowledge-dynamic-jobs"]


def test_compose_config_runs_upas_by_name_with_dynamic_jobs(tmp_path: Path) -> None:
    command = compose_command()
    if command is None:
        pytest.skip("neither `docker compose` nor `docker-compose` is installed (apt-get install docker-compose)")
    env = {**{k: v for k, v in os.environ.items() if k not in {"SCHEDULER_OPTIONS", "PLATFORM", "WORKLOAD"}},
           "SCHEDULER": "upas", "OUTPUT_DIR": str(tmp_path)}
    result = subprocess.run([*command, "-f", str(COMPOSE), "-f", str(DYNAMIC), "config"], capture_output=True,
                            text=True, timeout=120, env=env, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    config = yaml.safe_load(result.stdout)
    assert config["services"]["scheduler"]["environment"]["WATTSCHED_SCHEDULER"] == "upas"
    batsim = config["services"]["batsim"]["command"]
    assert batsim[-2:] == ["--enable-dynamic-jobs", "--acknowledge-dynamic-jobs"] and "--energy" in batsim
