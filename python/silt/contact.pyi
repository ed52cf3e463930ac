from typing import Optional, Sequence, Union
import numpy as np
import numpy.typing as npt

class ContactLaw:
    def __init__(self, scene: "silt.Scene") -> None: ...
    @property
    def materials(self) -> list[str]: ...
    def pair(
        self,
        positions: npt.ArrayLike,
        radii: tuple[float, float],
        *,
        velocities: Optional[npt.ArrayLike] = None,
        angular_velocities: Optional[npt.ArrayLike] = None,
        materials: Optional[Sequence[Union[int, str]]] = None,
        fixed: tuple[bool, bool] = (False, False),
        state: Optional[dict] = None,
        dt: Optional[float] = None,
        advance_spring: bool = False,
    ) -> dict: ...
