from typing import Optional
import numpy as np
import numpy.typing as npt

def rpy_product(
    x: npt.ArrayLike,
    forces: npt.ArrayLike,
    torques: Optional[npt.ArrayLike] = None,
    *,
    a: float,
    eta: float,
    overlap: bool = True,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]: ...
