#!/usr/bin/env bash
# Prepares the GPU device check (README.md beside this file), here, with the network:
# downloads the cp312 manylinux wheels of benchmarks/gpu/carried.txt (versions from
# requirements-py312.lock.txt) into benchmarks/gpu/kit/wheels, builds the pure-Python ones that
# PyPI has only as source, writes the BERT-base configuration with the real uncased vocabulary
# and the tiny BERT (checkpoints.py), and checks that the kit stays under 60 MiB.
# Usage: bash benchmarks/gpu/prepare.sh   (PYTHON: a project venv's python, default .venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/../.."
python=${PYTHON:-.venv/bin/python}
kit=benchmarks/gpu/kit
lock=requirements-py312.lock.txt
limit_mib=60

pins=()
while read -r name; do
  pin=$(grep -i "^${name//[-_]/[-_]}==" "$lock") || { echo "prepare.sh: $name is not in $lock" >&2; exit 1; }
  pins+=("$pin")
done < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' benchmarks/gpu/carried.txt | grep .)

rm -rf "$kit"
mkdir -p "$kit/wheels"
platforms=(--platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64)
for pin in "${pins[@]}"; do
  if ! "$python" -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
      --implementation cp --abi cp312 --abi abi3 --abi none "${platforms[@]}" \
      -d "$kit/wheels" "$pin" 2>/dev/null; then
    # No wheel on PyPI (fairscale): build it from source, and carry it only if it is pure Python.
    "$python" -m pip wheel --quiet --no-deps --no-binary=:all: -w "$kit/wheels" "$pin"
  fi
done
for wheel in "$kit"/wheels/*.whl; do
  case "$wheel" in
    *-none-any.whl|*-cp312-*manylinux*.whl|*-abi3-*manylinux*.whl) ;;
    *) echo "prepare.sh: $wheel would not install on the GPU machine (cp312 manylinux)" >&2; exit 1 ;;
  esac
done
"$python" benchmarks/gpu/checkpoints.py prepare "$kit"

count=$(ls "$kit"/wheels/*.whl | wc -l)
size=$(du -sb "$kit" | cut -f1)
echo "kit: $count wheels, $(du -sb "$kit/wheels" | cut -f1) bytes of wheels, $size bytes in all" \
  "($(( size / 1048576 )) MiB; limit $limit_mib MiB)"
if (( size >= limit_mib * 1048576 )); then
  echo "prepare.sh: $kit is over $limit_mib MiB: it would not travel to the GPU machine" >&2
  exit 1
fi
