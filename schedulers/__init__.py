"""gridsched: grid-scheduling policies for Batsim 4.x and an embedded Batsim-compatible engine."""

__version__ = "0.1.0"
