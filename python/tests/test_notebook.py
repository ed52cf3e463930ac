"""The tour notebook (python/examples/tour.ipynb) runs from top to bottom (nbclient; CI installs it)."""

import os

import pytest

from conftest import ROOT


def test_the_tour_notebook_runs():
    if os.environ.get("SILT_REQUIRE_PYTHON") != "1":
        pytest.importorskip("nbclient")
    import nbclient
    import nbformat

    path = ROOT / "python" / "examples" / "tour.ipynb"
    notebook = nbformat.read(path, as_version=4)
    # Stored without outputs.
    assert all(not cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code")
    nbclient.NotebookClient(notebook, timeout=600, resources={"metadata": {"path": str(path.parent)}}).execute()
    printed = "".join(
        output.get("text", "")
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
    )
    assert "E(0.5)/E(0) = 0.98" in printed and "tip x, z at 0.3 s" in printed, printed
