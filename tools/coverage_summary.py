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
from collections import defaultdict

DEFAULTED_COMPARISON = re.compile(r"operator==\(.*\)\s*=\s*default")


def percent(covered, count):
    return f"{covered}/{count} ({100.0 * covered / count:.1f}%)" if count else "0/0"


def unexecuted_lines(segments):
    """Lines llvm-cov counts and finds unexecuted, by its own rule (LineCoverageStats):
    a line is counted if a region starts on it or a counted region runs through it;
    its count is that region's, or the largest of the regions starting on it.
    Segments: [line, col, count, has_count, is_region_entry, is_gap]."""
    missed = []
    wrapped = None  # the last segment before the current line
    index = 0
    last_line = segments[-1][0] if segments else 0
    for line in range(1, last_line + 1):
        on_line = []
        while index < len(segments) and segments[index][0] == line:
            on_line.append(segments[index])
            index += 1
        starts = [s for s in on_line if s[3] and s[4] and not s[5]]
        skipped = bool(on_line) and not on_line[0][3] and on_line[0][4]
        mapped = not skipped and (bool(starts) or (wrapped is not None and wrapped[3]))
        if mapped:
            count = wrapped[2] if wrapped is not None else 0
            if starts:
                count = max([count] + [s[2] for s in starts]) if wrapped is not None and wrapped[3] else max(s[2] for s in starts)
            if count == 0:
                missed.append(line)
        if on_line:
            wrapped = on_line[-1]
    return missed


def branch_edges(export, files):
    """{(file, line, col, end line, end col, ordinal): [true count, false count]}, merged over
    template instantiations the way llvm-cov's summary merges them (a location can hold
    several branches, e.g. each member comparison of a defaulted operator==)."""
    merged = {}
    for function in export["functions"]:
        seen = defaultdict(int)
        for branch in function["branches"]:
            name = function["filenames"][branch[6]]
            if name not in files:
                continue
            location = (name, *branch[:4])
            ordinal = seen[location]
            seen[location] += 1
            counts = merged.setdefault((*location, ordinal), [0, 0])
            counts[0] += branch[4]
            counts[1] += branch[5]
    return merged


def main():
    export = json.load(sys.stdin)["data"][0]
    files = {f["filename"] for f in export["files"]}
    root = os.path.commonpath(sorted(files)) if files else ""
    sources = {}
    lines_total = lines_covered = 0
    missed_lines = []
    for f in export["files"]:
        if f["summary"]["functions"]["count"] == 0:
            continue  # declarations only (plugin.h): llvm-cov's report leaves them out too
        name = os.path.relpath(f["filename"], root)
        lines_total += f["summary"]["lines"]["count"]
        lines_covered += f["summary"]["lines"]["covered"]
        with open(f["filename"], encoding="utf-8") as source:
            sources[f["filename"]] = source.read().split("\n")
        missed_lines += [f"{name}:{line}" for line in unexecuted_lines(f["segments"])]
    edges_total = edges_covered = artifact_total = artifact_covered = 0
    artifacts, missed_edges = set(), []
    for (filename, line, *_), (true_count, false_count) in sorted(branch_edges(export, files).items()):
        name = os.path.relpath(filename, root)
        covered = (true_count > 0) + (false_count > 0)
        edges_total += 2
        edges_covered += covered
        text = sources[filename]
        if line <= len(text) and DEFAULTED_COMPARISON.search(text[line - 1]):
            artifact_total += 2
            artifact_covered += covered
            artifacts.add(f"{name}:{line}")
            continue
        missed_edges += [f"{name}:{line} ({edge})" for edge, count in (("true", true_count), ("false", false_count))
                         if count == 0]
    print(f"lib/ lines:    {percent(lines_covered, lines_total)}")
    print(f"lib/ branches: {percent(edges_covered, edges_total)} as llvm-cov counts them")
    if artifact_total:
        print(f"  of which {artifact_total - artifact_covered} edges missed in defaulted operator== "
              f"(clang 14 never counts their false edges): {', '.join(sorted(artifacts))}")
        print(f"lib/ branches without those: "
              f"{percent(edges_covered - artifact_covered, edges_total - artifact_total)}")
    print(f"missed lines ({len(missed_lines)}): {', '.join(missed_lines) or 'none'}")
    print(f"missed branch edges ({len(missed_edges)}): {', '.join(missed_edges) or 'none'}")


if __name__ == "__main__":
    main()
