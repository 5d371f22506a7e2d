"""
The `README.md` model card of an exported model, as the Hugging Face Hub reads one: a YAML
header (`library_name`, `base_model`, `pipeline_tag`, `tags`, and `datasets` and `metrics` where
known), then the base model, what the model was trained on and with which recipe (read from the
archive's config), the best epoch's validation metrics, and three lines that load it.

AllenNLP 2.10.1's `model.tar.gz` holds no metrics (only `config.json`, `weights.th`,
`vocabulary/`, `meta.json` and what `include_in_archive` names): the best epoch's are in the
serialization directory's `metrics.json` (`best_epoch`, `best_validation_*`), and in the
trainer's checkpoint state, which is not kept. The card reports that `metrics.json`, read beside
the archive (or in the serialization directory given), and says so. When there is none, when a
`config.json` beside it is not the archive's (another run's files), when it has no
`best_validation_*` keys (trained without validation), or when other weights were exported
(`--weights-file`), the card says that no validation metrics are known and why: no numbers.

An archive may come from anyone, so the card treats what it reads from the archive (the config,
`metrics.json`) as text, never as Markdown, HTML or YAML: each value goes through
`markdown_value` (one line, at most `MAX_VALUE_CHARS` characters, escaped, or a code span that
it cannot close), links go only to Hub ids (`_HUB_ID`), and the YAML header takes only Hub ids
and the plugin's own words. Export opens no file that the archive names: the training data's
size is not recorded in the archive (AllenNLP's `metrics.json` and `meta.json` hold no counts),
and the card says so.
"""

import json
import os
import re
import unicodedata
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from allennlp.models.archival import Archive
from huggingface_hub import ModelCardData

from tft_allennlp.common.glue_tasks import GLUE_TASKS, resolve_task


class CardKind(NamedTuple):
    library_name: str
    pipeline_tag: str
    tags: Tuple[str, ...]
    what: str
    usage: str
    """Three lines of Python that load the model from `{path}`, a string literal."""


KINDS = {
    "transformers": CardKind(
        "transformers",
        "feature-extraction",
        (),
        "The transformer encoder of an AllenNLP model, as a Hugging Face checkpoint.",
        "from transformers import AutoModel, AutoTokenizer\n"
        "tokenizer = AutoTokenizer.from_pretrained({path})\n"
        "model = AutoModel.from_pretrained({path})",
    ),
    "sentence-transformers": CardKind(
        "sentence-transformers",
        "sentence-similarity",
        ("sentence-transformers", "feature-extraction", "sentence-similarity"),
        "The transformer encoder of an AllenNLP model, as a sentence-transformers model "
        "(modules.json names its pooling).",
        "from sentence_transformers import SentenceTransformer\n"
        "model = SentenceTransformer({path})\n"
        'embeddings = model.encode(["A man plays the flute.", "A man is playing a flute."])',
    ),
    "sequence-classification": CardKind(
        "transformers",
        "text-classification",
        (),
        "A GLUE classifier of an AllenNLP model, as a Hugging Face sequence classifier.",
        "from transformers import AutoModelForSequenceClassification, AutoTokenizer\n"
        "model = AutoModelForSequenceClassification.from_pretrained({path}).eval()\n"
        "tokenizer = AutoTokenizer.from_pretrained({path})",
    ),
}

# The Hub's ids of the metrics that the plugin's metric keys name.
HUB_METRICS = {
    "accuracy": "accuracy",
    "f1": "f1",
    "mcc": "matthews_correlation",
    "pearson": "pearsonr",
    "spearman": "spearmanr",
}
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$", re.ASCII)

MAX_VALUE_CHARS = 200
"""The longest value of the archive that the card writes; a longer one is cut, ending in `…`."""
# What Markdown (CommonMark, GitHub's and the Hub's extensions: tables, strikethrough, autolinks,
# math) or HTML reads in running text, each escaped with a backslash; an underscore only where it
# could open or close emphasis (not inside a word: `phrase_f1_0` stays as it is).
_MARKDOWN_SPECIAL = re.compile(r"[\\`*\[\]()<>!&|~$:.#]|(?<![^\W_])_|_(?![^\W_])")


def write_model_card(
    directory: str,
    kind: str,
    archive: Archive,
    archive_file: str,
    base: Optional[str],
    weights_file: Optional[str] = None,
    path: Optional[str] = None,
    adapters: Optional[str] = None,
) -> None:
    """
    Writes `directory/README.md`, the card of the `kind` (a key of `KINDS`) of export of
    `archive`, read from `archive_file` (with `weights_file`, when given), whose encoder was
    trained from `base`. `path` is where the usage lines load the model from (`directory`);
    `adapters`, a paragraph on the adapters the model was trained with and how they were written.
    """
    config = archive.config.as_dict(quiet=True)
    text = model_card(kind, config, archive_file, base, weights_file, path or directory, adapters)
    with open(os.path.join(directory, "README.md"), "w", encoding="utf-8") as handle:
        handle.write(text)


def model_card(
    kind: str,
    config: Dict[str, Any],
    archive_file: str,
    base: Optional[str],
    weights_file: Optional[str] = None,
    path: str = "MODEL_DIR",
    adapters: Optional[str] = None,
) -> str:
    """The card's text; its usage lines load the model from `path`; `adapters`, a section."""
    spec = KINDS[kind]
    metrics, metrics_source = validation_metrics(archive_file, config, weights_file)
    data, datasets, data_tags = training_data(config)
    hub_metrics = sorted(
        {HUB_METRICS[word] for key in metrics for word in key.split("_") if word in HUB_METRICS}
    )
    hub_id = base if _is_hub_id(base) and not os.path.exists(str(base)) else None
    # Only Hub ids and the plugin's own words go into the header, which `to_yaml` dumps with
    # PyYAML (quoted where YAML needs it).
    header = ModelCardData(
        library_name=spec.library_name,
        base_model=hub_id,
        pipeline_tag=spec.pipeline_tag,
        tags=["tft-allennlp", "allennlp", *data_tags, *spec.tags],
        datasets=datasets or None,
        metrics=hub_metrics or None,
    )
    sections = [
        f"# {kind} export of an AllenNLP model\n\n{spec.what} Written by `allennlp tft-export` "
        "(tft-allennlp) from the model archive alone.",
        "## Base model\n\n" + _base_text(base, hub_id),
        "## Training data\n\n" + "\n".join(data),
        "## Recipe\n\n" + "\n".join(recipe(config)),
        "## Validation metrics\n\n" + _metrics_text(metrics, metrics_source),
        "## Usage\n\n```python\n"
        + spec.usage.format(path=json.dumps(path, ensure_ascii=False))
        + "\n```",
    ]
    if kind == "sequence-classification":
        sections.insert(3, "## Outputs\n\n" + _outputs(config))
    if adapters:
        sections.insert(1, "## Adapters\n\n" + adapters)
    return f"---\n{header.to_yaml()}\n---\n\n" + "\n\n".join(sections) + "\n"


def markdown_value(value: Any, code: bool = False, cell: bool = False) -> str:
    """
    A value read from an archive, as Markdown that shows it as plain text on one line: every
    card line with a value of the archive writes it through here.

    The value's text is made one line (line breaks, tabs and other control characters become
    spaces, runs of spaces one space, format characters such as bidirectional overrides are
    dropped), cut to `MAX_VALUE_CHARS` characters ending in `…`, and either escaped
    (`_MARKDOWN_SPECIAL`: no HTML, link, image, emphasis or autolink can start in it; a number,
    not a string, needs none) or written as a code span whose backtick fence is longer than any
    run of backticks inside it, so that it cannot close the span.

    # Parameters

    value : `Any`
        A value of the archive's config or `metrics.json`.
    code : `bool`, optional (default = `False`)
        Write it as a code span (names, types, files) rather than as escaped text.
    cell : `bool`, optional (default = `False`)
        It goes in a table cell: `|` is escaped there, in a code span too (which GitHub's and
        the Hub's tables read as `|`).
    """
    # Python writes a number with digits, `.`, `e`, `+`, `-`, `inf` or `nan`: nothing to escape.
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    characters = []
    for character in str(value):
        category = unicodedata.category(character)
        if category in ("Cc", "Zl", "Zp"):
            characters.append(" ")
        elif category not in ("Cf", "Cs"):
            characters.append(character)
    text = " ".join("".join(characters).split())
    if len(text) > MAX_VALUE_CHARS:
        text = text[: MAX_VALUE_CHARS - 1] + "…"
    if not code:
        return text if number else _MARKDOWN_SPECIAL.sub(lambda match: "\\" + match.group(), text)
    if cell:
        text = text.replace("|", "\\|")
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    # CommonMark removes one space at each end of a span's text when it has both.
    padding = " " if text.startswith("`") or text.endswith("`") or not text else ""
    return f"{fence}{padding}{text}{padding}{fence}"


def _is_hub_id(name: Any) -> bool:
    """Whether `name` is written as a Hub id (`owner/name` or `name`), all of it."""
    return isinstance(name, str) and _HUB_ID.fullmatch(name) is not None


def training_data(config: Dict[str, Any]) -> Tuple[List[str], List[str], List[str]]:
    """Markdown lines on what the model was trained on, the Hub's dataset ids, and tags."""
    reader = config.get("dataset_reader", {})
    train = config.get("train_data_path")
    if config.get("model", {}).get("type") == "tft_paraphrase_injector":
        return [_corpus_line(train, reader)], [], ["paraphrase-injection"]
    if reader.get("type") == "multitask" and isinstance(train, dict):
        readers = reader.get("readers", {})
        lines: List[str] = []
        datasets: List[str] = []
        tags: List[str] = []
        for name in sorted(readers):
            line, dataset, tag = _task_line(readers[name], train.get(name))
            lines, datasets, tags = lines + [line], datasets + dataset, tags + tag
        return lines, sorted(set(datasets)), sorted(set(tags))
    if "task" in reader:
        line, dataset, tag = _task_line(reader, train)
        return [line], dataset, tag
    if not train:
        return ["- Not recorded in the config."], [], []
    return [f"- {markdown_value(_file_name(train), code=True)}"], [], []


def _corpus_line(train: Any, reader: Dict[str, Any]) -> str:
    """
    The injection corpus, by the name the config gives it. Its size is not recorded in the
    archive, and the card does not open the file that the config names: it might be any file of
    the machine that exports (`/etc/passwd`), not the corpus.
    """
    name = markdown_value(_file_name(train), code=True)
    part = reader.get("part", "all")
    line = (
        f"- Paraphrase injection on the aligned corpus {name}: its size in pairs is not recorded "
        "in the archive"
    )
    if part == "all":
        return line + "."
    fraction = markdown_value(reader.get("validation_fraction", 0.0))
    seed = markdown_value(reader.get("seed", 13370))
    return line + (
        f"; the model trained on its {markdown_value(part, code=True)} part "
        f"(validation_fraction {fraction}, seed {seed})."
    )


def _task_line(reader: Dict[str, Any], train: Any) -> Tuple[str, List[str], List[str]]:
    task = resolve_task(reader["task"])
    size = reader.get("train_size")
    rows = (
        f"`train_size` {markdown_value(size)}: that many rows sampled with seed "
        f"{markdown_value(reader.get('seed'))} (all of them if it has fewer)"
        if size is not None
        else "all its rows"
    )
    glue = task.name in GLUE_TASKS and not isinstance(reader["task"], dict)
    name = markdown_value(task.name, code=True)
    what = f"GLUE task {name}" if glue else f"task {name}"
    line = f"- {what}: {markdown_value(_file_name(train), code=True)}, {rows}."
    if glue:
        return line, ["nyu-mll/glue"], ["glue", task.name]
    # The header names a Hub dataset only by its id (`hf:NAME:...`); the text names any.
    hub = str(train).split(":")[1] if str(train).startswith("hf:") else None
    return line, [hub] if hub is not None and _is_hub_id(hub) else [], []


def _file_name(path: Any) -> str:
    """A Hugging Face dataset split as written (`hf:NAME:task:split`), a file by its base name."""
    text = str(path)
    return text if text.startswith("hf:") else os.path.basename(text)


def recipe(config: Dict[str, Any]) -> List[str]:
    """Markdown lines: epochs, batch size, optimizer and learning rate, maximum length, and an
    injection's variant (heads, pooling, features, negatives)."""
    trainer = config.get("trainer", {})
    optimizer = trainer.get("optimizer", {})
    loader = config.get("data_loader", {})
    batch = loader.get("batch_size") or (loader.get("scheduler") or {}).get("batch_size")
    if batch is None:
        batch = (loader.get("batch_sampler") or {}).get("batch_size")
    lines = [
        f"- Epochs: at most {markdown_value(trainer.get('num_epochs'))}, best epoch chosen by "
        f"{markdown_value(trainer.get('validation_metric'), code=True)}",
        f"- Batch size: {markdown_value(batch)}",
        f"- Optimizer: {markdown_value(optimizer.get('type'), code=True)}, learning rate "
        f"{markdown_value(optimizer.get('lr'))}",
    ]
    scheduler = trainer.get("learning_rate_scheduler")
    if scheduler:
        lines.append(
            f"- Learning-rate schedule: {markdown_value(scheduler.get('type'), code=True)}"
        )
    reader = config.get("dataset_reader", {})
    if "max_length" in reader:
        lines.append(f"- Maximum length: {markdown_value(reader['max_length'])} wordpieces")
    model = config.get("model", {})
    if model.get("type") == "tft_paraphrase_injector":
        weights = model.get("loss_weights", {"sentence": 1.0, "phrase": 1.0})
        classes = "2 classes" if reader.get("binary") else "3 classes"
        heads = [
            name
            for name, on in (
                ("sentential", weights.get("sentence", 1.0)),
                (f"phrasal ({classes})", weights.get("phrase", 1.0)),
            )
            if on
        ]
        extractor = (model.get("span_extractor") or {}).get("type")
        features = (model.get("phrase_pair_features") or {}).get("type")
        negatives = (reader.get("negative_sampler") or {}).get("type", "tft_paper")
        lines += [
            f"- Heads: {' and '.join(heads)}",
            f"- Phrase pooling: {markdown_value(extractor, code=True)}",
            f"- Phrase-pair features: {markdown_value(features, code=True)}",
            f"- Negatives: {markdown_value(negatives, code=True)}",
        ]
    return lines


def validation_metrics(
    archive_file: str, config: Dict[str, Any], weights_file: Optional[str] = None
) -> Tuple[Dict[str, Any], str]:
    """The best epoch's validation metrics (`best_validation_` removed from their keys) and
    where they come from; or no metrics and why there are none."""
    if weights_file is not None:
        return {}, (
            "None: the weights exported are another file's (`--weights-file`), which the "
            "training run's `metrics.json` does not describe."
        )
    directory = archive_file if os.path.isdir(archive_file) else os.path.dirname(archive_file)
    path = os.path.join(directory, "metrics.json")
    try:
        with open(path, encoding="utf-8") as handle:
            recorded = json.load(handle)
    except (OSError, ValueError):
        return {}, (
            "None known: there is no readable `metrics.json` beside the archive, where AllenNLP "
            "writes them (its `model.tar.gz` holds none)."
        )
    try:
        with open(os.path.join(directory, "config.json"), encoding="utf-8") as handle:
            other_run = json.load(handle) != config
    except (OSError, ValueError):
        other_run = False
    if other_run:
        return {}, "None known: the `metrics.json` beside the archive is another run's."
    if not isinstance(recorded, dict):
        return {}, "None known: the `metrics.json` beside the archive holds no JSON object."
    metrics = {
        key[len("best_validation_") :]: value
        for key, value in recorded.items()
        if key.startswith("best_validation_")
    }
    if not metrics:
        return {}, "None: the training run recorded no validation metrics."
    epoch = recorded.get("best_epoch")
    epochs = recorded.get("epoch")
    which = (
        f"epoch {epoch + 1} of the {epochs + 1} trained"
        if isinstance(epoch, int) and isinstance(epochs, int)
        else "the best epoch"
    )
    validation = config.get("validation_data_path")
    paths = validation.values() if isinstance(validation, dict) else [validation]
    names = ", ".join(markdown_value(_file_name(path), code=True) for path in paths if path)
    return metrics, (
        f"On the validation data ({names}), at {which}, as the training run's `metrics.json` "
        "records them (`best_validation_*`):"
    )


def _base_text(base: Optional[str], hub_id: Optional[str]) -> str:
    if not base:
        return "Not recorded in the archive."
    name = markdown_value(base, code=True)
    if hub_id:
        # A Hub id is letters, digits, `-`, `_`, `.` and one `/`: a safe link target as it is.
        return f"[{name}](https://huggingface.co/{hub_id})"
    return f"{name} (a local checkpoint or archive, as the training config names it)"


def _metrics_text(metrics: Dict[str, Any], source: str) -> str:
    if not metrics:
        return source
    rows = [
        f"| {markdown_value(key, cell=True)} | "
        + (f"{value:.4f}" if isinstance(value, float) else markdown_value(value, cell=True))
        + " |"
        for key, value in metrics.items()
    ]
    return source + "\n\n| metric | value |\n|---|---|\n" + "\n".join(rows)


def _outputs(config: Dict[str, Any]) -> str:
    task = resolve_task(config["dataset_reader"]["task"])
    if task.is_regression:
        return "One score (regression, `problem_type: regression`)."
    labels = ", ".join(markdown_value(label, code=True) for label in task.labels)
    return f"Logits over the labels {labels}."
