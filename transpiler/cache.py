"""A content-hash cache of per-file results, so re-running a conversion over
an unchanged tree (or resuming an interrupted one) only redoes what changed.

An entry is keyed by a hash of the file's bytes and its path below the input
root, and filed under a directory named after the tool's version and the rule
set's version: a new release or any rule edit starts a fresh directory (older
ones are removed when the cache is opened). An entry holds the file's status
and diagnostics, and the size and mtime of the output file written for it, so
a hit whose output is still in place costs a read, a hash and a stat.

The default location is ``.ms-migrate-cache/`` inside the output directory
(excluded from discovery, safe to delete at any time). Entries are written
atomically by the workers themselves; nothing is shared between processes
but the file system.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from functools import lru_cache

from transpiler.diagnostics import Diagnostic
from transpiler.source_io import write_atomic

CACHE_DIRNAME = ".ms-migrate-cache"
_SOURCE_FILE = "source"  # the input root this cache belongs to


def cache_version() -> str:
    """The tool's release, a digest of its own code (so an edited checkout
    never serves results of the code before the edit) and the rule set's."""
    from rewrite_rules.registry import load_rules
    from transpiler import __version__

    return f"{__version__}-{_code_digest()}-{load_rules().version}"


@lru_cache(maxsize=1)
def _code_digest() -> str:
    package = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha256()
    for root, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(root, name)
                digest.update(os.path.relpath(path, package).encode())
                with open(path, "rb") as handle:
                    digest.update(handle.read())
    return digest.hexdigest()[:12]


@dataclass(frozen=True)
class Entry:
    status: str
    diagnostics: list[Diagnostic]
    output_stat: tuple[int, int] | None  # (size, mtime_ns) of the written output

    def output_in_place(self, target: str | None) -> bool:
        if target is None or self.status == "failed":
            return True  # nothing is written for these
        if self.output_stat is None:
            return False
        try:
            stat = os.stat(target)
        except OSError:
            return False
        return (stat.st_size, stat.st_mtime_ns) == tuple(self.output_stat)


@dataclass(frozen=True)
class Cache:
    """A handle small enough to send to every worker with its job."""

    directory: str  # the versioned directory holding the entries

    @staticmethod
    def key(relative: str, data: bytes) -> str:
        digest = hashlib.blake2b(digest_size=20)
        digest.update(relative.encode("utf-8", "surrogateescape"))
        digest.update(b"\0")
        digest.update(data)
        return digest.hexdigest()

    def _path(self, key: str) -> str:
        return os.path.join(self.directory, key[:2], key + ".json")

    def get(self, key: str, display: str) -> Entry | None:
        try:
            with open(self._path(key), "rb") as handle:
                data = json.loads(handle.read())
            diagnostics = [Diagnostic.from_dict({**d, "path": display}) for d in data["diagnostics"]]
            stat = data.get("output_stat")
            return Entry(data["status"], diagnostics, tuple(stat) if stat else None)
        except (OSError, ValueError, KeyError, TypeError):
            return None  # missing or damaged: convert again

    def put(self, key: str, status: str, diagnostics: list[Diagnostic], target: str | None) -> None:
        stat = None
        if target is not None and status != "failed":
            try:
                info = os.stat(target)
                stat = [info.st_size, info.st_mtime_ns]
            except OSError:
                return  # nothing to vouch for
        data = {
            "status": status,
            "diagnostics": [{k: v for k, v in d.to_dict().items() if k != "path"} for d in diagnostics],
            "output_stat": stat,
        }
        try:
            write_atomic(self._path(key), json.dumps(data, separators=(",", ":")).encode("utf-8"))
        except OSError:
            pass  # a cache that cannot be written only costs speed


def open_cache(root: str, source: str) -> Cache:
    """The cache under ``root`` for this tool and rule version, made ready.
    Directories of other versions are removed: they can never hit again."""
    version = cache_version()
    os.makedirs(root, exist_ok=True)
    for name in os.listdir(root):
        path = os.path.join(root, name)
        if name != version and os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
    write_atomic(os.path.join(root, _SOURCE_FILE), os.path.realpath(source).encode("utf-8", "surrogateescape"))
    directory = os.path.join(root, version)
    os.makedirs(directory, exist_ok=True)
    return Cache(directory)


def belongs_to(output: str, source: str) -> bool:
    """Whether ``output`` is the output directory of an earlier conversion of
    ``source`` (it holds our cache): such an output is continued, not refused."""
    try:
        with open(os.path.join(output, CACHE_DIRNAME, _SOURCE_FILE), "rb") as handle:
            recorded = handle.read().decode("utf-8", "surrogateescape")
    except OSError:
        return False
    return recorded == os.path.realpath(source)
