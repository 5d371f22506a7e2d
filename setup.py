"""
tft-allennlp: transfer fine-tuning with paraphrasal relation injection, as an AllenNLP plugin.

Install with `make setup` (see README): AllenNLP 2.10.1 declares pins (torch<1.13,
transformers<4.21, spacy<3.4) that cannot install on Python 3.11, so it is installed without
its dependencies and the verified stack comes from `requirements.txt`. The requirements below
are what the plugin itself imports, left loose so that pip never reaches for other releases.
"""

import os
import sys

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

# Python runs the line of site-packages' tft_allennlp.pth at start-up: it loads the plugin into
# every `allennlp` command of the environment (tft_allennlp_autoload.py says how, and how not to).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tft_allennlp_autoload import write_hook  # noqa: E402


class BuildWithAutoload(build_py):
    """Also writes `tft_allennlp.pth` beside the packages, so that it lands in site-packages."""

    def run(self) -> None:
        super().run()
        write_hook(self.build_lib)


setup(
    name="tft-allennlp",
    version="0.1.0",
    description="Transfer fine-tuning (Arase & Tsujii, 2019) as an AllenNLP plugin",
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    packages=find_packages(
        include=["tft_allennlp", "tft_allennlp.*", "tft_allennlp_lazy", "tft_host_patches"]
    ),
    py_modules=["tft_allennlp_autoload"],
    cmdclass={"build_py": BuildWithAutoload},
    # The configs are package data, so that `allennlp train` and `allennlp tft-configs` find them
    # in a wheel; the learned aligner's trained scorers and tft-show's style and script too.
    package_data={
        "tft_allennlp": [
            "training_configs/*/*.jsonnet",
            "training_configs/*/*.libsonnet",
            "alignment/scorers/*.json",
            "viewer/page.css",
            "viewer/page.js",
        ]
    },
    python_requires=">=3.11",
    # What the plugin imports. `datasets` is imported only to read GLUE from Hugging Face
    # datasets, `sentence_transformers` only by users loading a --sentence-transformers export.
    install_requires=[
        "allennlp==2.10.1",
        "torch",
        "transformers",
        "numpy",
        "scipy",
        "scikit-learn",
        "spacy",
        "datasets",
        "safetensors",
        "peft",  # the `lora` adapters
        "optuna",  # allennlp tft-tune
    ],
    # The experiment harness (`allennlp tft-experiment`) is a package of its own, `harness/`:
    # `pip install tft-allennlp[experiments]` where both wheels are (`make wheels`).
    # `tracking`: the experiment trackers' packages that trainer callbacks import (the `mlflow`
    # and `wandb` callbacks'); a config naming one without it stops in one line that names
    # this extra.
    extras_require={
        "experiments": ["tft-experiments==0.1.0"],
        "tracking": ["mlflow", "wandb"],
    },
)
