#!/usr/bin/env python3
"""Runs the trace probe (tests/trace/probe.cc), or a program under the preloaded shim, in a scratch
directory and checks what it wrote. Python's json module is the reference for "valid JSON";
timestamps are read as decimals and compared in integer nanoseconds.

    check_trace.py PROBE SCENARIO        one of the SCENARIOS below
    check_trace.py --e2e PROGRAM         a real program under LD_PRELOAD (needs the exports wired)

The binary scenarios convert logs with `torchada-trace convert` (its path in $TORCHADA_TRACE_TOOL).

Exit status: 0 passed, 1 failed, 77 skipped (the reason is printed).
"""
import bisect
import decimal
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77
SIGNALS = {"segv": signal.SIGSEGV, "bus": signal.SIGBUS, "fpe": signal.SIGFPE,
           "ill": signal.SIGILL, "abort": signal.SIGABRT}


class Failure(Exception):
    pass


def expect(cond, what):
    if not cond:
        raise Failure(what)


def ns(value):
    """A trace timestamp (microseconds, decimal) as integer nanoseconds."""
    return int(decimal.Decimal(value) * 1000)


def mono_ns():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


class Run:
    def __init__(self, argv, env, cwd):
        clean = {k: v for k, v in os.environ.items()
                 if not k.startswith("TORCHADA_TRACE") and k not in
                 ("TORCHADA_STATS", "TORCHADA_LOG_LEVEL", "TORCHADA_LOG_FILE")}
        clean.update(env)
        self.before = mono_ns()
        p = subprocess.run(argv, env=clean, cwd=cwd, capture_output=True, text=True,
                           errors="replace", timeout=120)
        self.after = mono_ns()
        self.rc, self.out, self.err = p.returncode, p.stdout, p.stderr
        m = re.search(r"^pid (\d+)$", self.out, re.M)
        self.pid = int(m.group(1)) if m else None

    def show(self):
        return "rc=%s\n--- stdout\n%s--- stderr\n%s" % (self.rc, self.out[-4000:], self.err[-4000:])


def load(path):
    expect(os.path.exists(path), "no trace file %s" % path)
    with open(path, encoding="ascii") as f:
        text = f.read()
    try:
        events = json.loads(text, parse_float=decimal.Decimal)
    except ValueError as e:
        raise Failure("%s is not valid JSON: %s" % (path, e))
    expect(isinstance(events, list), "%s: not a JSON array" % path)
    return events, len(text)


def check_events(events, pid):
    """Common shape; returns (api, backend) lists of complete events."""
    expect(events and events[0].get("ph") == "M" and events[0].get("name") == "process_name",
           "the first event is not the process name")
    api, backend = [], []
    named_threads = set()
    for e in events:
        expect(isinstance(e, dict), "an element is not an object: %r" % (e,))
        expect(e.get("pid") == pid, "event of pid %r, expected %r: %r" % (e.get("pid"), pid, e))
        if e["ph"] == "M":
            if e["name"] == "thread_name":
                named_threads.add(e["tid"])
                expect(e["args"]["name"], "empty thread name")
            continue
        expect(e["ph"] == "X", "unexpected phase %r" % e["ph"])
        for key in ("name", "tid", "ts", "dur", "cat"):
            expect(key in e, "event without %s: %r" % (key, e))
        expect(ns(e["dur"]) >= 0, "negative duration: %r" % e)
        if e["cat"] == "api":
            expect("result" in e["args"], "api event without a result: %r" % e)
            api.append(e)
        else:
            expect(e["cat"] == "backend", "unknown category %r" % e["cat"])
            backend.append(e)
    for e in api + backend:
        expect(e["tid"] in named_threads, "tid %d has no thread_name event" % e["tid"])
    return api, backend


def check_nesting(api, backend):
    """Every backend event lies within the api event of its thread that started last before it
    (api events of one thread do not overlap here), and within no earlier one."""
    by_tid = {}
    for e in api:
        by_tid.setdefault(e["tid"], []).append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])))
    for spans in by_tid.values():
        spans.sort()
        for a, b in zip(spans, spans[1:]):
            expect(a[1] <= b[0], "api events of one thread overlap: %r %r" % (a, b))
    for c in backend:
        cs, ce = ns(c["ts"]), ns(c["ts"]) + ns(c["dur"])
        spans = by_tid.get(c["tid"], [])
        i = bisect.bisect_right(spans, (cs, float("inf"))) - 1
        expect(i >= 0 and spans[i][0] <= cs and ce <= spans[i][1],
               "backend event %r lies in no api event of its thread" % c)


def check_times(events, run):
    """Every complete event lies within the run, on CLOCK_MONOTONIC (1 ms slack)."""
    for e in events:
        if e.get("ph") != "X":
            continue
        s, end = ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])
        expect(run.before - 1000000 <= s and end <= run.after + 1000000,
               "event outside the run's time: %r (run %d..%d ns)" % (e, run.before, run.after))


def calls_file(d, run, expected_calls, path=None, rounds=1):
    """The probe's `calls N` (run `rounds` times): N cudaMalloc events with count 0..N-1, each
    with a nested musaMalloc."""
    events, size = load(path or os.path.join(d, "trace.json"))
    api, backend = check_events(events, run.pid)
    total = expected_calls * rounds
    expect(len(api) == total and len(backend) == total,
           "%d api / %d backend events, expected %d each" % (len(api), len(backend), total))
    for e in api:
        expect(e["name"] == "cudaMalloc" and e["args"]["result"] == 0, "unexpected event %r" % e)
        expect(e["args"]["kind"] == "cudaMemcpyHostToDevice" and "ptr" in e["args"],
               "arguments missing: %r" % e)
    expect(sorted(e["args"]["count"] for e in api) == sorted(list(range(expected_calls)) * rounds),
           "the calls' count arguments are not 0..N-1")
    expect(all(e["name"] == "musaMalloc" for e in backend), "unexpected backend event")
    check_nesting(api, backend)
    check_times(events, run)
    return events, size


# ------------------------------------------------------------------------------------------------
# Scenarios. Each gets a scratch directory and the probe's path.

def expect_compacted(d, name="trace.json"):
    with open(os.path.join(d, name), encoding="ascii") as f:
        text = f.read()
    expect("  " not in text and text.endswith("}]\n"),
           "the file was not compacted at exit (%d bytes, ends %r)" % (len(text), text[-20:]))


def sc_return(probe, d):
    run = Run([probe, "calls", "50"], {"TORCHADA_TRACE": "trace.json"}, d)
    expect(run.rc == 0, "probe failed\n" + run.show())
    calls_file(d, run, 50)
    expect_compacted(d)


def sc_exit(probe, d):
    run = Run([probe, "exit", "50"], {"TORCHADA_TRACE": os.path.join(d, "trace.json")}, d)
    expect(run.rc == 0, "probe failed\n" + run.show())
    calls_file(d, run, 50)
    expect_compacted(d)


def sc_monotonic(probe, d):
    run = Run([probe, "calls", "50"],
              {"TORCHADA_TRACE": "trace.json", "TORCHADA_TRACE_CLOCK": "monotonic"}, d)
    expect(run.rc == 0, "probe failed\n" + run.show())
    calls_file(d, run, 50)


def sc_fork(probe, d):
    run = Run([probe, "fork", "20"], {"TORCHADA_TRACE": "trace.json"}, d)
    expect(run.rc == 0, "probe failed\n" + run.show())
    m = re.search(r"^child (\d+) status 0$", run.out, re.M)
    expect(m, "no child status\n" + run.show())
    child = int(m.group(1))
    calls_file(d, run, 20, rounds=2)  # the parent's file holds the parent's calls only
    child_path = os.path.join(d, "trace.%d.json" % child)
    events, _ = load(child_path)
    api, backend = check_events(events, child)
    expect(len(api) == 21 and len(backend) == 21,
           "child file: %d api / %d backend events, expected 21" % (len(api), len(backend)))
    check_nesting(api, backend)
    check_times(events, run)
    names = sorted(os.listdir(d))
    expect(names == sorted(["trace.json", "trace.%d.json" % child]), "files: %r" % names)


def sc_exec(probe, d):
    run = Run([probe, "exec", "5"], {"TORCHADA_TRACE": "trace.json"}, d)
    expect(run.rc == 0, "probe failed\n" + run.show())
    m = re.search(r"^exec child (\d+) status 0$", run.out, re.M)
    expect(m, "no child status\n" + run.show())
    child = int(m.group(1))
    calls_file(d, run, 5, rounds=2)

    class ChildRun:
        pid, before, after = child, run.before, run.after
    calls_file(d, ChildRun, 5, path=os.path.join(d, "trace.%d.json" % child))


def crash(probe, d, sig_name):
    run = Run([probe, "crash", sig_name], {"TORCHADA_TRACE": "trace.json"}, d)
    signum = SIGNALS[sig_name]
    sanitizer = "Sanitizer" in run.err
    expect(run.rc == -signum or (sanitizer and run.rc != 0),
           "expected death by %s\n%s" % (signum.name, run.show()))
    events, _ = load(os.path.join(d, "trace.json"))
    api, backend = check_events(events, run.pid)
    done = [e for e in api if e["name"] == "cudaMalloc"]
    crashed = [e for e in api if e["name"] == "cudaMemcpy"]
    expect(len(done) == 1 and done[0]["args"]["result"] == 0, "the finished call: %r" % done)
    expect(len(crashed) == 1, "the crashing call is missing: %r" % api)
    c = crashed[0]
    expect(c["args"].get("signal") == signum.name and c["args"]["result"] == -1
           and c["args"].get("what") == sig_name, "crashing call: %r" % c)
    inner = [e for e in backend if e["name"] == "musaMemcpy"]
    expect(len(inner) == 1 and inner[0]["args"].get("signal") == signum.name,
           "the crashing backend call: %r" % backend)
    check_nesting(api, backend)
    check_times(events, run)


def sc_crash_after(probe, d):
    """A fatal signal in a call whose backend call had returned: the call ends by the signal, the
    backend call as it ended (it is kept in the call's event until the call ends)."""
    for fmt in ("json", "binary"):
        sub = os.path.join(d, fmt)
        os.mkdir(sub)
        run = Run([probe, "crash_after"], {"TORCHADA_TRACE": "trace.json",
                                           "TORCHADA_TRACE_FORMAT": fmt}, sub)
        # Under ASan its own handler reports the SEGV and ends the process, after ours has run.
        expect(run.rc == -signal.SIGSEGV or ("Sanitizer" in run.err and run.rc != 0),
               "expected death by SIGSEGV\n" + run.show())
        path = os.path.join(sub, "trace.json")
        if fmt == "binary":
            path, _ = convert(path, os.path.join(sub, "converted.json"))
        events, _ = load(path)
        api, backend = check_events(events, run.pid)
        crashed = [e for e in api if e["name"] == "cudaMemcpy"]
        expect(len(crashed) == 1 and crashed[0]["args"].get("signal") == "SIGSEGV"
               and crashed[0]["args"].get("what") == "after", "%s: the crashing call %r" % (fmt, api))
        inner = [e for e in backend if e["name"] == "musaMemcpy"]
        expect(len(inner) == 1 and "args" not in inner[0],
               "%s: the returned backend call: %r" % (fmt, backend))
        expect(len(api) == 2 and len(backend) == 2, "%s: %r" % (fmt, events))
        check_nesting(api, backend)
        check_times(events, run)


def sc_chain(probe, d):
    run = Run([probe, "chain"], {"TORCHADA_TRACE": "trace.json"}, d)
    expect(run.rc == 3 and "previous SIGSEGV handler ran" in run.err,
           "the program's own handler did not run\n" + run.show())
    events, _ = load(os.path.join(d, "trace.json"))
    api, backend = check_events(events, run.pid)
    expect([e["name"] for e in api].count("cudaMalloc") == 2, "calls before the crash missing")
    expect(any(e["args"].get("signal") == "SIGSEGV" for e in api), "no crashed call")


def sc_threads(probe, d):
    threads, per = 8, 3000
    run = Run([probe, "threads", str(threads), str(per)], {"TORCHADA_TRACE": "trace.json"}, d)
    expect(run.rc == 0, "probe failed\n" + run.show())
    events, size = load(os.path.join(d, "trace.json"))
    expect(size > 1 << 20, "expected a file larger than its first segment (%d bytes)" % size)
    api, backend = check_events(events, run.pid)
    by_tid = {}
    for e in api:
        by_tid.setdefault(e["tid"], []).append(e)
    expect(len(by_tid) == threads, "%d threads traced, expected %d" % (len(by_tid), threads))
    for tid, evs in by_tid.items():
        expect(len(evs) == per, "thread %d: %d events, expected %d" % (tid, len(evs), per))
        expect(sorted(e["args"]["count"] for e in evs) == list(range(per)),
               "thread %d lost or duplicated calls" % tid)
        names = {e["name"] for e in evs}
        expect(names == {"cudaMemcpy", "cudaFree"}, "thread %d: names %r" % (tid, names))
    expect(len(backend) == threads * per, "%d backend events" % len(backend))
    check_nesting(api, backend)
    check_times(events, run)
    workers = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    expect({"probe-worker-%d" % i for i in range(threads)} <= workers,
           "thread names: %r" % workers)


def sc_busy_exit(probe, d):
    """exit() while threads are in the middle of traced calls: what they were writing is blanked or
    complete, the file is valid and compacted, and every thread's completed calls are there."""
    threads = 3
    run = Run([probe, "busy_exit", str(threads)], {"TORCHADA_TRACE": "trace.json"}, d)
    expect(run.rc == 0, "probe failed\n" + run.show())
    events, _ = load(os.path.join(d, "trace.json"))
    api, backend = check_events(events, run.pid)
    by_tid = {}
    for e in api:
        by_tid.setdefault(e["tid"], []).append(e["args"]["count"])
    expect(len(by_tid) == threads, "%d threads traced, expected %d" % (len(by_tid), threads))
    for tid, counts in by_tid.items():
        # A thread's calls are numbered 0, 1, ...: all are there up to the last one written (at
        # least the first: each thread made one before main went on).
        counts.sort()
        expect(counts == list(range(len(counts))),
               "thread %d lost calls: %d calls, first gap near %r" % (tid, len(counts), counts[:5]))
    # (Nesting is not checked: a backend event may end just before exit() and its call after.)
    expect(len(backend) >= len(api) - threads,
           "%d backend events for %d calls" % (len(backend), len(api)))
    expect_compacted(d)


STATS_ROW = re.compile(r"^\[torchada \d+:\d+ info\]\s+(\w+)\s+(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)$")


def stats_table(text):
    head = re.search(r"call statistics \(TORCHADA_STATS\): (\d+) function\(s\), (\d+) call\(s\), "
                     r"(\d+) error\(s\)", text)
    expect(head, "no statistics heading in:\n" + text)
    rows = [m.groups() for m in map(STATS_ROW.match, text.splitlines()) if m]
    return tuple(map(int, head.groups())), [(r[0], int(r[1]), int(r[2]), float(r[3]),
                                             float(r[4])) for r in rows]


def check_stats(text):
    head, rows = stats_table(text)
    expect(head == (4, 16, 8), "heading counts %r" % (head,))
    got = {r[0]: (r[1], r[2]) for r in rows}
    expect(got == {"cudaStreamSynchronize": (3, 0), "cudaMalloc": (7, 2), "cudaFree": (5, 5),
                   "cudaGetDeviceCount": (1, 1)}, "rows %r" % got)
    totals = [r[3] for r in rows]
    expect(totals == sorted(totals, reverse=True), "not sorted by total time: %r" % rows)
    sync = [r for r in rows if r[0] == "cudaStreamSynchronize"][0]
    expect(rows[0][0] == "cudaStreamSynchronize" and 3000 <= sync[4] < 1000000 and
           abs(sync[3] * 1000 / 3 - sync[4]) < 1, "cudaStreamSynchronize row %r" % (sync,))


def sc_stats(probe, d):
    run = Run([probe, "stats"], {"TORCHADA_STATS": "1"}, d)
    expect(run.rc == 0, "probe failed\n" + run.show())
    check_stats(run.err)
    expect(os.listdir(d) == [], "statistics alone wrote files: %r" % os.listdir(d))


def sc_stats_log_file(probe, d):
    log = os.path.join(d, "log.txt")
    run = Run([probe, "stats"], {"TORCHADA_STATS": "1", "TORCHADA_LOG_FILE": log,
                                 "TORCHADA_TRACE": "trace.json"}, d)
    expect(run.rc == 0, "probe failed\n" + run.show())
    expect("call statistics" not in run.err, "statistics went to stderr")
    with open(log) as f:
        check_stats(f.read())
    events, _ = load(os.path.join(d, "trace.json"))
    api, _ = check_events(events, run.pid)
    expect(len(api) == 16, "%d api events, expected 16" % len(api))
    unfinished = [e for e in api if e["name"] == "cudaGetDeviceCount"]
    expect(len(unfinished) == 1 and unfinished[0]["args"]["result"] == -1,
           "a span never finished ends with result -1: %r" % unfinished)


def sc_args(probe, d):
    run = Run([probe, "args"], {"TORCHADA_TRACE": "trace.json"}, d)
    expect(run.rc == 0, "probe failed\n" + run.show())
    events, _ = load(os.path.join(d, "trace.json"))
    api, _ = check_events(events, run.pid)
    by = {e["name"]: e["args"] for e in api}
    a = by["cudaMalloc"]
    expect(a == {"result": 0, "null": "0x0", "p": "0xdeadbeef", "big": 18446744073709551615,
                 "neg": -9223372036854775808, "none": None}, "plain arguments: %r" % a)
    a = by["cudaStreamSynchronize"]
    expect(a == {"result": 5, "quote": 'a"b\\c\nd\te\x01?', "unlabelled": 7,
                 "labelled": "cudaMemcpyDeviceToHost"}, "escaped and enum arguments: %r" % a)
    # The summary itself stays within 120 bytes as JSON members.
    def member_bytes(args):
        return len(",".join(json.dumps({k: v})[1:-1].replace(": ", ":")
                            for k, v in args.items() if k not in ("result", "truncated")))
    b = by["cudaMemcpy"]
    expect(b.get("truncated") is True and b["long"].startswith("xxxx") and
           b["long"].endswith("...") and "after" not in b and member_bytes(b) <= 120,
           "long string: %r" % b)
    c = by["cudaFree"]
    kept = [k for k in c if k.startswith("arg")]
    expect(c.get("truncated") is True and kept == ["arg%d" % i for i in range(len(kept))] and
           0 < len(kept) < 20 and all(c[k] == 123456789 for k in kept) and
           member_bytes(c) <= 120, "too many arguments: %r" % c)
    expect(by["cudaGetDeviceCount"] == {"result": 0, "truncated": True},
           "an argument name that cannot fit: %r" % by["cudaGetDeviceCount"])
    expect(by["cudaMemset"] == {"result": 0, "spaced": '  two  spaces,\n{"ph":  ',
                                "a  name ": " "}, "spaces inside strings: %r" % by["cudaMemset"])
    # Compacted at exit: no padding left outside strings, and the file ends the array.
    with open(os.path.join(d, "trace.json"), encoding="ascii") as f:
        text = f.read()
    outside = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    expect(" " not in outside and text.endswith("}]\n"),
           "padding left after compaction: %r" % outside[:300])


def sc_backtrace(probe, d):
    run = Run([probe, "unsupported"], {"TORCHADA_LOG_LEVEL": "debug"}, d)
    expect(run.rc == 0, "probe failed\n" + run.show())
    for heading, site in (("cudaMemPoolCreate: unsupported call; backtrace:",
                           "probe_unsupported_call_site"),
                          ("cudaMalloc: failed; backtrace:", "probe_failed_call_site")):
        at = run.err.find(heading)
        expect(at >= 0, "no backtrace heading %r\n%s" % (heading, run.show()))
        block = run.err[at:].splitlines()[1:12]
        frames = [l for l in block if re.search(r"\] +#\d+ +0x[0-9a-f]+ ", l)]
        expect(frames, "no frames after %r" % heading)
        expect(any(site in l and "(trace_probe" in l for l in frames),
               "%s (module trace_probe) not among the frames:\n%s" % (site, "\n".join(block)))
        expect(any(re.search(r"\bmain\+0x", l) for l in frames), "main not among the frames")
    quiet = Run([probe, "unsupported"], {}, d)
    expect(quiet.rc == 0 and "backtrace" not in quiet.err and
           "cudaMemPoolCreate is not supported" in quiet.err,
           "backtraces are for debug level only\n" + quiet.show())


def sc_disabled(probe, d):
    for env in ({}, {"TORCHADA_TRACE": ""}, {"TORCHADA_STATS": "0"}):
        run = Run([probe, "calls", "10"], env, d)
        expect(run.rc == 0, "probe failed\n" + run.show())
        expect(os.listdir(d) == [], "files written while disabled (%r): %r" % (env, os.listdir(d)))
        expect(run.err == "", "output while disabled: %r" % run.err)


def sc_size_limit(probe, d):
    run = Run([probe, "many", "20000"], {"TORCHADA_TRACE": "trace.json",
                                         "TORCHADA_TRACE_MAX_MB": "1"}, d)
    expect(run.rc == 0, "probe failed\n" + run.show())
    events, size = load(os.path.join(d, "trace.json"))
    api, _ = check_events(events, run.pid)
    expect(size <= 1 << 20, "file of %d bytes over its 1 MiB limit" % size)
    expect(1000 < len(api) < 20000, "%d events kept" % len(api))
    m = re.search(r"(\d+) event\(s\) were not written", run.err)
    expect(m and int(m.group(1)) == 20000 - len(api),
           "dropped count missing or wrong (kept %d)\n%s" % (len(api), run.show()))


def sc_bad_path(probe, d):
    run = Run([probe, "calls", "5"], {"TORCHADA_TRACE": os.path.join(d, "no", "such", "t.json")},
              d)
    expect(run.rc == 0 and "tracing is off" in run.err, "probe\n" + run.show())
    expect(os.listdir(d) == [], "files: %r" % os.listdir(d))


def convert(log, out=None, extra=()):
    """`torchada-trace convert LOG` (the JSON path it wrote)."""
    tool = os.environ.get("TORCHADA_TRACE_TOOL")
    expect(tool and os.path.exists(tool), "TORCHADA_TRACE_TOOL is not set to torchada-trace")
    argv = [tool, "convert", log] + (["-o", out] if out else []) + list(extra)
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    expect(p.returncode == 0, "%r failed (%d): %s%s" % (argv, p.returncode, p.stdout, p.stderr))
    return out or re.sub(r"(\.json)?\.tdtrace$", ".json", log), p.stdout


def sc_binary(probe, d):
    """TORCHADA_TRACE_FORMAT=binary: the log alone at exit; the converter makes the same JSON."""
    run = Run([probe, "calls", "50"], {"TORCHADA_TRACE": "trace.json",
                                       "TORCHADA_TRACE_FORMAT": "binary"}, d)
    expect(run.rc == 0, "probe failed\n" + run.show())
    expect(os.listdir(d) == ["trace.json"], "files: %r" % os.listdir(d))
    with open(os.path.join(d, "trace.json"), "rb") as f:
        expect(f.read(8) == b"tadalog2", "not a binary log")
    out, text = convert(os.path.join(d, "trace.json"), os.path.join(d, "converted.json"))
    expect("100 event(s)" in text, "converter output: %r" % text)
    calls_file(d, run, 50, path=out)
    expect_compacted(d, "converted.json")


def sc_binary_fork(probe, d):
    """A FILE ending in .tdtrace is binary; a forked child ending with _exit leaves its log."""
    run = Run([probe, "fork", "20"], {"TORCHADA_TRACE": "trace.tdtrace"}, d)
    expect(run.rc == 0, "probe failed\n" + run.show())
    child = int(re.search(r"^child (\d+) status 0$", run.out, re.M).group(1))
    names = sorted(os.listdir(d))
    expect(names == sorted(["trace.tdtrace", "trace.%d.tdtrace" % child]), "files: %r" % names)
    out, _ = convert(os.path.join(d, "trace.tdtrace"))
    expect(out == os.path.join(d, "trace.json"), out)
    calls_file(d, run, 20, rounds=2)
    out, _ = convert(os.path.join(d, "trace.%d.tdtrace" % child))
    events, _ = load(out)
    api, backend = check_events(events, child)
    expect(len(api) == 21 and len(backend) == 21,
           "child file: %d api / %d backend events, expected 21" % (len(api), len(backend)))
    check_nesting(api, backend)
    check_times(events, run)


def sc_binary_crash(probe, d):
    """A fatal signal in binary mode: the log holds the open calls, ended by the signal."""
    run = Run([probe, "crash", "segv"], {"TORCHADA_TRACE": "trace.tdtrace"}, d)
    expect(run.rc == -signal.SIGSEGV or ("Sanitizer" in run.err and run.rc != 0),
           "expected death by SIGSEGV\n" + run.show())
    out, _ = convert(os.path.join(d, "trace.tdtrace"))
    events, _ = load(out)
    api, backend = check_events(events, run.pid)
    c = [e for e in api if e["name"] == "cudaMemcpy"]
    expect(len(c) == 1 and c[0]["args"].get("signal") == "SIGSEGV" and
           c[0]["args"].get("what") == "segv", "crashing call: %r" % api)
    inner = [e for e in backend if e["name"] == "musaMemcpy"]
    expect(len(inner) == 1 and inner[0]["args"].get("signal") == "SIGSEGV", "backend: %r" % backend)
    check_nesting(api, backend)
    check_times(events, run)


def sc_chdir(probe, d):
    """A relative FILE is made absolute when tracing starts: chdir before exit does not move it."""
    run = Run([probe, "chdir", "20"], {"TORCHADA_TRACE": "trace.json"}, d)
    expect(run.rc == 0, "probe failed\n" + run.show())
    expect(os.listdir(d) == ["trace.json"], "files: %r" % os.listdir(d))
    calls_file(d, run, 20)


def sc_killed(probe, d):
    """SIGKILL: no JSON, the log FILE.tdtrace holds every call made; the converter makes it."""
    run = Run([probe, "kill", "30"], {"TORCHADA_TRACE": "trace.json"}, d)
    expect(run.rc == -signal.SIGKILL, "expected death by SIGKILL\n" + run.show())
    expect(os.listdir(d) == ["trace.json.tdtrace"], "files: %r" % os.listdir(d))
    out, _ = convert(os.path.join(d, "trace.json.tdtrace"))
    expect(out == os.path.join(d, "trace.json"), out)
    calls_file(d, run, 30)


def sc_pairs(probe, d):
    """A forwarder's backend call is logged in its call's record; the shapes that are not a
    forwarder's still give the events, arguments and times they gave as separate records (JSON
    made at exit, and the binary log converted)."""
    want = [("api", "cudaStreamSynchronize", 1, 0), ("backend", "musaStreamSynchronize"),
            ("api", "cudaMalloc", 2, 100000), ("backend", "musaMalloc"),
            ("api", "cudaMemcpy", None, 0), ("backend", "musaMemcpy"),
            ("backend", "musaMemcpyAsync"), ("backend", "musaFree"),
            ("api", "cudaLaunchKernel", None, 0), ("backend", "musaLaunchKernel"),
            ("api", "cudaGetDevice", 3, 0), ("backend", "musaGetDevice"),
            ("api", "cudaEventRecord", None, 0), ("backend", "musaEventRecord"),
            ("api", "cudaDeviceSynchronize", 8, 0), ("backend", "musaDeviceSynchronize"),
            ("api", "cudaStreamQuery", 9, 0), ("backend", "musaStreamQuery")]
    for n, backend in ((4, "musaMalloc"), (5, "musaMallocAsync"), (6, "musaMallocAsync"),
                       (7, "musaMalloc")):
        want += [("api", "cudaMalloc", n, 0), ("backend", backend)]
    for fmt in ("json", "binary"):
        sub = os.path.join(d, fmt)
        os.mkdir(sub)
        run = Run([probe, "pairs"], {"TORCHADA_TRACE": "trace.json", "TORCHADA_TRACE_FORMAT": fmt},
                  sub)
        expect(run.rc == 0, "probe failed\n" + run.show())
        path = os.path.join(sub, "trace.json")
        if fmt == "binary":
            path, _ = convert(path, os.path.join(sub, "converted.json"))
        events, _ = load(path)
        api, backend = check_events(events, run.pid)
        got = [(e["cat"], e["name"], e["args"].get("n"), e["args"]["result"]) for e in api]
        got += [(e["cat"], e["name"]) for e in backend]
        expect(sorted(got, key=repr) == sorted(want, key=repr), "%s: events %r" % (fmt, got))
        expect(all(set(e["args"]) <= {"n", "result"} for e in api), "%s: args %r" % (fmt, api))
        def span(e):
            return ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])

        def inside(inner, outer):
            return span(outer)[0] <= span(inner)[0] and span(inner)[1] <= span(outer)[1]

        by_name = {e["name"]: e for e in api + backend}
        expect(ns(by_name["musaStreamSynchronize"]["dur"]) >= 12000000,
               "%s: the long backend call %r" % (fmt, by_name["musaStreamSynchronize"]))
        # Each backend event in the call that made it (the calls are sequential but for
        # cudaGetDevice, made inside musaLaunchKernel); musaFree was made outside any call, and
        # musaEventRecord was still running when its call finished.
        for b in backend:
            if b["name"] in ("musaFree", "musaEventRecord"):
                continue
            outer = sorted((a for a in api if inside(b, a)), key=lambda a: span(a)[0])
            expect(outer and (b["name"] == "musaGetDevice" or len(outer) == 1)
                   and outer[-1]["name"].replace("cuda", "musa") in b["name"],
                   "%s: %r in %r" % (fmt, b, outer))
        expect(inside(by_name["cudaGetDevice"], by_name["musaLaunchKernel"]),
               "%s: cudaGetDevice not inside musaLaunchKernel" % fmt)
        expect(not any(inside(by_name["musaFree"], a) for a in api), "%s: musaFree" % fmt)
        rec, call = by_name["musaEventRecord"], by_name["cudaEventRecord"]
        expect(span(call)[0] <= span(rec)[0] <= span(call)[1] <= span(rec)[1],
               "%s: %r %r" % (fmt, call, rec))
        # kEndsCall: the call ends with its backend call; without, the work after it (2 ms) is
        # the call's.
        sync, msync = by_name["cudaDeviceSynchronize"], by_name["musaDeviceSynchronize"]
        expect(span(sync)[1] == span(msync)[1] and span(sync)[0] <= span(msync)[0],
               "%s: a forwarder's call ends with its backend call: %r %r" % (fmt, sync, msync))
        query, mquery = by_name["cudaStreamQuery"], by_name["musaStreamQuery"]
        expect(span(query)[1] - span(mquery)[1] >= 2000000,
               "%s: the work after a backend call is its call's: %r %r" % (fmt, query, mquery))
        check_times(events, run)


def sc_convert_limit(probe, d):
    """The converter's size limit: events past it are dropped and counted."""
    run = Run([probe, "many", "20000"], {"TORCHADA_TRACE": "trace.tdtrace"}, d)
    expect(run.rc == 0, "probe failed\n" + run.show())
    out, text = convert(os.path.join(d, "trace.tdtrace"), extra=["--max-mb", "1"])
    events, size = load(out)
    api, _ = check_events(events, run.pid)
    m = re.search(r"(\d+) event\(s\), (\d+) dropped", text)
    expect(size <= 1 << 20 and 1000 < len(api) < 20000 and m and int(m.group(1)) == len(api) and
           int(m.group(2)) == 20000 - len(api), "kept %d, %d bytes: %r" % (len(api), size, text))
    bad = os.path.join(d, "bad.tdtrace")
    with open(bad, "w") as f:
        f.write("[]" * 4096)
    p = subprocess.run([os.environ["TORCHADA_TRACE_TOOL"], "convert", bad], capture_output=True)
    expect(p.returncode != 0, "converting a file that is not a log succeeded")


SCENARIOS = {
    "return": sc_return, "exit": sc_exit, "monotonic_clock": sc_monotonic, "fork": sc_fork,
    "exec": sc_exec, "chain": sc_chain, "threads": sc_threads, "busy_exit": sc_busy_exit,
    "stats": sc_stats, "stats_log_file": sc_stats_log_file, "args": sc_args,
    "backtrace": sc_backtrace, "disabled": sc_disabled, "size_limit": sc_size_limit,
    "bad_path": sc_bad_path, "binary": sc_binary, "binary_fork": sc_binary_fork,
    "binary_crash": sc_binary_crash, "convert_limit": sc_convert_limit, "killed": sc_killed,
    "chdir": sc_chdir, "pairs": sc_pairs, "crash_after": sc_crash_after,
}
for _sig in SIGNALS:
    SCENARIOS["crash_" + _sig] = (lambda s: lambda probe, d: crash(probe, d, s))(_sig)


def e2e(program, d):
    run = Run([program], {"TORCHADA_TRACE": "trace.json", "TORCHADA_STATS": "1",
                          "TORCHADA_BACKEND": os.environ.get("TORCHADA_BACKEND", "sim")}, d)
    expect(run.rc == 0, "program failed\n" + run.show())
    path = os.path.join(d, "trace.json")
    expect(os.path.exists(path), "no trace file: the generated exports did not trace")
    events, _ = load(path)
    api, backend = check_events(events, run.pid)
    names = [e["name"] for e in api]
    expect(any(n.startswith("cuda") for n in names), "the trace has no cuda* events")
    for want in ("cudaGetDeviceCount", "cudaMalloc", "cudaMemcpy", "cudaFree"):
        expect(want in names, "%s missing from the trace: %r" % (want, names))
    frees = [e["args"]["result"] for e in api if e["name"] == "cudaFree"]
    expect(len(frees) == 2 and frees[0] == 0 and frees[1] != 0,
           "cudaFree results (a valid, then an invalid pointer): %r" % frees)
    for e in api:
        if e["name"] in ("cudaMalloc", "cudaMemcpy"):
            expect(e["args"]["result"] == 0, "failed call: %r" % e)
    expect(any(e["name"].startswith("musa") for e in backend), "no backend events")
    check_nesting(api, backend)
    # The generated forwarders return their backend call's translated result at once: the call
    # ends when its backend call does (trace::BackendSpan::kEndsCall), one clock read fewer.
    ends = {(e["tid"], ns(e["ts"]) + ns(e["dur"])) for e in backend}
    for e in api:
        if e["name"] in ("cudaGetDeviceCount", "cudaMalloc", "cudaMemcpy", "cudaFree"):
            expect((e["tid"], ns(e["ts"]) + ns(e["dur"])) in ends,
                   "%s does not end with its backend call: %r" % (e["name"], e))
    check_times(events, run)
    head, rows = stats_table(run.err)
    got = {r[0]: r[1] for r in rows}
    expect(got.get("cudaMalloc", 0) >= 1, "cudaMalloc not in the statistics: %r" % got)
    return 0


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    d = tempfile.mkdtemp(prefix="torchada-trace-")
    try:
        if sys.argv[1] == "--e2e":
            return e2e(os.path.abspath(sys.argv[2]), d) or 0
        probe, name = os.path.abspath(sys.argv[1]), sys.argv[2]
        SCENARIOS[name](probe, d)
        print("ok", name)
        return 0
    except Failure as e:
        print("FAIL:", e)
        return 1
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
