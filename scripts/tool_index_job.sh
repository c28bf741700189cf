#!/bin/sh
# The indexer job of the Docker image (installed as `openxiv-index-job`; docker-compose.yml's `indexer`):
# ingest the shared data folders, then build the index when the corpus or the settings changed.
#
#   openxiv-index-job [extra `openxiv index build` options]
#
# Input files unchanged since the last ingest into this database (size and mtime, or content hash)
# are not read again (`--skip-unchanged`). Ingest exit 3 (finished, some input skipped: ../shared
# holds broken PDFs on purpose) counts as done; any other failure stops the job.
# Environment: OPENXIV_SHARED (default /shared; its data/corpus, data/fulltext, data/pdfs that exist
# are read), OPENXIV_DATA_DIR (/data: corpus.sqlite), OPENXIV_INDEX_DIR (/data/index).
set -u
shared="${OPENXIV_SHARED:-/shared}"
db="${OPENXIV_DATA_DIR:-/data}/corpus.sqlite"
index="${OPENXIV_INDEX_DIR:-${OPENXIV_DATA_DIR:-/data}/index}"
inputs=""
for sub in corpus fulltext pdfs; do
    [ -e "$shared/data/$sub" ] && inputs="$inputs $shared/data/$sub"
done
if [ -z "$inputs" ]; then
    echo "openxiv-index-job: nothing to ingest under $shared/data (corpus, fulltext, pdfs)" >&2
    exit 1
fi
# shellcheck disable=SC2086  # the input paths are split on purpose
openxiv ingest --db "$db" --skip-unchanged $inputs
status=$?
if [ "$status" -ne 0 ] && [ "$status" -ne 3 ]; then
    exit "$status"
fi
exec openxiv index build --db "$db" --index "$index" --if-changed "$@"
