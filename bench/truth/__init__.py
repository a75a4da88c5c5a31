"""bench-truth (`make bench-truth`, `python -m bench.truth`): how truthful the memory's rules are
on cases they were not tuned on. run.py assembles the parts (dedup.py, replace.py, dates.py,
blind.py) into bench/results/truth.md; report.py holds what they report."""
