#!/usr/bin/python3
"""PostgreSQL gallery benchmarks (issue 24), on a private PostgreSQL server this script starts (the
tests' tests/gallery/pg_server.py, with track_commit_timestamp=on) and removes at the end:

- load: `gallery-bench --load` (store open + every template read + exact index build, what
  taconiteidentify's start and each reload do) of the same N random 512-d templates from
  PostgreSQL and from an SQLite file, median of 5 passes;
- change latency: `change-latency` (a pipeline playing in one process, a writer process committing
  one identity per round) with the CLI's notifying commit and with a silent writer (the poll alone),
  both with poll-interval 1000 ms.

Usage: bench/gallery/pg_gallery_bench.py BUILD_DIR [--templates 100000] [--rounds 12] [--out FILE]
One JSON line per result on stdout (and appended to --out).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "gallery"))
import pg_server  # noqa: E402


def machine():
    model, flags = "", set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name") and not model:
                model = line.split(":", 1)[1].strip()
            elif line.startswith("flags") and not flags:
                flags = set(line.split(":", 1)[1].split())
    isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "SSE"
    return {"what": "machine", "cpu": model, "isa": isa, "cores": os.cpu_count(),
            "avx512": sorted(f for f in flags if f.startswith("avx512"))}


def json_lines(text):
    return [json.loads(l) for l in text.splitlines() if l.startswith("{")]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("--templates", type=int, default=100000)
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--out")
    args = parser.parse_args()
    bench = os.path.join(args.build, "bench", "gallery", "gallery-bench")
    latency = os.path.join(args.build, "bench", "gallery", "change-latency")
    cli = os.path.join(args.build, "tools", "gallery", "taconite-gallery")
    results = [machine()]

    def record(lines):
        for r in lines:
            print(json.dumps(r), flush=True)
            results.append(r)

    print(json.dumps(results[0]), flush=True)
    server = pg_server.Server("-c track_commit_timestamp=on")
    work = tempfile.mkdtemp(prefix="taconite-pg-bench-")
    try:
        server.start()
        env = server.env

        def run(argv):
            r = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=3600)
            if r.returncode != 0:
                raise RuntimeError(" ".join(argv) + ": " + r.stdout + r.stderr)
            return json_lines(r.stdout)

        # Load: the same templates (same seed) in both stores.
        pg_db = server.createdb("load")
        lite = os.path.join(work, "load.db")
        for location in (pg_db, lite):
            record(run([bench, "--fill", location, "--fill-count", str(args.templates)]))
        for location in (pg_db, lite):
            record(run([bench, "--load", location, "--passes", "5"]))
        size = server.psql("load", "SELECT pg_total_relation_size('templates')").strip()
        record([{"what": "pg_templates_table", "templates": args.templates, "bytes": int(size)}])

        # Change latency: the notifying CLI vs a silent writer (the poll alone), poll 1000 ms.
        for writer in ("notify", "silent"):
            db = server.createdb("latency_" + writer)
            record(run([latency, db, "--writer", writer, "--rounds", str(args.rounds), "--poll-interval", "1000",
                        "--cli", cli, "--psql", pg_server.pg("psql")]))
    finally:
        server.stop()
        for f in os.listdir(work):
            os.remove(os.path.join(work, f))
        os.rmdir(work)
    if args.out:
        with open(args.out, "a") as f:
            for r in results:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
