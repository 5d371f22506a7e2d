# Sourced first by the background grid scripts (claims_grids.sh, multisource_grids.sh): the
# process group that holds a grid's processes, and `stop` for it.
#
#   grid_group GROUP_FILE "$@"
#
# With the script's first argument `stop`, signals the group recorded in GROUP_FILE with SIGTERM
# (every run in training saves a checkpoint at its batch, then exits; docs/recovery.md), waits
# for all of it to end, and exits. Otherwise, unless that group still runs (then it exits 1: a
# second start would leave the first group out of `stop`'s reach), makes this script lead a
# process group of its own (it runs itself again under `setsid` where it does not: started from
# another script, it would share that script's group, which `stop` would end too) and records
# the group in GROUP_FILE.
grid_group() {
  local group_file=$1
  shift
  local group
  group=$(cat "$group_file" 2> /dev/null) || group=""
  # A stale file may name a group id the system has given to something else since.
  if [[ -n $group ]] && ! pgrep -g "$group" -f "tft-experiment|allennlp" > /dev/null; then
    group=""
  fi
  if [[ ${1:-} == stop ]]; then
    if [[ -z $group ]]; then
      echo "no grid runs (${group_file})"
      exit 0
    fi
    kill -TERM -- "-$group"
    while pgrep -g "$group" > /dev/null; do sleep 2; done
    echo "stopped group $group"
    exit 0
  fi
  if [[ -n $group && $group != "$$" ]]; then
    echo "a grid already runs (process group $group): bash $0 stop, then start it again" >&2
    exit 1
  fi
  if [[ $(ps -o pgid= $$ | tr -d ' ') != "$$" ]]; then
    # From the repository root, where the grid scripts run.
    exec setsid bash "research/scripts/${0##*/}" "$@"
  fi
  mkdir -p "$(dirname "$group_file")"
  echo $$ > "$group_file"
}
