#!/usr/bin/env bash
# The gate example with the command line only: what examples/gate/github-workflow.yml runs.
# From the repository root:  bash examples/gate/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
EVALKIT="${EVALKIT:-.venv/bin/evalkit}"
PYTHON="${PYTHON:-.venv/bin/python}"
OUT=examples/gate/out

# 1. The candidates: both example systems, scored and saved as run artifacts.
"$PYTHON" examples/vaswani/main.py --out "$OUT/runs" --resamples 1000 >/dev/null

# 2. The baseline is stored in the repository (examples/gate/baseline.jsonl). It was made
#    from the reference BM25 run with:
#      evalkit eval examples/vaswani/data/runs/run.vaswani.bm25.txt \
#        --qrels examples/vaswani/data/qrels -m ap,ndcg@10,P@10,R@100,rr \
#        --name reference-bm25 --save "$OUT/reference.jsonl"
#      evalkit baseline promote "$OUT/reference.jsonl" --to examples/gate/baseline.jsonl \
#        --drop-rankings
"$EVALKIT" baseline show examples/gate/baseline.jsonl

# 3. Gate each candidate; exit 0 = pass, 1 = a blocking check failed, 2 = cannot judge.
#    Each gated run is also recorded in a run history (docs/history.md).
rm -f "$OUT/history.sqlite" "$OUT/history.sqlite-wal" "$OUT/history.sqlite-shm"
status=0
for name in bm25 tfidf; do
  echo
  echo "== $name =="
  "$EVALKIT" gate --checks examples/gate/checks.yaml --run "$OUT/runs/$name.jsonl" \
    --baseline examples/gate/baseline.jsonl \
    --report "junit:$OUT/reports/$name.xml" --report "markdown:$OUT/reports/$name.md" \
    --report "history:$OUT/history.sqlite" \
    || status=$?
  echo "exit code: $status"
  status=0
done

# 4. The history: both gated runs, and the step from the first to the second.
echo
"$EVALKIT" history show --db "$OUT/history.sqlite" -m ndcg@10 -m ap
