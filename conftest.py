"""
What every test of the repository shares, the plugin's (`tests/`, a package) and the harness's
(`harness/tests/`, rootless modules): here at the root so that each pytest process builds the
session's tiny BERT once, whichever of the two trees its files come from.
"""

import os

# Nothing in the tests may reach the network; set before transformers is imported.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import pytest

import tft_allennlp  # noqa: F401  (registers the components, as `allennlp` does with the plugin)
from tests import FIXTURES_ROOT
from tests.tiny_bert import write_tiny_bert


@pytest.fixture(scope="session", autouse=True)
def tiny_bert(tmp_path_factory) -> str:
    """
    Writes the tiny BERT once per test session and points the training configs at it and at
    the GLUE fixtures, through the same environment variables a user sets.
    """
    directory = write_tiny_bert(str(tmp_path_factory.mktemp("tiny_bert")))
    os.environ["TFT_MODEL"] = directory
    os.environ["GLUE_DIR"] = str(FIXTURES_ROOT / "glue")
    os.environ["TFT_PARAPHRASE_CORPUS"] = str(FIXTURES_ROOT / "paraphrase/aligned.jsonl")
    return directory
