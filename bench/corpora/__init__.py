"""The benchmarks' data, apart from the runners: the recall bench's references, messages and
distractors (recall.py: the harsh family; diary.py with diary_*.txt: the diary family) and the
conversations before its messages (conversations.py). The labelled corpora the tests share with
the benchmarks live in tests/corpora/."""
