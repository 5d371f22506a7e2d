"""
`allennlp tft-show` as a user runs it: on an injection archive trained here from the tiny BERT,
its numbers are `allennlp predict`'s for the same pairs; bad input ends with one line; and the
page, opened in a real headless browser, draws every link without a console message.
"""

import json

import pytest
from allennlp.commands.train import train_model_from_file

from tests import CONFIGS_ROOT, FIXTURES_ROOT
from tests.allennlp_cli import forked_allennlp
from tests.viewer import browser, page_elements, pair_links, select, span

CORPUS = FIXTURES_ROOT / "paraphrase/aligned.jsonl"
RECORDS = [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]
GOLD = FIXTURES_ROOT / "alignment/multimwa_sample.tsv"  # its first pair is the corpus's first


@pytest.fixture(scope="module")
def archive(tmp_path_factory, tiny_bert):
    """An injection archive trained for one epoch on the fixture corpus."""
    directory = tmp_path_factory.mktemp("injection")
    split = {
        "dataset_reader.validation_fraction": 0.25,
        "validation_dataset_reader.validation_fraction": 0.25,
        "trainer.num_epochs": 1,
    }
    train_model_from_file(CONFIGS_ROOT / "injection/tft.jsonnet", directory, json.dumps(split))
    return str(directory / "model.tar.gz")


@pytest.fixture(scope="module")
def page(archive, tmp_path_factory):
    """`tft-show` of every fixture pair with the archive and the gold: the page and stdout."""
    path = tmp_path_factory.mktemp("page") / "pairs.html"
    arguments = [str(CORPUS), str(path), "--archive", archive, "--gold", str(GOLD), "--first"]
    (result,) = forked_allennlp(["tft-show", *arguments, "--batch-size", "5"])
    assert result.returncode == 0, result.stderr[-3000:]
    return path, result.stdout


def test_the_pages_probabilities_are_allennlp_predicts(archive, page, tmp_path):
    path, stdout = page
    elements = page_elements(path.read_text())
    requests, links_of_requests, sections = [], [], select(elements, "section", "pair")
    assert [int(s.attributes["data-line"]) for s in sections] == list(range(1, len(RECORDS) + 1))
    for section in sections:
        record = RECORDS[int(section.attributes["data-line"]) - 1]
        figures = [("pair", record["target"], section)] + [
            ("random", RECORDS[int(d.attributes["data-partner-line"]) - 1]["target"], d)
            for d in select(elements, "details", "random-pair")
            if d.within("section", "pair") is section
        ]
        for kind, target, holder in figures:
            links = pair_links(elements, section.attributes["id"], kind)
            pairs = [
                [span(link.attributes["data-source"]), span(link.attributes["data-target"])]
                for link in links
            ]
            requests.append({"source": record["source"], "target": target, "phrase_pairs": pairs})
            links_of_requests.append((holder, links))
    lines = tmp_path / "requests.jsonl"
    lines.write_text("".join(json.dumps(request) + "\n" for request in requests))
    output = tmp_path / "predictions.jsonl"
    (result,) = forked_allennlp(
        ["predict", archive, str(lines), "--output-file", str(output), "--silent"]
    )
    assert result.returncode == 0, result.stderr[-3000:]
    predictions = [json.loads(line) for line in output.read_text().splitlines()]
    agree = scored = 0
    for (holder, links), prediction in zip(links_of_requests, predictions, strict=True):
        assert float(holder.attributes["data-sentence-probability"]) == pytest.approx(
            prediction["paraphrase_probability"], abs=1e-5
        )
        for link, predicted in zip(links, prediction["phrase_pairs"], strict=True):
            shown = json.loads(link.attributes["data-probabilities"])
            assert shown == pytest.approx(predicted["probabilities"], abs=1e-5)
            assert set(shown) == {"paraphrase", "random", "in_paraphrase"}
            assert link.attributes["data-predicted"] == predicted["label"]
            scored += 1
            agree += predicted["label"] == link.attributes["data-label"]
    # The summary's accuracy of the phrase head against the corpus labels.
    assert f"phrase head accuracy: {round(agree / scored, 3)}" in " ".join(stdout.split())
    assert "gold precision:" in stdout and f"page: {path}" in stdout


def test_the_page_draws_every_link_in_a_browser(page, tmp_path):
    path, _ = page
    measured, messages = browser.self_check(str(path))
    print("self-check:", json.dumps(measured))
    assert messages == [] and measured["errors"] == []
    elements = page_elements(path.read_text())
    assert measured["pairs"] == len(RECORDS)
    assert measured["links"] == len(select(elements, "g", "link")) > 0
    assert measured["missed"] == len(select(elements, "g", "missed")) == 1  # the gold's "." - "."
    assert measured["drawn"] == measured["figures"]
    assert measured["empty"] == []
    assert measured["pointing"] and measured["keyboard"]
    screenshot = tmp_path / "pairs.png"
    assert browser.screenshot(str(path), str(screenshot)) == []
    assert (
        screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and screenshot.stat().st_size > 10_000
    )
    print("screenshot:", screenshot)


def test_bad_input_ends_with_one_line(archive, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(CORPUS.read_text().splitlines()[0] + '\n\n{"source": ["A"]}\n')
    existing = tmp_path / "existing.html"
    existing.write_text("kept")
    out = str(tmp_path / "out.html")
    cases = {
        f"{bad}:3: malformed record: 'target' must be a non-empty list of words": [str(bad), out],
        f"{existing}: exists; give --force to replace it": [str(CORPUS), str(existing)],
        f"{tmp_path}/none.tar.gz: no such file or directory": [
            str(CORPUS),
            out,
            "--archive",
            str(tmp_path / "none.tar.gz"),
        ],
        f"{CORPUS}: not a readable model archive": [str(CORPUS), out, "--archive", str(CORPUS)],
        "--limit 1001: a page of more than 1000 pairs takes a browser minutes to open": [
            str(CORPUS),
            out,
            "--limit",
            "1001",
        ],
    }
    results = forked_allennlp(*(["tft-show", *arguments] for arguments in cases.values()))
    for expected, result in zip(cases, results):
        assert result.returncode == 1, (expected, result.stderr[-2000:])
        last = result.stderr.strip().splitlines()[-1]
        assert last.startswith(f"tft-show: {expected}"), last
    assert existing.read_text() == "kept" and not (tmp_path / "out.html").exists()
