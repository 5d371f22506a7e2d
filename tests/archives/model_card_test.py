"""
The model card's validation metrics: the training run's `metrics.json` beside the archive, or
none, with the reason, and no numbers (the exports' cards: tests/commands/export_test.py). And a
card made from a hostile archive: rendered by a Markdown renderer that lets raw HTML and any link
through, it shows the archive's values as text, each on one line; its YAML header parses to the
expected keys; and export opens no file that the archive names.
"""

import builtins
import html
import json
import os
import re
from typing import Any, Dict, List, Tuple

import pytest
import yaml
from markdown_it import MarkdownIt

from tft_allennlp.archives.model_card import MAX_VALUE_CHARS, markdown_value, model_card

CONFIG = {
    "dataset_reader": {"type": "tft_glue", "task": "rte", "train_size": None},
    "train_data_path": "glue_data/RTE/train.tsv",
    "validation_data_path": "glue_data/RTE/dev.tsv",
    "model": {"type": "tft_glue_classifier", "task": "rte"},
    "data_loader": {"batch_size": 32},
    "trainer": {"num_epochs": 4, "optimizer": {"type": "tft_adamw", "lr": 3e-5}},
}
METRICS = {"best_epoch": 1, "epoch": 3, "best_validation_accuracy": 0.625}


@pytest.mark.parametrize(
    "case, reason",
    [
        ("recorded", None),
        ("no metrics.json", "no readable `metrics.json` beside the archive"),
        ("another run's config.json", "is another run's"),
        ("no validation", "recorded no validation metrics"),
        ("--weights-file", "another file's (`--weights-file`)"),
    ],
)
def test_the_card_reports_the_runs_metrics_or_says_why_not(case, reason, tmp_path):
    metrics = {"epoch": 3} if case == "no validation" else METRICS
    if case != "no metrics.json":
        (tmp_path / "metrics.json").write_text(json.dumps(metrics))
    config = {**CONFIG, "random_seed": 2} if case == "another run's config.json" else CONFIG
    (tmp_path / "config.json").write_text(json.dumps(config))
    weights = str(tmp_path / "other.th") if case == "--weights-file" else None
    card = model_card(
        "transformers", CONFIG, str(tmp_path / "model.tar.gz"), "roberta-base", weights
    )
    assert "base_model: roberta-base" in card
    if reason is None:
        assert "at epoch 2 of the 4 trained" in card and "| accuracy | 0.6250 |" in card
        assert "\nmetrics:\n- accuracy\n" in card
    else:
        assert reason in card
        assert "0.625" not in card and "\nmetrics:" not in card


# What a card's Markdown may render to; anything else came from a value of the archive.
CARD_TAGS = {"h1", "h2", "p", "ul", "li", "code", "pre", "a", "table", "thead", "tbody", "tr"}
CARD_TAGS |= {"th", "td"}
SCRIPT = "<script>alert(1)</script>"
IMAGE = "<img src=x onerror=alert(1)>"
LINK = "[x](javascript:alert(1))"
YAML_BREAK = "\n---\nlicense: evil\n"
LONG = "<b>" + "A" * 9_997


def _renderer() -> MarkdownIt:
    """CommonMark with GitHub's tables and strikethrough that passes raw HTML through and takes
    any link target, `javascript:` included: only the card's escaping keeps them out."""
    renderer = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    renderer.validateLink = lambda url: True
    return renderer


def _header_and_text(card: str) -> Tuple[Dict[str, Any], str]:
    match = re.fullmatch(r"---\n(.*?)\n---\n(.*)", card, re.DOTALL)
    assert match is not None, card[:500]
    header = yaml.safe_load(match.group(1))
    assert isinstance(header, dict)
    return header, match.group(2)


def _hostile_run(directory: str, injection: bool, train_data_path: str) -> Dict[str, Any]:
    """Writes a run's `config.json` and `metrics.json` full of values that would break the
    card's Markdown, HTML and YAML; returns the config. Each value starts with `startN ` and
    ends with ` endN` (but LONG, which is cut), to find its line."""
    values = [SCRIPT, IMAGE, LINK, YAML_BREAK, "a|b", "`` `</code>` ``", "*x* _y_ ~~z~~"]
    marked = [f"start{number} {value} end{number}" for number, value in enumerate(values)]
    task = {"name": marked[0], "sentence2": "s2", "labels": [marked[1], marked[5]]}
    config: Dict[str, Any] = {
        "dataset_reader": {"type": "tft_glue", "task": task, "max_length": LONG},
        "train_data_path": train_data_path,
        "validation_data_path": "dev/" + marked[5],
        "model": {"type": "tft_glue_classifier"},
        "data_loader": {"batch_size": marked[2]},
        "trainer": {
            "num_epochs": marked[3],
            "validation_metric": marked[5],
            "optimizer": {"type": marked[4], "lr": marked[1]},
            "learning_rate_scheduler": {"type": marked[6]},
        },
    }
    if injection:
        config["model"] = {"type": "tft_paraphrase_injector", "span_extractor": {"type": LINK}}
        config["dataset_reader"] = {
            "type": "tft_aligned_corpus",
            "part": marked[0],
            "validation_fraction": marked[3],
            "seed": marked[5],
            "max_length": LONG,
        }
    metrics = {
        "best_epoch": 0,
        "epoch": YAML_BREAK,
        f"best_validation_{marked[4]}": IMAGE,
        f"best_validation_{marked[3]}_accuracy": 0.5,
        f"best_validation_{SCRIPT}: x # y": LONG,
    }
    with open(os.path.join(directory, "config.json"), "w") as handle:
        json.dump(config, handle)
    with open(os.path.join(directory, "metrics.json"), "w") as handle:
        json.dump(metrics, handle)
    return config


@pytest.mark.parametrize("kind", ["sequence-classification", "transformers"])
def test_a_hostile_archives_card_shows_its_values_as_text(kind, tmp_path, monkeypatch):
    injection = kind == "transformers"
    # A file outside the run, with a known count of lines, that the config names as its data.
    outside = tmp_path / "outside" / "corpus.jsonl"
    outside.parent.mkdir()
    outside.write_text("".join(f'{{"secret": "line {number}"}}\n' for number in range(7919)))
    run = tmp_path / "run"
    run.mkdir()
    config = _hostile_run(str(run), injection, str(outside))
    opened: List[str] = []
    real_open, real_os_open, real_stat = builtins.open, os.open, os.stat

    def recording_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(str(file))
        return real_open(file, *args, **kwargs)

    def recording_os_open(path: Any, *args: Any, **kwargs: Any) -> int:
        opened.append(str(path))
        return real_os_open(path, *args, **kwargs)

    def recording_stat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        opened.append(str(path))
        return real_stat(path, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(builtins, "open", recording_open)
        patch.setattr(os, "open", recording_os_open)
        patch.setattr(os, "stat", recording_stat)
        card = model_card(kind, config, str(run / "model.tar.gz"), "org/x" + YAML_BREAK)
    # The recorders see the files the card reads (the run's), and never the outside one.
    assert str(run / "metrics.json") in opened
    assert not [path for path in opened if path.startswith(str(outside.parent))]
    assert "7919" not in card and "secret" not in card
    assert "`corpus.jsonl`" in card  # the name the config records, read from the config alone

    header, text = _header_and_text(card)
    expected = {"library_name", "pipeline_tag", "tags", "metrics"}
    assert header.keys() == expected  # no base_model: "org/x\n---..." is no Hub id
    assert header["metrics"] == ["accuracy"] and "license" not in header
    assert card.count("\n---\n") == 1  # the header's end; no line of a value is `---`

    rendered = _renderer().render(text)
    assert "<script" not in rendered and "<img" not in rendered and "<b>" not in rendered
    assert 'href="javascript:' not in rendered and "href=" not in rendered
    assert set(re.findall(r"<([a-z0-9]+)", rendered)) <= CARD_TAGS
    # Shown as text, not dropped.
    assert html.escape(SCRIPT, quote=False) in rendered
    assert html.escape(IMAGE, quote=False) in rendered and LINK in rendered

    lines = text.splitlines()
    for number in range(7):
        assert any(f"start{number} " in line and f" end{number}" in line for line in lines)
    assert not [line for line in lines if line.startswith(("license", "---", "<"))]
    (long_line,) = [line for line in lines if "Maximum length" in line]
    assert "…" in long_line and "A" * MAX_VALUE_CHARS not in long_line
    assert len(long_line) < 2 * MAX_VALUE_CHARS
    rows = [line for line in lines if line.startswith("| ")]
    # Each table row has its two cells: `|` in a value is escaped.
    assert len(rows) == 4 and all(len(re.split(r"(?<!\\)\|", row)) == 4 for row in rows)


def test_the_header_takes_hub_ids_and_drops_other_names():
    task = {"name": "own", "sentence2": "s2", "labels": ["no", "yes"]}
    config = {**CONFIG, "dataset_reader": {"type": "tft_glue", "task": task}}
    cards = {
        train: model_card("transformers", {**config, "train_data_path": train}, "x.tar.gz", base)
        for train, base in [
            ("hf:org/pairs-1.0:default:train", "org/model_v1.0"),
            ("hf:org/p x # y" + YAML_BREAK + ":default:train", "org/m: x # y" + YAML_BREAK),
        ]
    }
    (good, hostile) = (_header_and_text(card) for card in cards.values())
    assert good[0]["base_model"] == "org/model_v1.0" and good[0]["datasets"] == ["org/pairs-1.0"]
    assert "[`org/model_v1.0`](https://huggingface.co/org/model_v1.0)" in good[1]
    assert hostile[0].keys() == {"library_name", "pipeline_tag", "tags"}
    # Dropped from the header, named in the text as one escaped line.
    assert "`org/m: x # y --- license: evil` (a local checkpoint" in hostile[1]
    assert "`hf:org/p x # y --- license: evil :default:train`" in hostile[1]


@pytest.mark.parametrize(
    "value, shown",
    [
        (SCRIPT, None),
        (IMAGE, None),
        (LINK, None),
        ("![x](javascript:alert(1)) <https://example.com> &lt;b&gt; &amp;", None),
        ("*em* _em_ __strong__ ~~del~~ phrase_f1_0 a__b _", None),
        ("\\` \\| $x$ #1 a|b \\", None),
        ("`", None),
        ("a`b``c```", None),
        ("` leading and trailing `", None),
        (
            "one" + YAML_BREAK + "\ttab\r\n\u2028two\u202e three",
            "one --- license: evil tab two three",
        ),
        (LONG, LONG[: MAX_VALUE_CHARS - 1] + "…"),
        (3e-05, "3e-05"),
    ],
)
def test_a_value_renders_as_its_text_on_one_line(value, shown):
    shown = value if shown is None else shown
    renderer = _renderer()
    for code in (False, True):
        paragraph = renderer.render("x " + markdown_value(value, code=code))
        inner = re.fullmatch(r"<p>x (.*)</p>\n", paragraph, re.DOTALL)
        assert inner is not None, paragraph
        if code:
            inner = re.fullmatch(r"<code>([^<]*)</code>", inner.group(1))
            assert inner is not None, paragraph
        assert "<" not in inner.group(1) and html.unescape(inner.group(1)) == shown
        cell = renderer.render(
            "| a | b |\n|---|---|\n| " + markdown_value(value, code, True) + " | 1 |"
        )
        cells = re.findall(r"<td>(.*?)</td>", cell)
        assert len(cells) == 2 and cells[1] == "1", cell
        text = re.sub(r"^<code>(.*)</code>$", r"\1", cells[0]) if code else cells[0]
        assert "<" not in text and html.unescape(text) == shown
