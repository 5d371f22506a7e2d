"""
The repository's scripts: the demo and lock helpers, and the analyses behind the tables of
`results/`. The Python ones run from the repository root as modules, e.g.
`python -m scripts.claims_verdicts`, and are linted and tested like the package.
"""

import pathlib

# The repository's root: the scripts find the committed results from it, wherever they run.
REPOSITORY = pathlib.Path(__file__).resolve().parent.parent
RESULTS = REPOSITORY / "results"
