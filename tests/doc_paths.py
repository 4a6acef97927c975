#!/usr/bin/env python3
"""Every path the docs name exists: each `a/b.ext` or `a/b/` in backticks in
README.md, docs/*.md and the spec folders' READMEs names a file or folder of
the checkout (or of a build tree, where it says build/). Prints each one that
does not, and ends with the plain 'N passed, N failed' line."""

import re
import sys
from pathlib import Path

ROOT = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
PATH = re.compile(r"`([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.*#-]+)+/?)`")
# Paths in the engines' own repositories, which the contracts cite.
OUTSIDE = ("fla/ops/", "vllm/", "sglang/", "tensorrt_llm/", "mamba_ssm/")
EXTENSIONS = (".hpp", ".cpp", ".h", ".py", ".md", ".sh", ".json", ".cmake", ".txt", ".toml", ".pyi")


def named_paths(text):
    for match in PATH.finditer(text):
        path = match.group(1)
        if path.startswith(("build/", "/", "http", "chunkmeta/", "corpus/regressions/", *OUTSIDE)) or "*" in path \
                or "#" in path:
            continue  # a build tree, a user's file, a package path, a pattern
        if path.endswith("/") or path.endswith(EXTENSIONS):
            yield path


def main():
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "specs").glob("*/README.md"))]
    checked, missing = 0, []
    for doc in docs:
        for path in sorted(set(named_paths(doc.read_text()))):
            checked += 1
            if not (ROOT / path).exists() and not (doc.parent / path).exists():
                missing.append(f"{doc.relative_to(ROOT)} names {path}, which does not exist")
    for line in missing:
        print(line)
    print(f"{checked - len(missing)} passed, {len(missing)} failed")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
