#!/usr/bin/env bash
# Runs the multi-source injection grids (research/specs/claims_multisource*.jsonnet,
# claims_domain_cpu.jsonnet, alignment_multisource_cpu.jsonnet) in the background, resumably, one
# `--jobs 1` process per core given (default 1), niced so that interactive work on the machine keeps
# priority. Finished runs are skipped, a killed injection goes on from its last checkpoint (one
# every 30 minutes), runs other grids finished are taken from them (`reuse_from`). Logs in
# runs/claims_logs/. Needs `make setup` (.venv); the environment is research/scripts/grid_env.sh's.
#
#   bash research/scripts/multisource_grids.sh [PROCESSES]   start
#   bash research/scripts/multisource_grids.sh stop          stop: every run in training saves a checkpoint
#                                                   at its batch first (SIGTERM), then all exit
set -euo pipefail
cd "$(dirname "$0")/../.."
source research/scripts/grid_group.sh
grid_group runs/claims_logs/grids.pgid "$@"
processes=${1:-1}
source research/scripts/grid_env.sh
bash research/scripts/multisource_corpora.sh

# In order of what the verdicts need most: the 1k grid (H1 with 10 seeds, distant tasks), size
# against domain, the two aligners, small against large. The whole training sets
# (claims_multisource_whole_cpu) are cut: their 74k injection takes longer than a session's
# machine lives (research/results/claims_multisource_cpu/README.md, Status). The first
# process takes the injections in order, one at a time: an injection on the 74k-pair corpus peaks
# at about 10 GB (benchmarks/RESULTS.md, "Injection memory"), so two would not fit in 23 GB. The
# others start no injection (`--no-injections`): first the runs that wait for none (`--no-wait`),
# then the fine-tunings of what the first one injects.
grids=(claims_multisource_cpu claims_domain_cpu alignment_multisource_cpu claims_multisource_size_cpu)
nohup nice -n 10 bash -c "for g in ${grids[*]}; do grid \$g; done" > /dev/null 2>&1 &
echo "process 1: ${grids[*]} (pid $!)"
for ((i = 2; i <= processes; i++)); do
  sleep 60
  nohup nice -n 10 bash -c "for g in ${grids[*]}; do grid \$g --no-wait --no-injections; done
    for g in ${grids[*]}; do grid \$g --no-injections; done" \
    > /dev/null 2>&1 &
  echo "process $i: the same without injections, free runs first (pid $!)"
done
