"""The dedup benches: cost.py (one candidate against N memories, brute force against the index:
make bench-dedup-cost), build.py (index builds side by side) and minlen.py (the minimum length
for difflib's ratio, and names compared wherever they stand: make bench-dedup)."""
