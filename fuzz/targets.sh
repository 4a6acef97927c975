#!/bin/sh
# Every fuzz target's .options file, one per line, relative to the source tree:
# fuzz/<target>.options, and each spec folder's specs/<folder>/fuzz/<target>.options.
# The target's name is the file's name without .options; its corpus is corpus/fuzz/<target>.
cd "$(dirname "$0")/.." && ls fuzz/*.options specs/*/fuzz/*.options 2>/dev/null
