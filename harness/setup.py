"""
tft-experiments: the experiment harness of tft-allennlp (`allennlp tft-experiment`), installed
beside the plugin: `pip install ./harness` (or the plugin's extra, `tft-allennlp[experiments]`,
from a folder that holds both wheels: `make wheels`). The requirements are what the harness
itself imports; the plugin brings the rest of the stack.
"""

import os

from setuptools import find_packages, setup

HERE = os.path.dirname(os.path.abspath(__file__))

setup(
    name="tft-experiments",
    version="0.1.0",
    description="Resumable grids of transfer fine-tuning and its baselines, with paired statistics",
    long_description=open(os.path.join(HERE, "README.md"), encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    packages=find_packages(HERE, include=["tft_experiments", "tft_experiments.*"]),
    # The example spec (docs/experiments.md); this project's own grids are research/specs/.
    package_data={"tft_experiments": ["specs/*.jsonnet"]},
    python_requires=">=3.11",
    install_requires=["tft-allennlp==0.1.0", "numpy", "scipy", "matplotlib"],
    # The plugin's start-up hook loads every package of this group into the `allennlp` command.
    entry_points={"tft_allennlp.plugins": ["tft_experiments = tft_experiments"]},
)
