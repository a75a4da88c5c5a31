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

.PHONY: bench-dedup bench-filters
bench-dedup: $(STAMP)
	$(PY) -m bench.dedup_minlen

bench-filters: $(STAMP)
	$(PY) -m bench.filters_corpus
