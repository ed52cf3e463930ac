"""Shared fixtures: the repository's root and the `silt` command-line program the package is compared
with (SILT_BIN, else target/debug/silt, built by scripts/test)."""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def silt_bin():
    path = pathlib.Path(os.environ.get("SILT_BIN", ROOT / "target" / "debug" / "silt"))
    if not path.exists():
        pytest.fail(f"the silt program is not at {path}: build it (cargo build -p silt-cli) or set SILT_BIN")
    return path


@pytest.fixture
def cli_run(silt_bin, tmp_path):
    """Runs `silt run SCENE -o OUT -q [--set ...]` and returns OUT."""

    def run(scene, *sets, until=None):
        out = tmp_path / "out"
        command = [str(silt_bin), "--threads", "1", "run", str(scene), "-o", str(out), "-q"]
        for change in sets:
            command += ["--set", change]
        if until is not None:
            command += ["--until", repr(until)]
        subprocess.run(command, check=True, capture_output=True)
        return out

    return run


def read_diagnostics(path):
    """diagnostics.csv as a list of dicts of floats."""
    lines = pathlib.Path(path).read_text().splitlines()
    columns = lines[0].split(",")
    return [dict(zip(columns, map(float, line.split(",")))) for line in lines[1:]]
