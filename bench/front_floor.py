"""`toolhost mcp` whose calls cost nothing: the first call runs in the runtime and every
later call answers that same result, so a read timed through it is the front's own floor
(stdin, the plain-call path, the answer's wire form and encoding, the write), with the
runtime's work taken out. bench/peers.py runs it as an arm with --floor.

    python bench/front_floor.py mcp --root ROOT
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lsp_server.cli import main
from lsp_server.mcp.calls import router

_first_call = router.CallRouter.call
_answers: dict[str, dict[str, Any]] = {}


async def _call_once(self: router.CallRouter, name: str, arguments: Any, *rest: Any) -> Any:
    if name not in _answers:
        _answers[name] = await _first_call(self, name, arguments, *rest)
    return _answers[name]


router.CallRouter.call = _call_once  # type: ignore[method-assign]

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
