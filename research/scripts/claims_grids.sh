#!/usr/bin/env bash
# Resumes issue 18's unfinished claims grids on a 2-core machine, one `--jobs 1` process per core,
# in the background (logs in runs/claims_logs/). Core 1 runs the 4-epoch size grid (the 1k cells
# of H1, H3 and "small beats large"), then the whole-training-set grid; core 2 the distant-task
# grid, then helps with the size grid (`--no-wait`: it leaves runs that wait for core 1's sweep
# runs), then the whole-set grid. Two processes on one grid share it through the runs' lock
# files. Finished runs are skipped, killed ones go on from their last checkpoint, runs other
# grids finished are taken from them (`reuse_from`).
# Needs `make setup` (.venv); the environment is research/scripts/grid_env.sh's.
#
#   bash research/scripts/claims_grids.sh        start
#   bash research/scripts/claims_grids.sh stop   stop: every run in training saves a checkpoint at its
#                                       batch first (SIGTERM), then all exit
set -euo pipefail
cd "$(dirname "$0")/../.."
source research/scripts/grid_group.sh
grid_group runs/claims_logs/claims_grids.pgid "$@"
source research/scripts/grid_env.sh
nohup bash -c 'grid claims_size_4ep_cpu; grid claims_whole_cpu' > /dev/null 2>&1 &
echo "core 1: claims_size_4ep_cpu, then claims_whole_cpu (pid $!)"
nohup bash -c 'grid claims_distant_cpu; grid claims_size_4ep_cpu --no-wait; grid claims_whole_cpu' \
  > /dev/null 2>&1 &
echo "core 2: claims_distant_cpu, claims_size_4ep_cpu's free runs, then claims_whole_cpu (pid $!)"
