"""The fourth door of the three-door test: a catalogue mutant through chunkmeta.check(),
in this process, with the catalogue's seed and options. Prints what was caught as one
JSON line: {"property", "workload", "finding", "actual"}, or null if nothing was.

    PYTHONPATH=build/default/python python3 mutants/check_door.py SPEC NAME SEED [PROPERTY [REPORT_DIR]]

PROPERTY runs that property only (the one that caught the mutant built in).
"""

import json
import sys

import chunkmeta
import mutants

spec, name, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
only = [sys.argv[4]] if len(sys.argv) > 4 and sys.argv[4] else None
try:
    # As the other doors: 10,000 cases per property, first failure only, no corpus and no example
    # database (nothing replayed), lists like the adapter's --lists.
    chunkmeta.check(getattr(mutants, name), spec=spec, cases=10000, seed=seed, corpus=[], database=None,
                    fail_fast=True, arrays="lists", properties=only,
                    report_dir=sys.argv[5] if len(sys.argv) > 5 else None)
    print(json.dumps(None))
except chunkmeta.CheckFailed as failed:
    cx = next(p.counterexample for p in failed.summary.properties if p.counterexample)
    print(json.dumps({"property": cx["property"], "workload": cx["workload"],
                      "finding": f"{cx['finding']}: {cx['summary']}", "actual": cx["actual"] or "(no answer)"}))
