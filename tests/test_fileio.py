"""Atomic writes when several writers share a destination folder: a sweep's parallel runs create the
same ``runs/`` folder at the same moment, and the one that loses the race must write its files all the
same (CI once saw a run fail with "cannot write .../out_jobs.csv: File exists")."""

from __future__ import annotations

from pathlib import Path

import pytest

from wattsched.base.errors import OutputError
from wattsched.base.fileio import atomic_paths


def _lose_the_race(monkeypatch, folder: Path) -> None:
    """Make ``folder`` look missing to the first check, then appear before ``mkdir``: as when another
    process creates it in between."""
    real_mkdir = Path.mkdir

    def racing_mkdir(self, *args, **kwargs):
        if self == folder and not folder.exists():
            real_mkdir(self)  # the other writer wins
        return real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", racing_mkdir)


def test_a_folder_made_by_another_writer_meanwhile_is_used(tmp_path, monkeypatch):
    folder = tmp_path / "runs" / "key"
    _lose_the_race(monkeypatch, folder)
    with atomic_paths([folder / "out_jobs.csv", folder / "out_schedule.csv"]) as temps:
        for temp in temps:
            temp.write_text("x\n")
    assert sorted(p.name for p in folder.iterdir()) == ["out_jobs.csv", "out_schedule.csv"]


def test_a_failed_write_keeps_a_folder_another_writer_made(tmp_path, monkeypatch):
    """The folder is not ours: when our block fails it must stay for the writer who made it."""
    outer = tmp_path / "runs"
    folder = outer / "key"
    _lose_the_race(monkeypatch, folder)
    with pytest.raises(RuntimeError):
        with atomic_paths([folder / "out_jobs.csv"]):
            raise RuntimeError("the run failed")
    assert folder.is_dir() and list(folder.iterdir()) == []  # ours (runs/) would go, but it holds theirs


def test_a_file_in_the_way_is_still_refused(tmp_path, monkeypatch):
    folder = tmp_path / "runs"
    real_mkdir = Path.mkdir

    def file_appears(self, *args, **kwargs):
        if self == folder and not folder.exists():
            folder.write_text("not a folder")
        return real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", file_appears)
    with pytest.raises(OutputError, match="cannot write .*out_jobs.csv: File exists"):
        with atomic_paths([folder / "out_jobs.csv"]):
            pytest.fail("the block must not run")
    assert folder.read_text() == "not a folder"
