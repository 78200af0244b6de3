"""Shared fixtures: the recordings of real Batsim and small builders of protocol messages."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
REFERENCE = FIXTURES / "batsim-reference"
SCENARIOS = sorted(p.name for p in REFERENCE.iterdir() if (p / "messages.jsonl").exists())


@pytest.fixture
def reference() -> Path:
    return REFERENCE


def reply(now: float, *events: tuple[str, dict]) -> dict:
    """A scheduler reply with every event stamped ``now`` (what pybatsim sends)."""
    return {"now": now, "events": [{"timestamp": now, "type": t, "data": d} for t, d in events]}


def assert_input_error(load, path: Path, *fragments: str):
    """``load(path)`` raises one InputError whose one-line message names the file and each fragment."""
    from wattsched.base.errors import InputError

    with pytest.raises(InputError) as info:
        load(path)
    message = str(info.value)
    assert "\n" not in message
    assert path.name in message
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    return info.value


@pytest.fixture(scope="session")
def taurus_platform(tmp_path_factory):
    """``taurus_platform(n)``: the path of a Taurus platform of ``n`` hosts, written once per session."""
    from wattsched.platforms.generate import taurus_platform_xml

    folder = tmp_path_factory.mktemp("platforms")

    def write(nb_hosts: int) -> Path:
        path = folder / f"taurus_{nb_hosts}.xml"
        if not path.exists():
            path.write_text(taurus_platform_xml(nb_hosts))
        return path

    return write
