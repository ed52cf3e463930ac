from typing import Optional
from . import Scene

def solve_static(
    scene: Scene,
    *,
    load_steps: Optional[int] = None,
    tolerance: Optional[float] = None,
    max_newton_steps: Optional[int] = None,
) -> list[dict]: ...
