"""
Every name of AllenNLP, transformers, huggingface-hub and the interpreter that the plugin replaces
is replaced through `tft_host_patches.replace`, so that `tft_host_patches.replaced()` lists them
all in the process of an `allennlp` command, and each patch is described in one of the two
indexes (`tft_host_patches/__init__.py`, `tft_host_patches/plugin.py`).
"""

import json
import os
import subprocess
import sys
from typing import Any, List

from tests import PROJECT_ROOT

# What the `allennlp` command has done by the time `train` runs: its command line (which the
# start-up hook patches), `import_plugins`, and the modules that `train`, the optimizers and the
# loading of a transformer import.
SCRIPT = """
import json, sys
sys.argv = ["allennlp", "train"]
import allennlp.commands
allennlp.commands.import_plugins()
import allennlp.commands.train, allennlp.training.optimizers, allennlp.common.cached_transformers
import tft_host_patches
train = allennlp.commands.train
calls_on = {
    patch: getattr(tft_host_patches.previous(train, "train_model", patch), "__tft_patch__", "host")
    for patch in ("run_files", "stop_signals", "serialization_dir_lock")
}
print(json.dumps(calls_on))
print(json.dumps(tft_host_patches.replaced()))
"""

EXPECTED = {
    ("huggingface_hub.HfFolder", "huggingface_stack"),
    ("huggingface_hub.Repository", "huggingface_stack"),
    ("transformers.AdamW", "huggingface_stack"),
    (
        "transformers.tokenization_utils_base.PreTrainedTokenizerBase.encode_plus",
        "huggingface_stack",
    ),
    ("allennlp.common.cached_transformers.get_tokenizer", "huggingface_stack"),
    ("transformers.dynamic_module_utils.resolve_trust_remote_code", "remote_code"),
    ("allennlp.training.callbacks.wandb.WandBCallback.on_start", "tracking_stack"),
    ("allennlp.common.plugins.discover_plugins", "autoload"),
    ("allennlp.common.registrable.Registrable.resolve_class_name", "tft_allennlp_lazy"),
    ("allennlp.common.registrable.Registrable.list_available", "tft_allennlp_lazy"),
    ("allennlp.common.registrable.Registrable._registry", "tft_allennlp_lazy"),
    ("allennlp.commands.import_plugins", "autoload"),
    ("allennlp.common.plugins.import_plugins", "autoload"),
    ("allennlp.commands.train.import_plugins", "autoload"),
    ("allennlp.commands.ArgumentParserWithDefaults.error", "autoload"),
    ("allennlp.common.params._environment_variables", "config_defaults"),
    ("allennlp.common.params.evaluate_file", "config_defaults"),
    ("allennlp.common.params.cached_path", "config_defaults"),
    ("allennlp.training.util.create_serialization_dir", "serialization_dir"),
    ("allennlp.common.params.Params.to_file", "run_files"),
    ("allennlp.common.meta.Meta.to_file", "run_files"),
    ("allennlp.data.vocabulary.Vocabulary.save_to_files", "run_files"),
    ("allennlp.common.util.dump_metrics", "run_files"),
    ("allennlp.training.util.dump_metrics", "run_files"),
    ("allennlp.evaluation.evaluator.dump_metrics", "run_files"),
    ("allennlp.commands.train.archive_model", "run_files"),
    ("allennlp.commands.train.train_model", "run_files"),
    ("allennlp.commands.train.train_model", "stop_signals"),
    ("allennlp.commands.train.train_model", "serialization_dir_lock"),
    ("allennlp.training.gradient_descent_trainer.GradientDescentTrainer.train", "stop_signals"),
    ("allennlp.commands.train._train_worker", "stop_signals"),
    (
        "allennlp.training.callbacks.confidence_checks.ConfidenceChecksCallback.on_start",
        "confidence_checks",
    ),
    ("sys.excepthook", "console"),
    ("allennlp.common.logging.prepare_global_logging", "console"),
    ("allennlp.common.logging.prepare_global_logging", "progress"),
    ("allennlp.common.tqdm.Tqdm.tqdm", "progress"),
    ("allennlp.training.util.description_from_metrics", "progress"),
    ("allennlp.training.gradient_descent_trainer.GradientDescentTrainer._try_train", "progress"),
    ("allennlp.commands.predict._PredictManager", "allennlp_commands"),
    ("allennlp.commands.predict._get_predictor", "allennlp_commands"),
    ("allennlp.commands.evaluate.evaluate_from_archive", "allennlp_commands"),
    ("allennlp.models.archival.extracted_archive", "untrusted_archives"),
    ("allennlp.models.archival.Params", "untrusted_archives"),
    ("allennlp.models.archival.Meta", "untrusted_archives"),
    ("allennlp.models.archival._load_dataset_readers", "untrusted_archives"),
    ("allennlp.models.archival._load_model", "untrusted_archives"),
    ("allennlp.models.model.Model.load_state_dict", "untrusted_archives"),
    ("allennlp.nn.util.read_state_dict", "untrusted_archives"),
}


def _output_lines(script: str, **run: Any) -> List[str]:
    """What `script` prints in a new interpreter of this environment, one thread, line by line."""
    environment = {**os.environ, "OMP_NUM_THREADS": "1", **run.pop("env", {})}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=environment,
        check=True, **run,
    )  # fmt: skip
    return done.stdout.splitlines()


def test_every_replaced_name_is_listed_and_every_patch_is_in_an_index():
    lines = _output_lines(SCRIPT, env={"TFT_ALLENNLP_AUTOLOAD": "1"}, cwd=PROJECT_ROOT)
    replaced = [tuple(entry) for entry in json.loads(lines[-1])]
    assert set(replaced) == EXPECTED
    assert len(replaced) == len(EXPECTED)  # each once
    # The wrappers of `train_model` nest in this order: the lock outermost.
    chain = [patch for name, patch in replaced if name == "allennlp.commands.train.train_model"]
    assert chain == ["run_files", "stop_signals", "serialization_dir_lock"]
    # Each wrapper calls on the one inside it (`previous`), the innermost on AllenNLP's own.
    calls_on = json.loads(lines[-2])
    assert calls_on == {
        "run_files": "host",
        "stop_signals": "run_files",
        "serialization_dir_lock": "stop_signals",
    }
    indexes = "".join(
        (PROJECT_ROOT / path).read_text()
        for path in ("tft_host_patches/__init__.py", "tft_host_patches/plugin.py")
    )
    modules = {
        "autoload": "tft_allennlp_autoload.py",
        "serialization_dir_lock": "serialization_dir.py",
        "tft_allennlp_lazy": "tft_allennlp_lazy/",
    }
    for patch in {patch for _, patch in replaced}:
        assert modules.get(patch, f"{patch}.py") in indexes, patch


def test_a_spawned_worker_unpickles_the_worker_wrapper_before_the_plugin():
    # torch's spawn pickles AllenNLP's `_train_worker`, the stop-signal patch's wrapper, by name:
    # a worker imports its module first, and the plugin (with every patch) only after.
    script = (
        "import json, pickle, sys\n"
        "import tft_host_patches.stop_signals as stop_signals\n"
        "worker = pickle.loads(pickle.dumps(stop_signals._train_worker))\n"
        "early = 'tft_allennlp' in sys.modules\n"
        "import tft_allennlp, tft_host_patches\n"
        "print(json.dumps({'same': worker is stop_signals._train_worker, 'early': early,\n"
        "                  'replaced': tft_host_patches.replaced()}))\n"
    )
    result = json.loads(_output_lines(script)[-1])
    assert result["same"] is True and result["early"] is False
    assert ["allennlp.commands.train._train_worker", "stop_signals"] in result["replaced"]


def test_no_installer_imports_the_plugin_so_each_imports_alone():
    # An installer imports the plugin's checks where it uses them: importing one first (a
    # spawned worker's unpickling, a maintainer's shell) is no circular import, and importing
    # the plugin after them installs every patch.
    installers = sorted(
        path.stem
        for path in (PROJECT_ROOT / "tft_host_patches").glob("*.py")
        if path.stem != "__init__"
    )
    script = (
        "import importlib, json, sys\n"
        f"for name in {installers!r}:\n"
        "    importlib.import_module('tft_host_patches.' + name)\n"
        "early = sorted(name for name in sys.modules if name.startswith('tft_allennlp.'))\n"
        "import tft_allennlp, tft_host_patches\n"
        "print(json.dumps({'early': early, 'replaced': tft_host_patches.replaced()}))\n"
    )
    result = json.loads(_output_lines(script)[-1])
    assert len(installers) == 16 and "plugin" in installers
    assert result["early"] == []
    patches = {patch for _, patch in result["replaced"]}
    assert {"run_files", "untrusted_archives", "config_defaults", "allennlp_commands"} <= patches
