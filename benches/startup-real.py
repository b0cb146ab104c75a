#!/usr/bin/env python3
"""Start-up against a real kube-apiserver, beside a raw fetch, client-go and kubectl, in one run.

    KUBECONFIG=~/k8s-local/kubeconfig benches/startup-real.py [ROUNDS]   # default 5 rounds

Needs a real server (docs/benchmarks.md, "Starting up on a real kube-apiserver"; the k8s-local kit
builds one on loopback) whose kubeconfig user authenticates with a bearer token. Without
KUBECONFIG it says so and exits 0: the tests never need a real server.

For each namespace of NAMESPACES (default `bench-empty:0 bench-5k:5000 bench-20k:20000`), created
with MAKE_FIXTURES (default ../shared/tools/k8s-local/make-fixtures.py) when it does not hold that
many ConfigMaps, each round runs one after the other, whole processes, warm discovery caches:

    curl (JSON)      the list as the binary's first request asks for it (?limit=500&resourceVersion=0)
    curl (metadata)  the same as PartialObjectMetadataList
    watch            kubectl-deltas watch configmaps -n NS -o jsonl --object none --until-synced -q
    watch --metadata-only
    index            kubectl-deltas index configmaps -n NS --by namespace
    record           kubectl-deltas record configmaps -n NS -f FILE: until its timeline says synced
    informerref      client-go's dynamic informer, -until-synced
    kubectl get      kubectl get configmaps -n NS -o json

and prints, per namespace, the median wall time of each from spawn to exit (to `synced` for
`record`), its median ratio to the round's JSON
`curl`, and its median peak RSS (GNU time's %M); `curl`'s first byte and size; and the
load average at start and end. The machine is shared: read ratios, not absolute times.

Environment: KUBECTL_DELTAS_BIN (default target/release/kubectl-deltas, or
$CARGO_TARGET_DIR/release/kubectl-deltas), K8S_LOCAL (default ~/k8s-local: bin/informerref,
bin/kubectl), NAMESPACES, MAKE_FIXTURES, SKIP (a comma-separated list of the names above to leave
out, e.g. `kubectl get`), KUBECTL_DELTAS_BIN_B (another build, whose `watch` runs are added to
each round as `[B]`: before and after a change, alternated).
"""
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def die(message):
    print(f"startup-real: {message}", file=sys.stderr)
    sys.exit(1)


def run(argv, env=None, until=None):
    """Runs argv to its end (or, with `until`, until a stderr line contains it, then SIGINT);
    returns (seconds, peak RSS in KiB, stdout, the wall-clock time of the spawn)."""
    # The peak RSS comes from GNU time: a child that Python spawns (vfork) inherits this
    # process's high-water mark at exec, which would hide the child's own.
    peak_file = tempfile.NamedTemporaryFile(prefix="startup-real-rss-")
    argv = ["/usr/bin/time", "-f", "%M", "-o", peak_file.name] + argv
    spawned, start = time.time(), time.perf_counter()
    p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, start_new_session=True,
                         stderr=subprocess.PIPE if until else subprocess.DEVNULL, text=True)
    elapsed = None
    if until:
        for line in p.stderr:
            if until in line:
                elapsed = time.perf_counter() - start
                os.killpg(p.pid, signal.SIGINT)  # time ignores it, the child stops
                break
    out = p.stdout.read()
    if until:
        p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    if elapsed is None:
        elapsed = time.perf_counter() - start
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode not in (0, -signal.SIGINT, 130) and not (until and elapsed):
        die(f"{' '.join(argv)} exited {p.returncode}")
    with open(peak_file.name) as f:
        peak = int(f.read().split()[-1])
    return elapsed, peak, out, spawned


def watch_phases(out, spawned, elapsed):
    """A `watch -o jsonl` run's phases in ms, from its records' times (the wall clock, as
    `spawned`): spawn to `list-start`, `list-start` to `list-done`, `list-done` to `synced`, and
    `synced` to the process's exit; None without those records."""
    times = {}
    for line in out.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        event = record.get("event") or record.get("kind")
        if event in ("list-start", "list-done", "synced") and event not in times:
            times[event] = parse_time(record["time"])
    if len(times) < 3:
        return None
    marks = [spawned, times["list-start"], times["list-done"], times["synced"], spawned + elapsed]
    return [(b - a) * 1000 for a, b in zip(marks, marks[1:])]


def parse_time(text):
    """Seconds of an RFC 3339 UTC time with microseconds (`2026-11-29T12:33:27.711453Z`)."""
    from datetime import datetime, timezone
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()


def main():
    kubeconfig = os.environ.get("KUBECONFIG")
    if not kubeconfig:
        print("startup-real: no real server given (KUBECONFIG is not set): nothing measured. "
              "docs/benchmarks.md says how to run one on loopback.")
        return 0
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    k8s = os.environ.get("K8S_LOCAL", os.path.expanduser("~/k8s-local"))
    kubectl = os.path.join(k8s, "bin", "kubectl")
    if not os.access(kubectl, os.X_OK):
        kubectl = "kubectl"
    informerref = os.path.join(k8s, "bin", "informerref")
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(REPO, "target"))
    binary = os.environ.get("KUBECTL_DELTAS_BIN", os.path.join(target, "release", "kubectl-deltas"))
    fixtures = os.environ.get("MAKE_FIXTURES",
                              os.path.join(REPO, "..", "shared", "tools", "k8s-local", "make-fixtures.py"))
    skip = {s.strip() for s in os.environ.get("SKIP", "").split(",") if s.strip()}
    namespaces = [(n, int(c)) for n, c in (x.split(":") for x in
                  os.environ.get("NAMESPACES", "bench-empty:0 bench-5k:5000 bench-20k:20000").split())]
    other = os.environ.get("KUBECTL_DELTAS_BIN_B")
    if not os.access(binary, os.X_OK):
        die(f"{binary} is not there: cargo build --release first, or set KUBECTL_DELTAS_BIN")

    def view(path):
        out = subprocess.run([kubectl, "config", "view", "--minify", "--raw", "-o",
                              "jsonpath={" + path + "}"], capture_output=True, text=True)
        return out.stdout.strip() if out.returncode == 0 else ""
    server, token = view(".clusters[0].cluster.server"), view(".users[0].user.token")
    if not server or not token:
        die(f"the kubeconfig {kubeconfig} names no server or no bearer token for the raw fetch")

    def curl(path, accept="application/json"):
        """(first byte as curl counts it, wall time from spawn to exit, bytes)"""
        start = time.perf_counter()
        out = subprocess.run(["curl", "-sk", "-A", "bench", "-H", f"Authorization: Bearer {token}",
                              "-H", f"Accept: {accept}", server + path, "-o", "/dev/null", "-w",
                              "%{http_code} %{time_starttransfer} %{time_total} %{size_download}"],
                             capture_output=True, text=True)
        wall = time.perf_counter() - start
        fields = out.stdout.split()
        if out.returncode != 0 or not fields or fields[0] != "200":
            die(f"{server}{path}: curl {out.returncode}, HTTP {fields[:1]}: is the server up?")
        return float(fields[1]), float(fields[2]), int(fields[3]), wall

    def count(ns):
        out = subprocess.run(["curl", "-sk", "-A", "bench", "-H", f"Authorization: Bearer {token}",
                              f"{server}/api/v1/namespaces/{ns}/configmaps?limit=1"],
                             capture_output=True, text=True)
        try:
            body = json.loads(out.stdout)
            return len(body.get("items") or []) + body["metadata"].get("remainingItemCount", 0)
        except (ValueError, KeyError):
            return -1

    curl("/version")
    for ns, want in namespaces:
        if count(ns) != want:
            if count(ns) > want:
                die(f"namespace {ns} holds more than {want} ConfigMaps: name another in NAMESPACES")
            print(f"creating {want} ConfigMaps in {ns}", file=sys.stderr)
            subprocess.run([sys.executable, fixtures, str(want), ns], check=True,
                           stdout=subprocess.DEVNULL)

    scratch = tempfile.mkdtemp(prefix="startup-real-")
    load_start = os.getloadavg()
    print(f"# {server}, {rounds} rounds, load average {load_start[0]:.2f} {load_start[1]:.2f} "
          f"{load_start[2]:.2f} at start; binary {binary}")
    for ns, want in namespaces:
        list_path = f"/api/v1/namespaces/{ns}/configmaps?limit=500&resourceVersion=0"
        meta = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
        record_file = os.path.join(scratch, "recording.jsonl")
        watch = [binary, "watch", "configmaps", "-n", ns, "-o", "jsonl", "--object", "none",
                 "--until-synced", "-q"]

        def record():
            if os.path.exists(record_file):
                os.remove(record_file)
            return run([binary, "record", "configmaps", "-n", ns, "-f", record_file, "--color",
                        "never"], until="synced")

        runs = [
            ("curl (JSON)", None),
            ("curl (metadata)", None),
            ("watch", lambda: run(watch)),
            ("watch --metadata-only", lambda: run(watch + ["--metadata-only"])),
            ("index", lambda: run([binary, "index", "configmaps", "-n", ns, "--by", "namespace"])),
            ("record", record),
            ("informerref", lambda: run([informerref, "-n", ns, "-until-synced"])),
            ("kubectl get", lambda: run([kubectl, "get", "configmaps", "-n", ns, "-o", "json"])),
        ]
        if other:
            watch_b = [other] + watch[1:]
            runs[4:4] = [("watch [B]", lambda: run(watch_b)),
                         ("watch --metadata-only [B]", lambda: run(watch_b + ["--metadata-only"]))]
        runs = [(name, f) for name, f in runs if name not in skip]
        # Warm the discovery caches (the binary's and kubectl's) and the server's watch cache.
        for name, f in runs:
            if f and name != "record":
                f()
        times = {name: [] for name, _ in runs}
        ratios = {name: [] for name, _ in runs}
        rss = {name: [] for name, _ in runs}
        first_byte = {"curl (JSON)": [], "curl (metadata)": []}
        size = {}
        # Where a `watch` run's time goes, from its own records: spawn to the list's request,
        # the list (request to its last item decoded), and the list's end to HasSynced.
        phases = {name: [] for name, _ in runs if name.startswith("watch")}
        curl_total = {"curl (JSON)": [], "curl (metadata)": []}
        for _ in range(rounds):
            raw = None
            for name, f in runs:
                if f is None:
                    ttfb, total, nbytes, wall = curl(list_path, meta if "metadata" in name else "application/json")
                    first_byte[name].append(ttfb)
                    curl_total[name].append(total)
                    size[name] = nbytes
                    elapsed, peak = wall, None
                else:
                    elapsed, peak, out, spawned = f()
                    if name in phases:
                        phases[name].append(watch_phases(out, spawned, elapsed))
                if name == "curl (JSON)":
                    raw = elapsed
                times[name].append(elapsed)
                if raw:
                    ratios[name].append(elapsed / raw)
                if peak:
                    rss[name].append(peak)
        print(f"\n## {ns}: {want} ConfigMaps")
        print("| run | median | × curl (JSON) | peak RSS |")
        print("| --- | --- | --- | --- |")
        for name, _ in runs:
            median = statistics.median(times[name]) * 1000
            spread = f"{min(times[name]) * 1000:.0f}–{max(times[name]) * 1000:.0f}"
            extra = ""
            if name in first_byte:
                extra = (f" (first byte {statistics.median(first_byte[name]) * 1000:.1f} ms, "
                         f"{size[name] / 1e6:.2f} MB)")
            ratio = f"{statistics.median(ratios[name]):.2f}×" if ratios[name] else ""
            peak = f"{statistics.median(rss[name]) / 1024:.0f} MiB" if rss[name] else ""
            print(f"| {name} | {median:.1f} ms ({spread}){extra} | {ratio} | {peak} |")
        print(f"\nWhere the time goes (medians, ms): `curl` from its start to its last byte "
              f"{statistics.median(curl_total['curl (JSON)']) * 1000:.1f} (JSON), "
              f"{statistics.median(curl_total['curl (metadata)']) * 1000:.1f} (metadata)")
        print("| run | spawn to list request | list request to last item decoded | "
              "list's end to HasSynced | HasSynced to exit |")
        print("| --- | --- | --- | --- | --- |")
        for name, rows in phases.items():
            rows = [r for r in rows if r]
            if rows:
                cells = " | ".join(f"{statistics.median(col):.1f}" for col in zip(*rows))
                print(f"| {name} | {cells} |")
    load_end = os.getloadavg()
    print(f"\n# load average {load_end[0]:.2f} {load_end[1]:.2f} {load_end[2]:.2f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
