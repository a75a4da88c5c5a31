"""`python -m bench.scale`: the scale bench (bench/scale/run.py), also its worker processes."""

from bench.scale.run import main

main()
