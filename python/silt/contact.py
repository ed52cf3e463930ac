"""The collision model of a scene for one pair of spheres (seed 000, eq. 7-8 and 10-21): lubrication, the
normal law, tangential friction with its memory, evaluated by the kernel every step of the scene runs for
each near pair.

    >>> law = silt.contact.ContactLaw(silt.Scene.from_file("examples/default-bed.toml"))
    >>> out = law.pair([[0, 0, 0], [0.00099, 0, 0]], (0.0005, 0.0005), velocities=[[0.01, 0, 0], [0, 0, 0]])
    >>> out["force"], out["state"]

``ContactLaw(scene)`` takes a particle or coupled scene's ``[contact]`` table and materials (and, in a
coupled scene, the fluid's viscosity for lubrication); ``pair(...)`` returns the force on sphere 0 (sphere 1
gets the opposite), both torques, and the pair's memory to pass to the next call.
"""

from ._silt import ContactLaw

__all__ = ["ContactLaw"]
