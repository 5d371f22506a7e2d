"""
Makes the `allennlp` command import what a command needs when it needs it. AllenNLP 2.10.1 (its
last release) imports, before any command runs, about 4 seconds of modules that the plugin's
commands, `train`, `evaluate` and `predict` never use, in two ways:

- **Modules its own modules import unconditionally** for one rarely used part: scikit-learn and
  `scipy.stats` (AllenNLP's AUC and Spearman metrics), NLTK (the EVALB metric's `Tree`), spaCy (its
  tokenizer and `TextField`'s `isinstance` check), boto3 (cached-path's S3 client), torchvision
  (its image loader); two that transformers 5's model code imports for parts no text encoder runs:
  SciPy's assignment solver and, again, torchvision; and BERT's model code, from which AllenNLP's
  transformer toolkit takes only the table of activations, and peft, which transformers' Trainer
  utilities import where it is installed: both import transformers 5's model loading (tensor
  parallelism, torch's compiler: 4 s). `DEFERRED` names them; importing one gives a module whose
  body runs at the first attribute looked up on it (Python's PEP 562 module `__getattr__`), so
  `scipy.stats.spearmanr(...)` imports SciPy's statistics when a Spearman metric first computes.
  Bodies run in the order an eager import runs them: a package's before its submodules', and
  importing a submodule of a deferred package runs the package first (except where
  `submodules_first` says it need not: `from nltk import Tree` imports `nltk.tree` alone, the same
  object; `import torchvision.transforms` imports that alone). The names that AllenNLP's and
  transformers' modules import at import time and use only later (spaCy's `Token`, `Doc`,
  `Language`, `download`, SciPy's `linear_sum_assignment`, BERT's `ACT2FN`, peft's `PeftModel`) are
  stand-ins until their module runs: a call imports it and calls the real one, `isinstance(x,
  Token)` is false while spaCy's token module has not run (nothing can be an instance of it) and
  the real check after; once the module runs, those modules bind its real objects. This is safe
  because these packages do nothing at import that a user relies on without looking an attribute up
  on them; any attribute, `dir()` or `from ... import *` runs the body, and an error in it is
  raised as an `ImportError` at that point.
- **Every registered component at start-up**: AllenNLP's `import_plugins` imports all of
  `allennlp` and all of allennlp-models, so that any registered name resolves from a config.
  `import_plugins` here imports the plugins (the plugin, `tft_allennlp.plugins` entry points,
  `.allennlp_plugins` files) and leaves those two to the first registry lookup that misses: a
  name not registered yet, a listing of the names, a base class with none registered. The
  lookup then imports them (AllenNLP's own `import_plugins`) and answers as if they had always
  been there, so a config naming an allennlp-models model or an AllenNLP component outside the
  command's imports still works, and an unknown name's error lists every name. Subcommands are
  exempt: all of AllenNLP's are imported with `allennlp.commands`, and allennlp-models
  registers none.

And a third, at the other end: the command exits without a last garbage collection over all it
imported (`quick_exit`, whose docstring says what that gives up).

It applies only to processes that import `allennlp`, from the first `import allennlp` on (the
`tft_allennlp.pth` start-up hook installs it through `tft_allennlp_autoload`), and only to the
registry of the `allennlp` command (`tft_allennlp_autoload` hands it `import_plugins`).
`TFT_LAZY_IMPORTS=0` turns all three off. `benchmarks/startup_benchmark.py` measures what they
save. `deferred_modules` holds the first, `registry` the second, `quick_exit` the third.
"""

import os

from tft_allennlp_lazy import quick_exit
from tft_allennlp_lazy.deferred_modules import DEFERRED, install_finder, is_deferred
from tft_allennlp_lazy.registry import complete_registry, import_plugins_on_demand

__all__ = [
    "DEFERRED",
    "SWITCH",
    "complete_registry",
    "enabled",
    "import_plugins_on_demand",
    "install",
    "is_deferred",
]

SWITCH = "TFT_LAZY_IMPORTS"


def enabled() -> bool:
    """Whether `TFT_LAZY_IMPORTS` leaves deferral on (the default)."""
    return os.environ.get(SWITCH, "1").strip().lower() not in ("0", "false", "no")


def install() -> None:
    """Adds the deferring import hook and the quick exit (once, where enabled);
    `tft_allennlp_autoload` calls it at start-up."""
    if enabled():
        install_finder()
        quick_exit.install()
