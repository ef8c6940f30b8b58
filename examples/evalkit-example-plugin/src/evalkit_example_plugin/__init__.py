"""An example third-party plugin for paired-evalkit."""

__version__ = "0.1.0"
