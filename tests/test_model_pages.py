"""The embedded model builds the example project with every note kept, and a page worth
reading: slow, marked `model`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def wikic(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wikic", "-C", str(root), *args], capture_output=True, text=True, timeout=1200
    )


@pytest.mark.model
def test_the_embedded_model_builds_the_sample_with_every_note_kept(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "sources", tmp_path / "sources")
    shutil.copy(ROOT / "schema.yaml", tmp_path / "schema.yaml")
    proc = wikic(tmp_path, "build", "--json")
    report = json.loads(proc.stdout)
    assert proc.returncode == 0, proc.stderr
    assert report["notes"]["kept"] == report["notes"]["total"] > 0
    assert set(report["pages_by_mode"]) == {"notes"}  # auto: the embedded model is small
    page = (tmp_path / "wiki" / "early-cutoff.md").read_text()
    opening = page.split("\n# Early cutoff\n", 1)[1].strip().split("\n")[0]
    assert opening.startswith("Early cutoff stops a rebuild from spreading")  # it says what it is
    lint = wikic(tmp_path, "lint", "--format", "json")
    assert [f for f in json.loads(lint.stdout) if f["level"] == "error"] == []
