"""
The plugin's changes to AllenNLP 2.10.1 (its last release, with allennlp-models 2.10.1) and the
interpreter, in the order `install` applies them; `import tft_allennlp` calls it once. Each
patch's installer is its module in this package, named below, written against AllenNLP 2.10.1
and re-applied harmlessly (an `install` that finds its patch in place does nothing); what it puts
in place is the plugin's code it names. A patch is removed by deleting its line from `PATCHES`,
then its module here, then the tests named below. Every patch replaces through
`tft_host_patches.replace` under its module's name, so `tft_host_patches.replaced()` lists every
name replaced in a process, wrappers of one function in the order they nest
(`tests/host_patches/index_test.py` holds the list of an `allennlp train` process). What
AllenNLP needs of the Hugging Face stack, remote code and the edits of module state are in the
package's own index (`tft_host_patches/__init__.py`).

**Config variables and imports** (`config_defaults.py`; the plugin's `common/config_defaults.py`):
AllenNLP gives jsonnet the environment as `std.extVar`s, with no defaults, and the config's own
folder as its only import path. The plugin wraps `allennlp.common.params._environment_variables`
(its defaults under the environment) and `params.evaluate_file` (the package folder as a second
library path), so that `allennlp train training_configs/glue/mrpc.jsonnet` runs with nothing set.
Without it, every `TFT_*` variable must be set, and configs outside the checkout cannot import the
shipped ones (`tests/registration_test.py`, the config-defaults test).

**Shipped configs from any folder** (`config_defaults.py`; `shipped_config` in
`common/config_defaults.py`): AllenNLP 2.10.1's `Params.from_file` reads a config path only against
the current folder (through `cached_path`), so `allennlp train training_configs/glue/mrpc.jsonnet`
as the README writes it works only in the checkout. The plugin wraps
`allennlp.common.params.cached_path`, which only `Params.from_file` calls there (so `train`,
`find-lr`, `build-vocab` and `count-instances`; `evaluate` and `predict` take archives): a relative
`training_configs/...` path with no file of that name in the current folder is read from
`CONFIGS_ROOT`, with one line that says so. Remove by deleting that wrapping from
`config_defaults.install`, then `shipped_config` (`tests/common/shipped_configs_test.py`).

**A serialization directory a failed start left** (`serialization_dir.py`;
`training/serialization_dir.py`): AllenNLP's `allennlp.training.util.create_serialization_dir`
refuses any non-empty directory without `--recover` or `--force`, so a run that failed before
training blocked its own rerun, and its `--force` deletes a directory that holds the config's data.
The wrapper leaves the run's lock (below) out of what it reuses, clears or deletes. Remove when
AllenNLP reuses such a directory and checks what `--force` deletes
(`tests/training/serialization_dir_test.py`).

**Run files written atomically** (`run_files.py`): AllenNLP writes `config.json`, `meta.json`, the
vocabulary, the metrics files and `model.tar.gz` in place, so a killed run leaves them truncated and
`--recover` fails; it ignores config keys nothing reads. Wraps `Params.to_file`, `Meta.to_file`,
`Vocabulary.save_to_files`, `dump_metrics` (in `common.util`, `training.util`,
`evaluation.evaluator`), and `archive_model` and `train_model` of `allennlp.commands.train`. Remove
when AllenNLP writes them atomically (`tests/training/recovery_test.py`,
`tests/fault_campaign_test.py`).

**Stopping on a signal with a checkpoint** (`stop_signals.py`; `training/stop_signals.py`): AllenNLP
stops at once on SIGTERM or Ctrl-C, losing what was trained since the last checkpoint and archiving
the best epoch as if the run had ended. Wraps `GradientDescentTrainer.train` and `train_model` and
`_train_worker` of `allennlp.commands.train`; installed after the run files, so that its
`train_model` wraps theirs. Remove when AllenNLP's trainer checkpoints on a signal
(`tests/training/stop_signals_test.py`, `tests/training/recovery_test.py`).

**One run per serialization directory** (`serialization_dir.py`, `install_lock`; the lock in
`common/folder_lock.py`): AllenNLP takes no lock, so two `allennlp train` started together on one
directory both exited 0, one having cleared the other's first files as a failed start's, with one
run's `config.json` and the other's `metrics.json` left. Wraps `train_model` of
`allennlp.commands.train` in the directory's lock (`.tft-lock`), installed after the signals'
wrapper, so that it is taken before any other wrapper or AllenNLP looks at the directory; a second
run there is refused in one line naming the live one. Remove when AllenNLP locks it
(`tests/training/serialization_dir_test.py`, `tests/common/folder_lock_test.py`,
`benchmarks/run_folder_race.py`).

**The process group destroyed at exit** (`process_group.py`): AllenNLP's distributed workers never
destroy their process group, and with torch 2 a gloo worker that reaches interpreter shutdown with
one alive can abort after training has finished. Registers an exit handler (`atexit`) in every
process that imports the plugin. Remove when AllenNLP destroys the group itself
(`tests/host_patches/process_group_test.py`).

**No confidence-check hooks in a resumed run** (`confidence_checks.py`): AllenNLP's
`ConfidenceChecksCallback` hooks every module at the start and unhooks them after epoch 0's first
batch, which a run resumed with `--recover` never reaches: the hooks stay for the whole run, record
every module call, and send BERT-type encoders' first-token path another way, so a resumed run no
longer ends like an uninterrupted one. Replaces its `on_start` (no hooks when resuming). Remove when
AllenNLP skips the check on resumption (`tests/training/callbacks/rng_checkpoint_test.py`,
`tests/training/recovery_test.py`).

**A quiet terminal** (`console.py`; `common/console.py`): the `allennlp` command prints AllenNLP's
whole INFO log (parameter dumps, plugin chatter) and a traceback where one line would do. Wraps
`allennlp.common.logging.prepare_global_logging`, filters the terminal's handlers and some
third-party warnings (not with `TFT_VERBOSE=1`), and wraps `sys.excepthook` (and `train`'s, which
logs `CRITICAL: Uncaught exception` to the terminal) so that a mistake of the user's ends with one
line naming the log that keeps its traceback, in the `allennlp` command only. Remove to get
AllenNLP's own output back (`tests/console_test.py`, `tests/console_errors_test.py`).

**Progress bars that fit the terminal** (`progress.py`; `common/progress.py`): AllenNLP's
`Tqdm.tqdm` bars take no width from the terminal and their descriptions list every metric (138
characters for a GLUE run, 225 for an injection), so each carriage-return update wraps and leaves a
row behind (a one-epoch run: dozens of rows at 80 columns); an empty bar (`building vocab: 0it`)
draws itself twice; a log record written while a bar is open lands on the bar's line; and through a
pipe every update is a carriage return on one endless line. In the `allennlp` command, the plugin
replaces `allennlp.common.tqdm.Tqdm.tqdm` (a bar at most as wide as the terminal, nothing before its
first item, whole lines through a pipe), `allennlp.training.util.description_from_metrics` (the loss
and the main metric, which a wrapper of `GradientDescentTrainer._try_train` names from its
`validation_metric`) and wraps `allennlp.common.logging.prepare_global_logging` (the terminal's log
handlers clear the open bars before they write). Remove to get AllenNLP's bars back
(`tests/common/progress_test.py`, `tests/console_test.py`).

**`predict` and `evaluate` that never write over an input** (`allennlp_commands.py`;
`predictors/allennlp_commands.py`): AllenNLP opens an output file before it reads the input, so an
output that is the input empties it, `predict` reports a bad input line without its file and line,
and neither shows its results as a person reads them (`evaluate` prints no scores without
`--output-file`; `predict` prints `input 0: ...`/`prediction: ...` pairs). Replaces
`allennlp.commands.predict._PredictManager` and `_get_predictor`, and
`allennlp.commands.evaluate.evaluate_from_archive`. Remove when AllenNLP checks its outputs
(`tests/predictors/allennlp_commands_test.py`, `tests/console_errors_test.py`).

**Archives as untrusted input** (`untrusted_archives.py`; `common/untrusted_archives.py`,
`common/archive_extraction.py`): `load_archive` extracts every member with `tarfile` and no filter
or size bound, evaluates the archive's config as jsonnet (which can read files and variables, and
hang), builds any class a dotted name names, and loads weights with `torch.load` into the model,
cast to its dtypes. So an archive could write files, fill the disk, hang the command and run code.
Replaces `allennlp.models.archival.extracted_archive` (only the members loading reads, within a size
and ratio budget), `archival.Params` and `archival.Meta` (config and meta read as strict JSON),
`archival._load_model` and `allennlp.nn.util.read_state_dict` (weights as data, finite, fitting the
model), and wraps `Model.load_state_dict` (checked while an archive's model loads). Remove only with
a loader that does the same checks (`tests/common/untrusted_archives_test.py`,
`tests/common/archive_extraction_test.py`, docs/security.md).

**Loading the plugin in every `allennlp` command** (`tft_allennlp_autoload.py`, beside the package):
AllenNLP finds plugins only in `.allennlp_plugins`, `~/.allennlp/plugins` and three default names,
and allennlp-models tries to download nltk's data when it is imported. Not installed here: the
wheel's `tft_allennlp.pth` imports that module at start-up, before AllenNLP imports any plugin, and
it wraps `allennlp.common.plugins.discover_plugins` (the plugin, then the packages of its
`tft_allennlp.plugins` entry point), `allennlp.commands.import_plugins` (no nltk downloads, quiet)
and `ArgumentParserWithDefaults.error` (how to load the plugin). Remove with `setup.py`'s `.pth` and
`make setup`'s hook line (`tests/packaging_test.py`).

**Importing what a command needs** (`tft_allennlp_lazy/`, beside the package, installed by the same
hook): AllenNLP imports scikit-learn, `scipy.stats`, NLTK, spaCy, boto3 and torchvision
unconditionally (transformers 5's model code SciPy's solver and torchvision too), and its
`import_plugins` all of `allennlp` and allennlp-models, before any command. Their module bodies run
at first use, and the registered components import at the first registry lookup that misses
(`Registrable.resolve_class_name`, `list_available` and `_registry` are wrapped). Remove by deleting
its `install` call and `import_plugins_on_demand` in the autoload hook
(`tests/lazy_imports_test.py`, `benchmarks/startup_benchmark.py`).
"""

from typing import Callable, Tuple

from tft_host_patches import (
    allennlp_commands,
    confidence_checks,
    config_defaults,
    console,
    process_group,
    progress,
    run_files,
    serialization_dir,
    stop_signals,
    untrusted_archives,
)

PATCHES: Tuple[Callable[[], None], ...] = (
    config_defaults.install,
    serialization_dir.install,
    run_files.install,
    stop_signals.install,  # after run_files: its `train_model` wraps theirs
    serialization_dir.install_lock,  # after stop_signals: the lock is held around them all
    process_group.install,
    confidence_checks.install,
    console.install,
    progress.install,  # after console: its `prepare_global_logging` wraps console's
    allennlp_commands.install,
    untrusted_archives.install,
)
"""The installers, in the order they are applied."""


def install() -> None:
    """Applies every patch of `PATCHES` (each once per process)."""
    for patch in PATCHES:
        patch()
