"""`python -m bench.truth`: bench/truth/run.py."""

from bench.truth.run import main

main()
