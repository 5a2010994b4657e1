"""`python -m bingo`, the same as the `bingo` console script."""

from .cli import main

main()
