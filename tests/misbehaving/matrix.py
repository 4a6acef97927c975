#!/usr/bin/env python3
"""The misbehaviour matrix: what an implementation does x when x the door it
comes through, each cell a whole `check` run, judged as a user would:

  - the right verdict (NOT VERIFIED with a finding of the expected kinds, or
    VERIFIED where the misbehaviour changes no answer) and exit code;
  - the run over within a bound, and its first report written;
  - nothing printed raw: no control character but newline and tab on the
    terminal, and no verdict line but the run's own last one;
  - nothing left running: no process that carries the cell's mark.

    matrix.py --cli CHUNKMETA --python PYTHON --pythonpath DIR --plugin PLUGIN [--cells ci|all]
              [--only REGEX] [--jobs N] [--results FILE]
    matrix.py --table FILE     prints FILE's cells as a Markdown table (tools/results.sh)

`ci` runs one cell of every behaviour and door (the moment alternates);
`all` every cell (tools/results.sh, with each cell's times in FILE).
Cells that cannot happen through a door are listed with the reason.
"""

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent.parent
ADAPTER = SOURCE / "adapters" / "python" / "chunkmeta_adapter.py"
WHENS = ("first", "nth")
# Each cell's run must be over by then: the targets are 30 s (tools/results.sh reports the times).
BOUND_SECONDS = 90
SEED = 20261206

# behaviour -> (finding kinds it may be reported as, or None: VERIFIED, by moment)
PYTHON_BEHAVIOURS = {
    "wrong": {"first": {"mismatch", "invariant_violated"}, "nth": {"mismatch", "invariant_violated"}},
    "raise": {"first": {"raised"}, "nth": {"raised"}},
    "odd_exception": {"first": {"raised"}, "nth": {"raised"}},
    "odd_rejection": {"first": {"raised"}, "nth": {"raised"}},
    "control_text": {"first": {"raised"}, "nth": {"raised"}},
    "hang": {"first": {"timed_out"}, "nth": {"timed_out"}},
    "swallow_timeout": {"first": {"timed_out"}, "nth": {"timed_out"}},
    # The warm-up's arrays hold at most one entry: a one-entry view is contiguous, so no layout differs.
    "layout": {"first": None, "nth": {"malformed_output"}},
    "crash": {"first": {"crashed"}, "nth": {"crashed"}},
    "exit": {"first": {"crashed"}, "nth": {"crashed"}},
    # Right answers, an input changed in place: the offsets tensor, the computed tokens, the offsets list.
    "changes_offsets": {"first": {"changed_input"}, "nth": {"changed_input"}},
    "changes_per_row": {"first": {"changed_input"}, "nth": {"changed_input"}},
    "changes_list": {"first": {"changed_input"}, "nth": {"changed_input"}},
    # Right answers, and lines on stdout: never the protocol's.
    "prints": {"first": None, "nth": None},
    # Right answers but one, an output of 3 million entries: refused before it is read, through every door.
    "floods": {"first": {"malformed_output"}, "nth": {"malformed_output"}},
    "prints_over_200_rows": {"any": None},  # an info_once on the first batch over 200 rows
    # Right, then wrong for good (after 2,100 calls, after 1 s) or once (call 600): every answer is judged
    # against the reference, in every property; the one-off is reported flaky, never "minimal".
    "wrong_after_calls": {"any": {"mismatch", "invariant_violated"}},
    "wrong_after_seconds": {"any": {"mismatch", "invariant_violated"}},
    "wrong_once": {"any": {"mismatch", "invariant_violated"}},
    # An exit on one workload of the many the adapter reads at once: blamed on that one, shrunk to its one row.
    "exits_past_1000_tokens": {"any": {"crashed"}},
    # An exit on every 7th call of its process (a leak): asked again in a fresh process it passes, so it is flaky.
    "exits_every_7th_call": {"any": {"crashed"}},
}
# Behaviours that end the process they run in: check() cannot run them (see CANNOT).
ENDS_ITS_PROCESS = ("crash", "exit", "exits_past_1000_tokens", "exits_every_7th_call")
# The status a behaviour's report must have (its start), where it is not "minimal" or a stop.
STATUS_OF = {"wrong_once": "flaky (", "exits_past_1000_tokens": "minimal (1 row)", "exits_every_7th_call": "flaky ("}
# The spec a behaviour's functions compute, where it is not Mamba's.
SPEC_OF = {"changes_list": "mamba.checkpointed_chunks"}
# Cases per property of a behaviour whose verdict is VERIFIED after every property ran (a whole run, not a
# first failure): 300 still send huge batches (2%: six of 300), and keep the cell within its bound on a slow machine.
CASES_OF = {"prints": 300, "prints_over_200_rows": 300}
# check() settings of a behaviour whose verdict depends on how many calls the run makes: wrong after 2,100
# calls is past the reference properties only when every case runs (the default time budget runs fewer on a
# loaded machine, and a function right for every call made is rightly VERIFIED).
SETTINGS_OF = {"wrong_after_calls": " min_cases=0, time_budget=0.0,"}
PROTOCOL_BEHAVIOURS = {  # tests/misbehaving/misbehave.py's modes
    "wrong": {"mismatch", "invariant_violated"},
    "no-flush": {"timed_out"},
    "control": {"raised"},
    "garbage": {"malformed_output"},
    "twice": {"malformed_output"},
    "flood": {"malformed_output"},
    "exit-early": {"crashed"},
    # A program that takes 2 s to start (as one importing torch does), then spins on two or more rows:
    # busy, never idle, so only the limit ends it; each restart costs the start again.
    "slow-start-spin": {"timed_out"},
}
# A spin in a process's warm-up cannot be told from a slow start-up (the warm-up waits at least 30 s for
# that): the moment the matrix proves is the cases' (listed with the cells that cannot happen).
PROTOCOL_WHENS = {"slow-start-spin": ("nth",)}
PLUGIN_BEHAVIOURS = ("wrong", "crash", "hang", "exit", "changes_input", "prints")
PLUGIN_KINDS = {"wrong": {"mismatch", "invariant_violated"}, "hang": {"timed_out"}, "changes_input": {"changed_input"},
                "prints": None}
IN_PROCESS_PLUGIN_BEHAVIOURS = ("wrong", "changes_input", "prints")

# What cannot happen through a door, and why (printed with the summary).
CANNOT = [
    ("check()", "crash, exit, exits_past_1000_tokens, exits_every_7th_call", "fn runs in the caller's own process: a crash or an exit ends the caller; "
                               "isolate it with cmd: (the adapter)"),
    ("check()", "no-flush, garbage, flood", "there is no stream: fn returns its values (its outputs' flood is "
                                            "the floods behaviour)"),
    ("plugin in process", "crash, hang, exit", "the plugin runs in the harness's process (--in-process): "
                                               "the default isolates it in a child, where these are findings"),
    ("built in", "every behaviour", "the built-in implementations are the library's own; the mutant catalogue "
                                    "proves their door"),
    ("cmd: (protocol)", "changes_input", "the program is sent text: it has no input of the harness's to change"),
    ("cmd: (protocol)", "slow-start-spin at its first calls",
     "a program busy in its warm-up is waited for at least 30 s, as a slow start-up is (it is still reported "
     "timed_out, after each restart's 30 s)"),
]


class Cell:
    def __init__(self, door, behaviour, when, kinds, command, env=None, exit_code=None, note=""):
        self.door, self.behaviour, self.when, self.kinds = door, behaviour, when, kinds
        self.command, self.env, self.note = command, env or {}, note
        self.exit_code = exit_code if exit_code is not None else (0 if kinds is None else 1)

    @property
    def name(self):
        return f"{self.door} / {self.behaviour} / {self.when}"


def cells(args):
    cli = args.cli
    check_common = ["--seed", str(SEED), "--fail-fast", "--valid-only"]
    out = []
    for behaviour, by_when in PYTHON_BEHAVIOURS.items():
        spec, cases = SPEC_OF.get(behaviour), CASES_OF.get(behaviour)
        for when, kinds in by_when.items():
            fn = behaviour if when == "any" else f"{behaviour}_{when}"
            if behaviour not in ENDS_ITS_PROCESS:
                script = (
                    "import sys, chunkmeta\n"
                    f"sys.path.insert(0, {str(HERE)!r})\n"
                    "import matrix_impl\n"
                    "try:\n"
                    f"    s = chunkmeta.check(matrix_impl.{fn}, spec={spec!r}, seed={SEED}, fail_fast=True,"
                    f" database=None,{f' cases={cases},' if cases else ''}{SETTINGS_OF.get(behaviour, '')}"
                    " report_dir=sys.argv[1], timeout=4)\n"
                    "    print(s.text)\n"
                    "except chunkmeta.CheckFailed as failed:\n"
                    "    print(failed.summary.text)\n"
                    "    sys.exit(1)\n")
                exit_code = 124 if behaviour == "swallow_timeout" else None
                out.append(Cell("check()", behaviour, when, kinds if exit_code is None else set(),
                                [args.python, "-c", script, "{reports}"], {"PYTHONPATH": args.pythonpath},
                                exit_code=exit_code,
                                note="ends the process (exit 124) with the case, as pytest-timeout's thread "
                                     "method does" if exit_code else ""))
            command = f"{args.python} {ADAPTER} {HERE / 'matrix_impl.py'}:{fn}"
            options = (["--spec", spec] if spec else []) + (["--cases", str(cases)] if cases else [])
            out.append(Cell("cmd: (adapter)", behaviour, when, kinds,
                            [cli, "check", *check_common, *options, "--timeout", "4", "--report-dir", "{reports}",
                             "--impl", "cmd:" + command], {"PYTHONPATH": args.pythonpath}))
    for mode, kinds in PROTOCOL_BEHAVIOURS.items():
        for when in PROTOCOL_WHENS.get(mode, WHENS):
            command = f"{args.python} {HERE / 'misbehave.py'} {mode} {cli}"
            out.append(Cell("cmd: (protocol)", mode, when, kinds,
                            [cli, "check", *check_common, "--timeout", "4", "--report-dir", "{reports}", "--impl",
                             "cmd:" + command], {"MISBEHAVE_WHEN": when}))
    for behaviour in PLUGIN_BEHAVIOURS:
        for when in WHENS:
            kinds = PLUGIN_KINDS[behaviour] if behaviour in PLUGIN_KINDS else {"crashed"}
            impl = f"plugin:{args.plugin}#{behaviour}_{when}"
            out.append(Cell("plugin, isolated", behaviour, when, kinds,
                            [cli, "check", *check_common, "--timeout", "4", "--report-dir", "{reports}", "--impl",
                             impl]))
            if behaviour in IN_PROCESS_PLUGIN_BEHAVIOURS:
                # In process there is no warm-up: the first two calls are the first cases', judged as such.
                out.append(Cell("plugin, in process", behaviour, when, kinds,
                                [cli, "check", *check_common, "--in-process", "--report-dir", "{reports}", "--impl",
                                 impl]))
    return out


def ci_selection(all_cells):
    """One cell of every (door, behaviour): the moment alternates along the list (a behaviour without
    moments has its one cell)."""
    by_key = {}
    for cell in all_cells:
        by_key.setdefault((cell.door, cell.behaviour), []).append(cell)
    chosen = []
    for index, cells_of_key in enumerate(by_key.values()):
        wanted = WHENS[index % 2]
        chosen.append(next((cell for cell in cells_of_key if cell.when == wanted), cells_of_key[0]))
    return chosen


RAW = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]")


def marked_processes(mark):
    """Processes whose environment carries the cell's mark: what a cell left running."""
    left = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if mark.encode() in (entry / "environ").read_bytes():
                left.append(int(entry.name))
        except OSError:
            continue
    return left


def run(cell, scratch):
    reports = Path(tempfile.mkdtemp(prefix="cell-", dir=scratch))
    mark = f"CHUNKMETA_MATRIX_CELL={uuid.uuid4().hex}"
    env = dict(os.environ, **cell.env, CHUNKMETA_MATRIX_CELL=mark.split("=", 1)[1], TMPDIR=str(reports))
    command = [part.replace("{reports}", str(reports)) for part in cell.command]
    start, start_wall = time.monotonic(), time.time()
    problems = []
    try:
        done = subprocess.run(command, env=env, capture_output=True, timeout=BOUND_SECONDS, stdin=subprocess.DEVNULL)
        over = time.monotonic() - start
        output, code = done.stdout + done.stderr, done.returncode
    except subprocess.TimeoutExpired as expired:
        over = time.monotonic() - start
        output, code = (expired.stdout or b"") + (expired.stderr or b""), None
        problems.append(f"not over within {BOUND_SECONDS} s")
    time.sleep(0.2)  # a guard ends what it guards as the harness exits
    left = marked_processes(mark)
    for pid in left:
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    if left:
        problems.append(f"left {len(left)} process(es) running")
    reports_written = sorted(reports.glob("*.report.json"), key=lambda p: p.stat().st_mtime)
    first_report = reports_written[0].stat().st_mtime - start_wall if reports_written else None
    if code is not None and code != cell.exit_code:
        problems.append(f"exit code {code}, expected {cell.exit_code}")
    if RAW.search(output):
        problems.append("printed a control character raw: " + repr(RAW.search(output).group()))
    text = output.decode(errors="replace")
    verdicts = [line for line in text.splitlines() if line.startswith(("VERIFIED", "NOT VERIFIED"))]
    kinds = set(re.findall(r"^  finding:\s+(\w+):", text, re.M))
    statuses = re.findall(r"^  status:\s+(.*)$", text, re.M)
    # The last report written is the final one: its time is the minimal report's (or the flaky one's).
    last_report = reports_written[-1].stat().st_mtime - start_wall if reports_written else None
    if cell.exit_code == 124:
        if "has not returned" not in text:
            problems.append("ended without saying why (the watchdog's message)")
    elif cell.kinds is None:
        if verdicts[-1:] != ["VERIFIED: every property held"]:
            problems.append(f"verdict {verdicts[-1:]}, expected VERIFIED")
    else:
        if len(verdicts) != 1 or not verdicts[0].startswith("NOT VERIFIED"):
            problems.append(f"verdict lines {verdicts}, expected one NOT VERIFIED")
        if not kinds or not kinds <= cell.kinds:
            problems.append(f"findings {sorted(kinds)}, expected among {sorted(cell.kinds)}")
        if not reports_written:
            problems.append("no report written")
        wanted = STATUS_OF.get(cell.behaviour)
        if wanted and not any(status.startswith(wanted) for status in statuses):
            problems.append(f"statuses {statuses}, expected one starting {wanted!r}")
        # A misbehaviour on a process's first calls depends on the calls before it: asked again later in the same
        # process (where no warm-up took those calls, as in a plugin run in process) it passes, and is rightly flaky.
        if not wanted and cell.when != "first" and any(status.startswith("flaky") for status in statuses):
            problems.append(f"statuses {statuses}: a deterministic misbehaviour called flaky")
    return {"door": cell.door, "behaviour": cell.behaviour, "when": cell.when, "exit": code,
            "findings": sorted(kinds), "over_s": round(over, 2),
            "first_report_s": None if first_report is None else round(max(first_report, 0.0), 2),
            "last_report_s": None if last_report is None else round(max(last_report, 0.0), 2),
            "statuses": statuses,
            "problems": problems, "output": text[-3000:] if problems else ""}


def table(results_file):
    print("| door | behaviour | when | reported as | status | first report (s) | final report (s) | over (s) | problems |")
    print("|---|---|---|---|---|---|---|---|---|")
    for line in Path(results_file).read_text().splitlines():
        r = json.loads(line)
        first = "-" if r["first_report_s"] is None else f"{r['first_report_s']:.1f}"
        final = "-" if r.get("last_report_s") is None else f"{r['last_report_s']:.1f}"
        status = "; ".join(sorted(set(s.split(" (")[0] for s in r.get("statuses", [])))) or "-"
        print(f"| {r['door']} | {r['behaviour']} | {r['when']} | {', '.join(r['findings']) or 'VERIFIED'} | {status} | "
              f"{first} | {final} | {r['over_s']:.1f} | {'; '.join(r['problems']) or 'none'} |")
    print()
    print("Cells that cannot happen through a door:")
    print()
    for door, what, why in CANNOT:
        print(f"- {door}: {what}: {why}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", help="print this results file as a Markdown table, and run nothing")
    parser.add_argument("--cli")
    parser.add_argument("--python")
    parser.add_argument("--pythonpath", help="where the chunkmeta package is (the build tree's python/)")
    parser.add_argument("--plugin", help="the matrix plugin (tests/misbehaving/matrix_plugin.cpp)")
    parser.add_argument("--cells", choices=("ci", "all"), default="ci")
    parser.add_argument("--only", help="run only the cells whose name (door / behaviour / when) matches this regex")
    parser.add_argument("--jobs", type=int, default=3)
    parser.add_argument("--results", help="a JSON Lines file for each cell's figures")
    args = parser.parse_args()
    if args.table:
        table(args.table)
        return 0
    if not (args.cli and args.python and args.pythonpath and args.plugin):
        parser.error("--cli, --python, --pythonpath and --plugin are needed to run the cells")
    chosen = cells(args)
    if args.cells == "ci":
        chosen = ci_selection(chosen)
    if args.only:
        chosen = [cell for cell in chosen if re.search(args.only, cell.name)]
    scratch = Path(tempfile.mkdtemp(prefix="chunkmeta-matrix-"))
    print(f"misbehaviour matrix: {len(chosen)} cells ({args.cells}), {args.jobs} at a time", flush=True)
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(run, cell, scratch): cell for cell in chosen}
        for future in concurrent.futures.as_completed(futures):
            cell, result = futures[future], future.result()
            results.append(result)
            status = "ok  " if not result["problems"] else "FAIL"
            first = "-" if result["first_report_s"] is None else f"{result['first_report_s']:.1f} s"
            print(f"{status} {cell.name:45} {','.join(result['findings']) or 'VERIFIED':28} first report {first:>7},"
                  f" over {result['over_s']:.1f} s{'  (' + cell.note + ')' if cell.note else ''}", flush=True)
            for problem in result["problems"]:
                print(f"       {problem}", flush=True)
            if result["problems"]:
                print("       its output (end):\n" + "\n".join("         | " + line for line in
                                                           result["output"].splitlines()[-40:]), flush=True)
    print("Cells that cannot happen through a door:")
    for door, what, why in CANNOT:
        print(f"  {door}: {what}: {why}")
    if args.results:
        with open(args.results, "w") as file:
            for result in sorted(results, key=lambda r: (r["door"], r["behaviour"], r["when"])):
                file.write(json.dumps({k: v for k, v in result.items() if k != "output"}) + "\n")
    failed = sum(1 for r in results if r["problems"])
    if failed:
        print(f"(the failing cells' report folders are kept in {scratch})")
    else:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
