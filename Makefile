# openxiv — common tasks. `make help` lists them.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
SHARED ?= $(abspath ../shared)
DATA ?= data
PORT ?= 8000
HOST ?= 127.0.0.1
# Package index of the torch wheel: the PyTorch CPU index, the same default as the Dockerfile and
# docker-compose.yml (tests/test_docker.py), so pip never picks a multi-GB CUDA build. Only torch
# comes from it (the version pinned by constraints-cpu.txt); its dependencies come from PyPI. Empty
# = PyPI (e.g. to bring your own build: make install TORCH_INDEX_URL=).
TORCH_INDEX_URL ?= https://download.pytorch.org/whl/cpu
# exit status 0 when the index answers at all within 3 s (any HTTP status; a TLS answer too, as pip
# may trust another CA bundle), through the proxy settings pip uses too; run once by `make install`
define TORCH_PROBE
import ssl, sys, urllib.error, urllib.request
try:
    urllib.request.urlopen(sys.argv[1], timeout=3)
except urllib.error.HTTPError:
    pass
except (OSError, ValueError) as exc:
    sys.exit(0 if isinstance(getattr(exc, "reason", exc), ssl.SSLError) else 1)
endef
export TORCH_PROBE
export OPENXIV_SHARED := $(SHARED)
# the embedding cache and other data-dir defaults follow DATA (e.g. make serve DATA=/srv/openxiv)
export OPENXIV_DATA_DIR := $(DATA)
export HF_HUB_OFFLINE := 1
# Infinity, the third-party model server of the `modelserver` tests and scripts/bench_modelserver.py:
# its own venv (its pins conflict with the product's), never the product's dependencies
INFINITY_VENV ?= .venv-infinity
ARB_VENV ?= .venv-arb
# Pyserini (Lucene BM25 through Anserini's fatjar) for scripts/bench_lucene.py and the `lucene` tests: its own
# venv, never the product's dependencies. 0.22.1 is the last release whose Anserini runs on Java 17
# (Debian bookworm's JDK; later ones need 21). --no-deps: its declared dependencies (torch, faiss,
# transformers, ...) serve its dense and neural parts; the Lucene index and searcher need pyjnius only
PYSERINI_VENV ?= .venv-pyserini

.PHONY: help install serve corpus index test lint test-heavy test-all test-fast test-float-paths bench demo clean docs compose-smoke infinity-venv test-modelserver arb-venv test-arb pyserini-venv test-lucene

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | column -t -s "$$(printf '\t')"

$(BIN)/openxiv: pyproject.toml setup.py constraints-cpu.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# CPU torch first, pinned by constraints-cpu.txt, so nothing pulls a multi-GB CUDA build. One short
	# probe of TORCH_INDEX_URL first: when it cannot be reached (an offline machine whose pip finds the
	# wheel in its find-links), pip would retry it for seconds before using that wheel; --no-index goes
	# straight to the local wheels (and fails as before when there is none)
	@if [ -z "$(TORCH_INDEX_URL)" ]; then src=""; \
	elif $(PYTHON) -c "$$TORCH_PROBE" "$(TORCH_INDEX_URL)"; then src="--index-url $(TORCH_INDEX_URL)"; \
	else echo "$(TORCH_INDEX_URL) cannot be reached: torch from pip's local wheels (find-links) only"; src="--no-index"; fi; \
	echo "$(BIN)/pip install --quiet --no-deps -c constraints-cpu.txt $$src torch"; \
	$(BIN)/pip install --quiet --no-deps -c constraints-cpu.txt $$src torch
	# every extra: torch (index builds with MiniLM), pdf (the PDF reader), bench, dev (tests, lint, docs)
	$(BIN)/pip install --quiet -c constraints-cpu.txt -e ".[torch,pdf,dev,bench]"
	@touch $(BIN)/openxiv

install: $(BIN)/openxiv  ## create .venv and install openxiv with the CPU torch

# `openxiv ingest` exits 3 when it finished but skipped some input (../shared holds 7 broken PDFs on
# purpose): that is a success here, its summary lists what was skipped. Any other non-zero status fails.
corpus: install  ## ingest everything in ../shared into $(DATA)/corpus.sqlite
	$(BIN)/openxiv ingest --db $(DATA)/corpus.sqlite --skip-unchanged $(SHARED)/data/corpus $(SHARED)/data/fulltext $(SHARED)/data/pdfs \
		|| [ $$? -eq 3 ]

index: corpus  ## build an index snapshot of the corpus into $(DATA)/index
	$(BIN)/openxiv index build --db $(DATA)/corpus.sqlite --index $(DATA)/index --if-changed

serve: index  ## install, ingest ../shared, build the index and serve it on $(HOST):$(PORT)
	$(BIN)/openxiv serve --index $(DATA)/index --host $(HOST) --port $(PORT)

lint: install  ## ruff (lint + format check) and mypy
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@# type-check the parts as the `openxiv.*` package they install as, so imports between them are
	@# checked too (the folders alone would leave every `openxiv.` import unresolved, i.e. Any)
	@mkdir -p build/typecheck/openxiv && for p in corpus indexer service evaluator; do ln -sfn ../../../$$p build/typecheck/openxiv/$$p; done
	MYPYPATH=build/typecheck $(BIN)/mypy -p openxiv
	@# the scripts too, against the same package: each script and harness/ as top-level modules
	MYPYPATH=build/typecheck:scripts $(BIN)/mypy scripts

# --durations=25: CI's log names the slowest tests of each landing
test: lint  ## lint, type-check and run the default test suite
	$(BIN)/pytest -q --durations=25

test-heavy: install  ## the heavy tests: full-corpus builds
	$(BIN)/pytest -q -m heavy

test-all: install  ## every test: the default suite, the extended variants and the heavy tests
	$(BIN)/pytest -q -m ""

infinity-venv:  ## Infinity (infinity-emb, a model server from PyPI) in its own venv $(INFINITY_VENV)
	test -x $(INFINITY_VENV)/bin/infinity_emb || ($(PYTHON) -m venv $(INFINITY_VENV) && \
		$(INFINITY_VENV)/bin/pip install "infinity-emb[server,torch]==0.0.78" torch==2.13.0)

test-modelserver: install infinity-venv  ## the tests against a real model server (Infinity on loopback)
	OPENXIV_TEST_INFINITY_VENV=$(abspath $(INFINITY_VENV)) $(BIN)/pytest -q -m modelserver

arb-venv:  ## the AutoResearchBench agent's packages (its requirements.txt, from PyPI) in their own venv $(ARB_VENV); ARB_DIR = its checkout
	test -n "$(ARB_DIR)" -a -f "$(ARB_DIR)/requirements.txt" || (echo "set ARB_DIR to a checkout of github CherYou/AutoResearchBench" && false)
	test -x $(ARB_VENV)/bin/python || $(PYTHON) -m venv $(ARB_VENV)
	$(ARB_VENV)/bin/pip install --quiet -r $(ARB_DIR)/requirements.txt

pyserini-venv:  ## Pyserini 0.22.1 (Lucene BM25; needs a JDK 11 or 17: `java` on PATH) in its own venv $(PYSERINI_VENV)
	test -x $(PYSERINI_VENV)/bin/python || $(PYTHON) -m venv $(PYSERINI_VENV)
	$(PYSERINI_VENV)/bin/pip install --quiet --no-deps pyserini==0.22.1 pyjnius==1.9.0

test-lucene: install pyserini-venv  ## the tests that index and search with real Lucene (Pyserini) beside openxiv
	OPENXIV_PYSERINI_VENV=$(abspath $(PYSERINI_VENV)) $(BIN)/pytest -q -m lucene

test-arb: install arb-venv  ## the experiments tests with the unmodified AutoResearchBench agent (tests/service/experiments/test_agents_live.py, tests/evaluator/test_ledger_arb.py)
	OPENXIV_TEST_ARB_DIR=$(abspath $(ARB_DIR)) OPENXIV_TEST_ARB_PYTHON=$(abspath $(ARB_VENV))/bin/python \
		$(BIN)/pytest -q tests/service/experiments/test_agents_live.py tests/evaluator/test_ledger_arb.py

test-fast: install  ## the inner loop: every test but the slow kinds (live server, model, browser, Ray, Milvus)
	$(BIN)/pytest -q -m "not slow"

# the float-comparing tests again on every FAISS / OpenBLAS / onnxruntime / torch code path this CPU
# can select (docs/indexing.md, «Dense scores across CPUs»); a table of what each path gave
test-float-paths: install  ## float-comparing tests on each SIMD/BLAS/onnxruntime path this CPU offers
	$(BIN)/python scripts/check_float_paths.py

bench: install  ## all benchmark scripts; results land in BENCHMARKS.md
	$(BIN)/python scripts/run_benchmarks.py

demo: install  ## the whole loop: ingest, index, serve, baseline agent, evaluation report
	$(BIN)/openxiv demo --data $(DATA) --shared $(SHARED)

clean:  ## remove the data directory (corpus and index), keep the venv
	rm -rf $(DATA)

compose-smoke:  ## docker compose end to end on a small cut of ../shared (scripts/check_compose_smoke.sh; root, ~5 min)
	scripts/check_compose_smoke.sh

docs: install  ## regenerate README's configuration table and docs/cli.md (checked by tests/test_docs.py)
	$(BIN)/cog -r README.md docs/cli.md
