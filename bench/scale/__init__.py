"""The scale bench (`make bench-scale`, `make bench-characters`): run.py drives it (`python -m
bench.scale`), report.py and characters.py write its results, pg.py gives it PostgreSQL,
constants.py holds what the runner and the reports share."""
