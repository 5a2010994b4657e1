"""`bingo` as its console script runs it, but returning from the script instead of leaving
the process with `os._exit` (which a profiler would not outlive): for `bench/profile.py`."""

import sys

from bingo.cli import launch

sys.exit(launch(sys.argv[1:]))
