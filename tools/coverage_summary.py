#!/usr/bin/env python3
"""Summarises `llvm-cov export -format=text` (JSON on stdin) for lib/: lines
and branches covered, every line and branch edge missed (file:line), and the
branch figure without the edges clang 14 cannot count.

Those are the edges of defaulted comparisons (`operator==(...) = default`):
clang 14 records their false edges as never taken, although the line runs
hundreds of thousands of times and library_test compares values that differ
in each field (so each member comparison is false somewhere). They are listed,
not hidden: both figures are printed.

    llvm-cov export -format=text BINARY... -instr-profile=P lib/ | tools/coverage_summary.py
"""

import json
import os
import re
import sys

DEFAULTED_COMPARISON = re.compile(r"operator==\(.*\)\s*=\s*default")


def percent(covered, count):
    return f"{covered}/{count} ({100.0 * covered / count:.1f}%)" if count else "0/0"


def main():
    export = json.load(sys.stdin)["data"][0]
    root = os.path.commonpath([f["filename"] for f in export["files"]]) if export["files"] else ""
    lines_total = lines_covered = 0
    edges_total = edges_covered = 0
    artifact_total = artifact_covered = 0
    artifacts, missed_lines, missed_edges = [], [], []
    for f in export["files"]:
        name = os.path.relpath(f["filename"], root)
        summary = f["summary"]["lines"]
        lines_total += summary["count"]
        lines_covered += summary["covered"]
        with open(f["filename"], encoding="utf-8") as source:
            text = source.read().split("\n")
        # Segments: [line, col, count, has_count, is_region_entry, is_gap]; a line is missed when
        # a counted segment that starts on it has count 0 (what llvm-cov show marks as 0).
        zero_lines = sorted({s[0] for s in f["segments"] if s[3] and not s[5] and s[2] == 0})
        missed_lines += [f"{name}:{line}" for line in zero_lines]
        for branch in f["branches"]:
            line, true_count, false_count = branch[0], branch[4], branch[5]
            covered = (true_count > 0) + (false_count > 0)
            edges_total += 2
            edges_covered += covered
            if line <= len(text) and DEFAULTED_COMPARISON.search(text[line - 1]):
                artifact_total += 2
                artifact_covered += covered
                artifacts.append(f"{name}:{line}")
                continue
            for edge, count in (("true", true_count), ("false", false_count)):
                if count == 0:
                    missed_edges.append(f"{name}:{line} ({edge})")
    print(f"lib/ lines:    {percent(lines_covered, lines_total)}")
    print(f"lib/ branches: {percent(edges_covered, edges_total)} as llvm-cov counts them")
    if artifact_total:
        print(f"  of which {artifact_total - artifact_covered} edges missed in defaulted operator== "
              f"(clang 14 never counts their false edges): {', '.join(sorted(set(artifacts)))}")
        print(f"lib/ branches without those: "
              f"{percent(edges_covered - artifact_covered, edges_total - artifact_total)}")
    print(f"missed lines ({len(missed_lines)}): {', '.join(missed_lines) or 'none'}")
    print(f"missed branch edges ({len(missed_edges)}): {', '.join(missed_edges) or 'none'}")


if __name__ == "__main__":
    main()
