"""
Makes every `allennlp` command of an environment where tft-allennlp is installed load the
plugin, from any folder, as if `tft_allennlp` were listed in `.allennlp_plugins` (AllenNLP finds
plugins only through that file, `~/.allennlp/plugins`, or its own three default names).

The wheel installs `tft_allennlp.pth`, which Python runs at start-up and which imports this
module. It imports nothing heavy: it only adds an import hook that acts once, when AllenNLP's
command line (`allennlp.commands`) is imported, and then

- adds `tft_allennlp` to the plugins that `import_plugins` loads, and after it every package
  installed under the `tft_allennlp.plugins` entry point (the experiment harness,
  `tft_experiments`, declares itself there);
- while the plugins load, skips allennlp-models' download of nltk's punkt and wordnet (which it
  attempts at import, and which fails offline with 8 lines of errors; the plugin does not use
  them) and, unless `TFT_VERBOSE=1`, its `pkg_resources` deprecation warning and the
  "Plugin ... available" lines;
- makes `invalid choice: 'tft-...'` say how to load the plugin when it is not loaded.

`TFT_ALLENNLP_AUTOLOAD=0` turns the loading off (the other two still apply).

A wheel carries the `.pth` file (setup.py writes it); an editable install (`pip install -e .`, as
`make setup` does) leaves it out, and `python -m tft_allennlp_autoload` writes it into the
interpreter's site-packages.
"""

import contextlib
import os
import sys
import types
import warnings
from typing import Any, Iterator, Optional

try:
    import tft_allennlp_lazy
    import tft_host_patches
    from tft_host_patches import import_hooks
except ImportError:  # an editable install made before the modules existed: rerun `make setup`
    tft_allennlp_lazy = None  # type: ignore[assignment]
    tft_host_patches = None  # type: ignore[assignment]

PLUGIN = "tft_allennlp"
PATCH = "autoload"  # the name of its patches of AllenNLP (`tft_host_patches.replaced()`)
SWITCH = "TFT_ALLENNLP_AUTOLOAD"
# Packages that extend the plugin's commands declare themselves under this entry point group.
ENTRY_POINTS = "tft_allennlp.plugins"
# The start-up hook: a `.pth` file in site-packages whose one line Python runs at start-up.
HOOK = ("tft_allennlp.pth", "import tft_allennlp_autoload\n")


def autoload() -> bool:
    return os.environ.get(SWITCH, "1").strip().lower() not in ("0", "false", "no")


def _verbose() -> bool:
    flag = os.environ.get("TFT_VERBOSE", "").strip().lower()
    return flag not in ("", "0", "false", "no") or any(
        name in os.environ for name in ("ALLENNLP_LOG_LEVEL", "ALLENNLP_DEBUG")
    )


def plugin_hint() -> str:
    """How to load the plugin, for `invalid choice: 'tft-...'`."""
    why = (
        f"{SWITCH}=0 turns its loading off"
        if not autoload()
        else "it could not be imported (see the error above)"
    )
    return (
        f"the tft-* commands come from the {PLUGIN} plugin, which is not loaded: {why}. Load it "
        f"with a line '{PLUGIN}' in ./.allennlp_plugins or ~/.allennlp/plugins, or unset {SWITCH}."
    )


def _patch(commands: types.ModuleType) -> None:
    from allennlp.common import plugins

    discover = plugins.discover_plugins

    def discover_plugins() -> Iterator[str]:
        found = list(discover())
        yield from found
        if autoload():
            for name in [PLUGIN, *_entry_point_plugins()]:
                if name not in found:
                    found.append(name)
                    yield name

    tft_host_patches.replace(plugins, "discover_plugins", discover_plugins, patch=PATCH)
    import_plugins = commands.import_plugins

    def quiet_import_plugins() -> None:
        download = _stop_nltk_downloads()
        try:
            with _quiet_plugin_loading():
                import_plugins()
        finally:
            if download is not None:
                import nltk

                nltk.download = download

    if tft_allennlp_lazy is not None and tft_allennlp_lazy.enabled():
        on_demand = tft_allennlp_lazy.import_plugins_on_demand(quiet_import_plugins)

        def import_plugins_quietly() -> None:
            with _quiet_plugin_loading():
                on_demand()

        loader = import_plugins_quietly
    else:
        loader = quiet_import_plugins
    # AllenNLP binds the name in three modules: the command line, `train` (its distributed
    # workers) and `plugins` (`Predictor.from_archive`).
    tft_host_patches.replace(commands, "import_plugins", loader, patch=PATCH)
    tft_host_patches.replace(plugins, "import_plugins", loader, patch=PATCH)
    train = sys.modules.get("allennlp.commands.train")
    if train is not None:
        tft_host_patches.replace(train, "import_plugins", loader, patch=PATCH)
    parser_class = commands.ArgumentParserWithDefaults
    error = parser_class.error

    def error_with_hint(self: Any, message: str) -> None:
        if "invalid choice: 'tft-" in message and PLUGIN not in sys.modules:
            message = f"{message}\n{plugin_hint()}"
        error(self, message)

    tft_host_patches.replace(parser_class, "error", error_with_hint, patch=PATCH)


@contextlib.contextmanager
def _quiet_plugin_loading() -> Iterator[None]:
    """Without `TFT_VERBOSE=1`: no "Plugin ... available" lines, no pkg_resources warning."""
    import logging

    plugin_logger = logging.getLogger("allennlp.common.plugins")
    level = plugin_logger.level
    if not _verbose():
        # Not in `catch_warnings`, which would also undo the filters the plugin adds.
        warnings.filterwarnings("ignore", message="pkg_resources is deprecated")
        plugin_logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        plugin_logger.setLevel(level)


def _entry_point_plugins() -> Iterator[str]:
    """The packages installed under the `tft_allennlp.plugins` entry point."""
    from importlib.metadata import entry_points

    for entry_point in entry_points(group=ENTRY_POINTS):
        yield entry_point.value


def _stop_nltk_downloads() -> Optional[Any]:
    """Replaces `nltk.download` by a no-op; returns the original (None without nltk)."""
    try:
        import nltk
    except ImportError:
        return None
    download = nltk.download

    def no_download(*args: Any, **kwargs: Any) -> bool:
        return False

    nltk.download = no_download
    return download


def install() -> None:
    """Adds the import hooks (once); what `tft_allennlp.pth` runs."""
    if tft_host_patches is not None:
        tft_host_patches.install_at_startup()
    if tft_allennlp_lazy is not None:
        tft_allennlp_lazy.install()
    if tft_host_patches is not None:
        # Patches AllenNLP's command line once it has run (at once if it has).
        import_hooks.after_import("allennlp.commands", _patch)


def write_hook(folder: Optional[str] = None) -> str:
    """
    Writes the start-up hook into `folder`, by default this interpreter's site-packages, and
    returns its path.
    """
    if folder is None:
        import sysconfig

        folder = sysconfig.get_paths()["purelib"]
    name, line = HOOK
    path = os.path.join(folder, name)
    with open(path, "w") as handle:
        handle.write(line)
    return path


install()

if __name__ == "__main__":
    print(f"wrote {write_hook(*sys.argv[1:2])}")
