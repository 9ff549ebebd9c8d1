"""The benchmark corpora: the installed torch package's Python source plus
the repository's samples (mostly code with nothing to convert), and timm's
source from the package registry (dense model code: nearly every statement
holds torch calls)."""

from __future__ import annotations

import os
from dataclasses import dataclass

ZOO_WORK = os.path.join(os.path.expanduser("~"), ".cache", "ms-migrate-zoo")  # as benchmarks/zoo.py
CORPORA = ("timm", "torch")


@dataclass
class Corpus:
    name: str
    roots: list[str]  # directories converted (each to its own output subdirectory)
    paths: list[str]  # the .py files, in conversion order
    texts: list[str]  # their decoded text (for the floor)
    lines: int
    step: int

    @property
    def files(self) -> int:
        return len(self.paths)

    def describe(self) -> str:
        roots = " + ".join(os.path.relpath(r) for r in self.roots)
        subset = "" if self.step == 1 else f" (every {self.step}th file)"
        return f"{self.name}: {self.files:,} files, {self.lines:,} lines from {roots}{subset}"


def torch_source_dir() -> str:
    import importlib.util

    spec = importlib.util.find_spec("torch")  # located, not imported: importing torch costs seconds
    return os.path.dirname(spec.origin)


def corpus_roots(repo: str, name: str) -> list[str]:
    if name == "torch":
        return [torch_source_dir(), os.path.join(repo, "samples")]
    if name == "timm":
        from benchmarks.zoo.fetch import fetch_timm

        return [os.path.join(fetch_timm(ZOO_WORK), "timm")]
    raise ValueError(f"unknown corpus {name!r} (known: {', '.join(CORPORA)})")


def load_corpus(repo: str, step: int = 1, name: str = "torch") -> Corpus:
    from transpiler.batch.discovery import discover
    from transpiler.batch.source_io import DecodeError, decode_source

    roots = corpus_roots(repo, name)
    paths: list[str] = []
    texts: list[str] = []
    for root in roots:
        for job in discover(root, None):
            if job.kind != "python":
                continue
            paths.append(job.source)
    paths = paths[::step]
    kept: list[str] = []
    for path in paths:
        with open(path, "rb") as handle:
            data = handle.read()
        try:
            texts.append(decode_source(data).text)
        except DecodeError:
            texts.append("")
        kept.append(path)
    lines = sum(text.count("\n") for text in texts)
    return Corpus(name, roots, kept, texts, lines, step)
