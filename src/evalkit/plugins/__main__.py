"""``python -m evalkit.plugins [docs/plugins.md]``: write the hook reference into the docs."""

from __future__ import annotations

import sys

from evalkit.plugins.hookdocs import sync_hook_reference

target = sys.argv[1] if len(sys.argv) > 1 else "docs/plugins.md"
sync_hook_reference(target, write=True)
print(f"hook reference written to {target}")
