"""Surfaces: where a person (or a pipe) meets bingo. `print` is plain text; the terminal
surface is imported only when it is used."""

from .print import PrintSurface

__all__ = ["PrintSurface"]
