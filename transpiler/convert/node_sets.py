"""Sets of CST nodes by identity.

libcst nodes compare by value, so sets of them use ids; but a node that is
dropped from the tree can be freed and its id reused by a node made later.
NodeSet keeps its members alive and checks identity, so membership can never
be inherited by a stranger.
"""

from __future__ import annotations


class NodeSet:
    def __init__(self) -> None:
        self._nodes: dict[int, object] = {}

    def add(self, node: object) -> None:
        self._nodes[id(node)] = node

    def __contains__(self, node: object) -> bool:
        return self._nodes.get(id(node)) is node

    def __bool__(self) -> bool:
        return bool(self._nodes)

    def __len__(self) -> int:
        return len(self._nodes)
