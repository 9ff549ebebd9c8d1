"""`ms-migrate lsp` ends when its client leaves, while a conversion is under way too.

Its workers are stopped on exit; a worker stopped while it wrote a result once left the
process pool's manager thread waiting for the rest of that message, and the server never
exited (a test session hung on it for half an hour). The server now ends its process
once it has cleaned up."""

from __future__ import annotations

import json
import subprocess
import sys
import time

_SOURCE = "".join(f"import torch\nimport torch.nn as nn\n\n\nclass Net{i}(nn.Module):\n"
                  f"    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 4)\n\n"
                  f"    def forward(self, x):\n        return torch.relu(self.fc(x)).view(-1)\n\n\n"
                  for i in range(60))


def _send(process, message: dict) -> None:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    process.stdin.flush()


def test_the_server_exits_when_the_client_leaves_during_a_conversion(tmp_path):
    process = subprocess.Popen([sys.executable, "-m", "transpiler", "lsp"], stdin=subprocess.PIPE,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path)
    try:
        _send(process, {"id": 1, "method": "initialize",
                        "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}})
        _send(process, {"method": "initialized", "params": {}})
        uri = (tmp_path / "nets.py").as_uri()
        for version in range(1, 4):  # edits, each a conversion the next one makes stale
            _send(process, {"method": "textDocument/didOpen" if version == 1 else "textDocument/didChange",
                            "params": {"textDocument": {"uri": uri, "languageId": "python", "version": version,
                                                        "text": _SOURCE}} if version == 1 else
                            {"textDocument": {"uri": uri, "version": version},
                             "contentChanges": [{"text": _SOURCE + f"# {version}\n"}]}})
        time.sleep(3)  # the workers have started and a conversion is running
        _send(process, {"id": 2, "method": "shutdown", "params": None})
        _send(process, {"method": "exit", "params": None})
        process.stdin.close()
        assert process.wait(timeout=120) == 0
    finally:
        if process.poll() is None:
            process.kill()
