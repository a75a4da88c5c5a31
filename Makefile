VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test lint run install clean

$(PY):
	python3 -m venv $(VENV)

$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy memory

test: lint
	$(VENV)/bin/pytest

run: $(STAMP)
	@test -f config.toml || { cp config.example.toml config.toml; echo "created config.toml from config.example.toml"; }
	$(VENV)/bin/echo-bot --config config.toml run

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache

BENCH_STAMP := $(VENV)/.bench-installed

.PHONY: bench bench-recall bench-latency bench-dedup-cost bench-dedup bench-filters bench-reflection bench-tokens bench-context bench-load

# The benchmarks need torch: 2.13.0 is the local CPU wheel (a plain `torch` pulls a CUDA build).
$(BENCH_STAMP): $(STAMP)
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[test,bench]'
	touch $(BENCH_STAMP)

bench: bench-filters bench-dedup bench-dedup-cost bench-latency bench-recall bench-reflection bench-tokens bench-context

bench-recall: $(BENCH_STAMP)
	HF_HUB_OFFLINE=1 $(PY) -m bench.recall

bench-latency: $(BENCH_STAMP)
	$(PY) -m bench.latency

bench-dedup-cost: $(BENCH_STAMP)
	$(PY) -m bench.dedup

# Needs a real LLM (OLLAMA_URL, OLLAMA_CHAT_MODEL); says so and skips otherwise.
bench-reflection: $(STAMP)
	$(PY) -m bench.reflection

bench-dedup: $(STAMP)
	$(PY) -m bench.dedup_minlen

bench-filters: $(STAMP)
	$(PY) -m bench.filters_corpus

# Real tokenizers (Llama 3, cl100k, o200k) from npm, vocabularies inside the packages: node >= 18.
bench/tokenizers/node_modules: bench/tokenizers/package.json
	npm install --prefix bench/tokenizers --no-audit --no-fund --silent
	touch bench/tokenizers/node_modules

bench-tokens: $(STAMP) bench/tokenizers/node_modules
	$(PY) -m bench.tokens

bench-context: $(STAMP)
	$(PY) -m bench.context

# One person floods while ten talk, side by side with the calm run; only matplotlib on top.
LOAD_STAMP := $(VENV)/.load-installed
$(LOAD_STAMP): $(STAMP)
	$(PY) -m pip install --quiet 'matplotlib>=3.8'
	touch $(LOAD_STAMP)

bench-load: $(LOAD_STAMP)
	$(PY) -m bench.load
