"""Whether a server still runs the code on disk: a digest of ms-migrate's
code and rules (the one the rule index and the result cache are filed under),
hashed again only when a file's size or time changed, and the times of the
import path's directories, which installing a package changes."""

from __future__ import annotations

import os
import sys


def code_digest() -> str:
    """A digest of the converter's code and rules as they are on disk now
    (the digest the rule index and the result cache are filed under)."""
    import rewrite_rules
    import transpiler
    from rewrite_rules.rule_index import tree_digest

    return tree_digest.__wrapped__(transpiler) + tree_digest.__wrapped__(rewrite_rules)


def code_stamp() -> tuple:
    """The size and modification time of every file of the converter and the
    rules: when they are as they were, so is the digest (hashed again only
    when one changed)."""
    import rewrite_rules
    import transpiler
    from rewrite_rules.rule_index import source_files

    stamp = []
    for package in (transpiler, rewrite_rules):
        for _, path in source_files(package):
            info = os.stat(path)
            stamp.append((path, info.st_size, info.st_mtime_ns))
    return tuple(stamp)


def installed_stamp() -> tuple:
    """When the import path's directories last changed: installing, removing
    or upgrading a package (black, libcst, a rule plugin) changes them."""
    stamp = []
    for entry in sys.path[1:]:  # [0] is where the server was started (a checkout's root)
        try:
            stamp.append((entry, os.stat(entry).st_mtime_ns))
        except OSError:
            pass
    return tuple(stamp)


class Snapshot:
    """The code, rules and installed packages as a server imported them."""

    def __init__(self):
        self.stamp = code_stamp()
        self.digest = code_digest()
        self.installed = installed_stamp()

    def still_on_disk(self) -> bool:
        if installed_stamp() != self.installed:
            return False
        stamp = code_stamp()
        if stamp == self.stamp:
            return True
        if code_digest() != self.digest:
            return False
        self.stamp = stamp  # touched, not changed
        return True
