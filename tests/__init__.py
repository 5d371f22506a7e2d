import pathlib

PROJECT_ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES_ROOT = PROJECT_ROOT / "fixtures"
CONFIGS_ROOT = PROJECT_ROOT / "training_configs"
