#!/usr/bin/env bash
# Runs issue 73's tuned comparison (research/specs/tuned_cpu.jsonnet) in the background,
# resumably, one `--jobs 1` process per core given (default 1), niced. The grid runs from a
# frozen copy of the last commit (/tmp/tuned_grid/tree, `git archive HEAD`) in /tmp/tuned_grid,
# whose `runs` is this repository's: work on the working tree never reaches a run in flight, and
# every session resumes with the same paths. Finished runs are skipped, a killed run goes on from
# its last checkpoint. The first process injects (`tft_multi` on the 74k corpus peaks at about
# 10 GB: one at a time); the others start no injection (`--no-injections`), the runs that wait
# for none first (`--no-wait`). Logs in runs/claims_logs/tuned_cpu.log. Needs `make setup`.
#
#   bash research/scripts/tuned_grid.sh [PROCESSES]   start
#   bash research/scripts/tuned_grid.sh PROCESSES --no-injections   start, none of them injecting
#   bash research/scripts/tuned_grid.sh stop          stop: every run in training saves a
#                                                     checkpoint at its batch first (SIGTERM)
# Then `bash research/scripts/stage_finished_runs.sh research/results/tuned_cpu/experiment`.
set -euo pipefail
cd "$(dirname "$0")/../.."
source research/scripts/grid_group.sh
grid_group runs/claims_logs/tuned.pgid "$@"
processes=${1:-1}
only_free=${2:-}
source research/scripts/grid_env.sh
bash research/scripts/multisource_corpora.sh syntactic

repo=$PWD
frozen=/tmp/tuned_grid
rm -rf "$frozen/tree"
mkdir -p "$frozen/tree"
git archive HEAD | tar -x -C "$frozen/tree"
ln -sfn "$repo/runs" "$frozen/runs"
export PYTHONPATH=$frozen/tree:$frozen/tree/harness
export TFT_EXPERIMENT_DIR=$repo/research/results/tuned_cpu/experiment
GLUE_DIR=$(realpath "$GLUE_DIR")
log=$repo/runs/claims_logs/tuned_cpu.log
cd "$frozen"
run="allennlp tft-experiment tree/research/specs/tuned_cpu.jsonnet --jobs 1"
first=2
if [[ $only_free != --no-injections ]]; then
  nohup nice -n 10 $run >> "$log" 2>&1 &
  echo "process 1: the grid, injections included (pid $!)"
else
  first=1
fi
for ((i = first; i <= processes; i++)); do
  ((i == 1)) || sleep 60
  nohup nice -n 10 bash -c "$run --no-injections --no-wait; $run --no-injections" \
    >> "$log" 2>&1 &
  echo "process $i: the runs that need no injection first (pid $!)"
done
