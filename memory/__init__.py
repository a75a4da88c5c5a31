"""Écho's memory engine: what to remember about each person, and what to recall each turn.

This package never imports Discord. `memory.engine` is the entry point; `memory.write` turns an
exchange into stored memories, `memory.read` picks the memories that enter the context.
"""
