"""The code location: the one Definitions object, built in defs/location.py (workspace.yaml names this module)."""

from .defs.location import defs

__all__ = ["defs"]
