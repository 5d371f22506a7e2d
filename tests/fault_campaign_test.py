"""
Every case of the fault campaign (`tests/fault_cases.py`, per command family: tft-align,
tft-export, tft-glue-submission, tft-experiment, allennlp train, evaluate and predict) ends as
it should: a one-line error naming what is wrong, or the correct result; never a traceback that
names nothing, a hang, or an exit 0 with a wrong result.
"""

import pytest

from tests.fault_cases import CASES, case_id, make_artifacts, run_case


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory, tiny_bert):
    return make_artifacts(tmp_path_factory.mktemp("archives"), tiny_bert)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_the_case_ends_as_it_should(case, artifacts, tmp_path):
    expected = "clear error" if case.expect == "error" else "correct"
    category, outcome = run_case(case, tmp_path, artifacts)
    assert category == expected, (outcome.returncode, outcome.stderr[-3000:])
