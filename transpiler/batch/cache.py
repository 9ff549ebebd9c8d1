"""A content-hash cache of per-file results, so re-running a conversion over
an unchanged tree (or resuming an interrupted one) only redoes what changed.

An entry is keyed by a hash of the file's bytes, its path, where its output
goes and the options that change the output, and filed under a directory
named after the tool's version and the rule set's version: a new release or
any rule edit starts a fresh directory (directories unused for a day are
removed when the cache is opened). An entry holds the file's status and
diagnostics, and the size and mtime of the output file written for it, so a
hit whose output is still in place costs a read, a hash and a stat.

The cache lives where caches belong, as black's does: the user cache
directory (``~/.cache/ms-migrate`` on Linux, from platformdirs), or
``$MS_MIGRATE_CACHE_DIR``, or ``--cache-dir``; never in the output tree, so
a converted tree holds the converted files and nothing else. It also records
which output directory each conversion wrote (``runs/``), so that running
the same command again continues into that directory instead of refusing it,
and what it wrote to each output file (``runs/written/``, kept across
versions: a re-run merges the new conversion into a file the user edited,
see transpiler.batch.written).
Entries are written atomically by the workers themselves; nothing is shared
between processes but the file system. Safe to delete at any time.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from dataclasses import dataclass

from rewrite_rules.rule_index import store_index_in, tree_digest
from transpiler.convert.diagnostics import Diagnostic
from transpiler.batch.source_io import write_atomic
from transpiler.cache_root import ENVIRONMENT_VARIABLE, default_cache_root  # noqa: F401 - imported from here too

_RUNS = "runs"  # which output directory each conversion wrote
RULE_INDEX = "rule-index"  # where rewrite_rules.rule_index keeps the index of rules by name (set below)
_UNUSED_FOR = 24 * 3600  # seconds after which another version's directory is removed


def _rule_index_location() -> tuple[str, str]:
    return os.path.join(default_cache_root(), RULE_INDEX), _code_digest()


store_index_in(_rule_index_location)


def cache_version(rules: tuple[str, ...] = ()) -> str:
    """The tool's release, a digest of its own code (so an edited checkout
    never serves results of the code before the edit) and the rule set's."""
    from rewrite_rules.registry import load_rules
    from transpiler import __version__

    return f"{__version__}-{_code_digest()}-{load_rules(rules).version}"


def _code_digest() -> str:
    import transpiler

    return tree_digest(transpiler)[:12]


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
    options: str = ""  # the options that change what is written (part of every key)

    def key(self, source: str, target: str | None, data: bytes) -> str:
        digest = hashlib.blake2b(digest_size=20)
        for text in (source, target or "", self.options):
            digest.update(text.encode("utf-8", "surrogateescape"))
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


def open_cache(root: str, options: str = "", rules: tuple[str, ...] = ()) -> Cache:
    """The cache under ``root`` for this tool and rule version, made ready.
    Directories of other versions that nobody used for a day are removed:
    they will hardly hit again (a day's grace lets runs of another checkout
    or release share the root)."""
    version = cache_version(rules)
    directory = os.path.join(root, version)
    os.makedirs(directory, exist_ok=True)
    os.utime(directory)  # in use
    now = time.time()
    for name in os.listdir(root):
        path = os.path.join(root, name)
        if name in (version, _RUNS, RULE_INDEX) or not os.path.isdir(path) or os.path.islink(path):
            continue
        try:
            unused = now - os.stat(path).st_mtime > _UNUSED_FOR
        except OSError:
            continue
        if unused:
            shutil.rmtree(path, ignore_errors=True)
    return Cache(directory, options)


def runs_directory(root: str) -> str:
    """Where the records of runs and what they wrote are kept (any version)."""
    return os.path.join(root, _RUNS)


def _run_record(root: str, output: str) -> str:
    name = hashlib.blake2b(os.path.realpath(output).encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()
    return os.path.join(root, _RUNS, name + ".json")


def _identity(directory: str) -> list[int]:
    """Which directory this is, and the last change to its entries: inode
    numbers are reused at once, the time of a change is not."""
    info = os.stat(directory)
    return [info.st_dev, info.st_ino, info.st_mtime_ns]


def record_run(root: str, source: str, output: str) -> None:
    """Remember that ``output`` (an existing directory) is the conversion of
    ``source`` as it is now, after the run (or its interruption): a directory
    deleted and made again, or given other files, is not ours any more."""
    data = {"source": os.path.realpath(source), "output": os.path.realpath(output), "identity": _identity(output),
            "names": sorted(os.listdir(output))}
    try:
        write_atomic(_run_record(root, output), json.dumps(data).encode("utf-8", "surrogateescape"))
    except OSError:
        pass  # only costs a --force on the next run


def belongs_to(output: str, source: str, root: str) -> bool:
    """Whether ``output`` is the output directory an earlier conversion of
    ``source`` wrote: such an output is continued, not refused."""
    try:
        with open(_run_record(root, output), "rb") as handle:
            data = json.loads(handle.read().decode("utf-8", "surrogateescape"))
        if data["source"] != os.path.realpath(source):
            return False
        identity = _identity(output)
        if data["identity"] == identity:
            return True
        # the same directory, changed since: an editor saving a file by renaming a new one over it
        # changes its mtime; entries it did not hold mean someone else's files
        return data["identity"][:2] == identity[:2] and set(os.listdir(output)) <= set(data.get("names", ()))
    except (OSError, ValueError, KeyError, TypeError):
        return False
