#!/usr/bin/env python3
"""Each spec folder's share of a ctest run: the seconds its tests took, so that
what adding a spec costs CI is seen run after run (CI prints it).

A test is a folder's when it runs a program or a file of that folder
(specs/<folder>/...: its library tests, its pytest file, its fuzz target), is
a property test of one of its specs (properties_test, the suite named after
the spec and the implementation; the default spec's suites carry no spec
name), or is a catalogue test of one of its mutants. Everything else is
shared: the harness, the doors, the CLI, the misbehaving implementations.

    tools/spec_costs.py BUILD_DIR [LOG]   (after ctest ran there: its Testing/Temporary/LastTest.log, or LOG,
                                           a copy of it kept before another ctest run in BUILD_DIR)
"""

import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path


def camel(name):
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[._]", name))


def main():
    build = Path(sys.argv[1]).resolve()
    source = Path(__file__).resolve().parents[1]
    # Read first: any ctest call (the listing below included) writes a new LastTest.log.
    log = build / "Testing" / "Temporary" / "LastTest.log"
    last_run = (Path(sys.argv[2]) if len(sys.argv) > 2 else log).read_text(errors="replace")
    cli = build / "bin" / "chunkmeta"
    specs = json.loads(subprocess.run([str(cli), "specs", "--json"], capture_output=True, text=True, check=True).stdout)
    folder_of = {}  # spec name -> its folder
    for spec in specs:
        found = re.search(r"\(specs/(\w+)\)", spec["summary"])
        folder_of[spec["name"]] = found.group(1) if found else spec["name"]
    default = next(spec["name"] for spec in specs if spec["default"])
    # Folders without a Spec yet (library and drop-ins only) have tests of their own too.
    folders = sorted(set(folder_of.values()) | {p.parent.name for p in source.glob("specs/*/CMakeLists.txt")})
    fuzz_folder = {options.stem: options.parents[1].name for options in source.glob("specs/*/fuzz/*.options")}
    mutant_folder = {}
    plugin = build / "bin" / "chunkmeta_mutant_plugin.so"
    if plugin.exists():
        table = subprocess.run([str(cli), "plugin-table", str(plugin)], capture_output=True, text=True).stdout
        for line in table.splitlines():
            entry = json.loads(line)
            if "name" in entry:
                mutant_folder[entry["name"].split("#")[-1].replace("-", "_")] = folder_of.get(entry["spec"])
    tests = json.loads(subprocess.run(["ctest", "--test-dir", str(build), "--show-only=json-v1"], capture_output=True,
                                      text=True, check=True).stdout)["tests"]
    if len(sys.argv) <= 2:
        log.write_text(last_run)  # as it was, for whatever reads it next
    # A parameterised test's name goes on with "  # GetParam() = ..."; the cost file keeps its first word.
    command_of = {test["name"].split()[0]: " ".join(test.get("command", [])) for test in tests}
    # The last ctest run's log: "N/M Testing: NAME", later "Test time = S sec" (the cost file leaves out
    # parameterised tests, whose names hold spaces).
    costs = {}
    testing = None
    for line in last_run.splitlines():
        if " Testing: " in line:
            testing = line.split(" Testing: ", 1)[1].split()[0]
        elif line.startswith("Test time =") and testing in command_of:
            costs[testing] = float(line.split("=")[1].split()[0])
            testing = None
    by_camel = sorted(((camel(name), folder) for name, folder in folder_of.items()), key=lambda p: -len(p[0]))

    def folder_of_test(name):
        command = command_of[name]
        for folder in folders:
            if f"/specs/{folder}/" in command:
                return folder
        if name.startswith("Fuzz."):
            return fuzz_folder.get(name.split(".")[1], "shared")
        if name.startswith("Mutants/"):
            return mutant_folder.get(name.rsplit("/", 1)[-1], "shared") or "shared"
        if "/properties/properties_test" in command:
            suite = name.split(".")[0]
            return next((folder for prefix, folder in by_camel if suite.startswith(prefix)), folder_of[default])
        return "shared"

    seconds = defaultdict(float)
    counts = defaultdict(int)
    for name, cost in costs.items():
        folder = folder_of_test(name)
        seconds[folder] += cost
        counts[folder] += 1
    total = sum(seconds.values())
    print(f"Test seconds by spec folder ({build.name}, the sum of each test's time; ctest runs them in parallel):")
    for folder in folders + ["shared"]:
        print(f"  {seconds[folder]:8.1f} s  {counts[folder]:4d} tests  {folder}")
    print(f"  {total:8.1f} s  {sum(counts.values()):4d} tests  in all")


if __name__ == "__main__":
    main()
