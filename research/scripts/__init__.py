"""
The research scripts: the analyses behind the tables of `research/results/` and the grids' runners
(the demo and lock helpers are the repository's `scripts/`). The Python ones run from the repository
root as modules, e.g. `python -m research.scripts.claims_verdicts`, and are linted and tested like
the package.
"""

import pathlib

# The repository's root: the scripts find the committed results from it, wherever they run.
REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
RESULTS = REPOSITORY / "research/results"
