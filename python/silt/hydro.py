"""Hydrodynamic building blocks of the bead models (seed 002): the Rotne–Prager–Yamakawa mobility product.

``rpy_product(x, F, T=None, *, a, eta, overlap=True) -> (V, W)``: velocities and angular velocities of
beads of radius ``a`` at ``x`` under forces ``F`` and torques ``T`` in a fluid of viscosity ``eta`` (all
(N, 3) float64 arrays), with Wajnryb et al.'s overlap correction for beads closer than ``2a`` (``overlap=False``:
the far-field form for every pair, as pystokes computes it), matrix-free, the GIL released. The pystokes call
``pystokes.unbounded.Rbm(a, N, eta).mobilityTT(v, r, F)`` computes the translational part.
"""

from ._silt import rpy_product

__all__ = ["rpy_product"]
