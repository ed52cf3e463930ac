"""Rod building blocks (seed 001, Lang, Linn & Arnold): the static equilibrium of a rod scene's rods.

``solve_static(scene, *, load_steps=None, tolerance=None, max_newton_steps=None) -> list of dicts``: per
rod its ``nodes`` at equilibrium and the Newton solve's ``newton_steps``, ``load_steps``,
``rejected_steps`` and ``residual`` (the solve of ``integrator = "static"``, for any rod scene).
"""

from ._silt import solve_static

__all__ = ["solve_static"]
