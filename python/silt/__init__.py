"""Silt from Python: the scenes of ``silt run``, their simulations stepped in-process, and their state as
numpy arrays.

    >>> import silt
    >>> scene = silt.Scene.from_file("examples/default-bed.toml")
    >>> sim = silt.Simulation(scene)
    >>> sim.advance_to(0.01)
    >>> sim.positions().shape
    (800, 3)

A simulation takes the steps ``silt run`` takes (the same numbers, bit for bit) without writing files;
stepping releases the GIL, and Ctrl-C stops between advances. The state comes as live arrays: the same
read-only numpy array on every call, refreshed in place when a call that advances returns (``.copy()``
keeps a state). See docs/python.md.
"""

from ._silt import Scene, SceneError, StepError, set_threads, __version__
from ._silt import Simulation as _Simulation
from . import contact, hydro, rods

__all__ = [
    "Scene",
    "SceneError",
    "Simulation",
    "StepError",
    "contact",
    "hydro",
    "rods",
    "set_threads",
    "__version__",
]


class Simulation(_Simulation):
    """A simulation of a :class:`Scene` at its initial state (see the module's docstring)."""

    def diagnostics(self):
        """The diagnostics now as a dict of column to value (the row ``silt run`` writes to
        diagnostics.csv); for rod scenes, one dict per rod in a list."""
        rows = self.diagnostics_rows()
        return rows[0] if len(rows) == 1 else rows

    def run(self, until=None, callback=None, every=None):
        """Advances to ``until`` (default: the scene's end time), calling ``callback(self)`` every
        ``every`` of simulated time (default: only at the end). A callback that returns ``False``
        stops the run there. Returns the simulation."""
        until = self.end_time if until is None else float(until)
        if every is not None and not every > 0:
            raise ValueError(f"every = {every} is not allowed; a positive interval of simulated time")
        while self.time < until:
            target = until if every is None else min(self.time + every, until)
            self.advance_to(target)
            if callback is not None and callback(self) is False:
                break
            if every is None:
                break
        return self
