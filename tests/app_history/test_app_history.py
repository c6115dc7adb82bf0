#!/usr/bin/python3
"""The event history end to end: the C++ tests (app_history_tests) on SQLite and on a real PostgreSQL
server started here (tests/gallery/pg_server.py: private socket directory, password file; that half
is skipped, saying so, when Debian's postgresql is not installed), then `taconite-gallery events` on
SQLite and PostgreSQL galleries: filters, --since parsing, --json, the table, bad arguments.

Usage (from meson): test_app_history.py <app_history_tests> <event_log_helper> [<taconite-gallery>]
"""
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import pg_server

TESTS, HELPER = map(os.path.abspath, sys.argv[1:3])
CLI = os.path.abspath(sys.argv[3]) if len(sys.argv) > 3 else ""
SERVER = pg_server.Server() if pg_server.installed() else None


def env():
    return SERVER.env if SERVER else dict(os.environ)


def helper(*args):
    r = subprocess.run([HELPER, *args], capture_output=True, text=True, timeout=120, env=env())
    assert r.returncode == 0, r.stderr
    return r


def cli(*args):
    return subprocess.run([CLI, "events", *args], capture_output=True, text=True, timeout=120, env=env())


class LibraryTests(unittest.TestCase):
    def test_cpp_tests_on_sqlite_and_postgres(self):
        e = env()
        if SERVER:
            e["TACONITE_TEST_PG_LOCATION"] = SERVER.createdb("eventlog")
            # EventHistoryPostgresTest stops the server mid-run and starts it again.
            e["TACONITE_TEST_PG_STOP"] = shlex.join(pg_server.server_user_args(SERVER.stop_args())) + " >/dev/null"
            e["TACONITE_TEST_PG_START"] = shlex.join(pg_server.server_user_args(SERVER.start_args())) + " >/dev/null"
        try:
            r = subprocess.run([TESTS], capture_output=True, text=True, timeout=600, env=e)
        finally:
            if SERVER:
                SERVER.ensure_running()
        self.assertEqual(r.returncode, 0, r.stdout[-6000:] + r.stderr[-3000:])
        if SERVER:  # the PostgreSQL half ran, it was not skipped
            self.assertNotIn("SKIPPED", r.stdout)
        else:
            print("NOTE: PostgreSQL (Debian package postgresql) is not installed: its half was skipped")


@unittest.skipUnless(CLI, "taconite-gallery is not built (it needs OpenCV and dlib)")
class EventsCliTests(unittest.TestCase):
    galleries = []

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="taconite-events-cli-")
        cls.galleries = [os.path.join(cls.dir, "people.db")]
        if SERVER:
            cls.galleries.append(SERVER.createdb("eventcli"))
        now = time.time()
        for g in cls.galleries:
            helper("create", g)
            # Ten days, two hours and ten minutes ago, and now: two cameras, two people.
            helper("append", g, str(now - 10 * 86400), "door1", "end", "u-old", "alice", "3.5")
            helper("append", g, str(now - 2 * 3600), "door2", "new", "u-mid", "-")
            helper("append", g, str(now - 2 * 3600 + 5), "door2", "end", "u-mid", "bob", "5")
            helper("append", g, str(now - 600), "door1", "new", "u-new", "-")
            helper("append", g, str(now - 590), "door1", "end", "u-new", "alice", "10")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def events(self, gallery, *args):
        r = cli(gallery, "--json", *args)
        self.assertEqual(r.returncode, 0, r.stderr)
        return [json.loads(line) for line in r.stdout.splitlines()]

    def test_filters_newest_first(self):
        for g in self.galleries:
            with self.subTest(gallery=g):
                every = self.events(g)
                self.assertEqual([e["uid"] for e in every], ["u-new", "u-new", "u-mid", "u-mid", "u-old"])
                times = [e["epoch_s"] for e in every]
                self.assertEqual(times, sorted(times, reverse=True))
                alice = self.events(g, "--person", "alice")
                self.assertEqual([e["uid"] for e in alice], ["u-new", "u-old"])
                self.assertEqual(alice[0]["dwell_s"], 10.0)
                self.assertEqual([e["uid"] for e in self.events(g, "--camera", "door2")], ["u-mid", "u-mid"])
                ends = self.events(g, "--kind", "end", "--camera", "door1")
                self.assertEqual([e["uid"] for e in ends], ["u-new", "u-old"])
                self.assertEqual(len(self.events(g, "--limit", "2")), 2)

    def test_since_and_until_parse_durations_and_iso_times(self):
        for g in self.galleries:
            with self.subTest(gallery=g):
                self.assertEqual({e["uid"] for e in self.events(g, "--since", "30m")}, {"u-new"})
                self.assertEqual({e["uid"] for e in self.events(g, "--since", "12h")}, {"u-new", "u-mid"})
                self.assertEqual(len(self.events(g, "--since", "7d")), 4)
                self.assertEqual({e["uid"] for e in self.events(g, "--until", "7d")}, {"u-old"})
                self.assertEqual({e["uid"] for e in self.events(g, "--since", "3h", "--until", "1h")}, {"u-mid"})
                iso = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 3 * 3600))
                self.assertEqual(len(self.events(g, "--since", iso)), 4)
                day = time.strftime("%Y-%m-%d", time.gmtime(time.time() - 20 * 86400))
                self.assertEqual(len(self.events(g, "--since", day)), 5)
                utc = self.events(g, "--limit", "1")[0]["utc"]
                self.assertRegex(utc, r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")

    def test_table_by_default(self):
        r = cli(self.galleries[0], "--person", "bob")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertTrue(lines[0].startswith("time (UTC)"), lines)
        self.assertEqual(len(lines), 2, r.stdout)
        self.assertIn("door2", lines[1])
        self.assertIn("bob", lines[1])
        self.assertIn("5.0", lines[1])

    def test_bad_arguments_exit_2_with_a_clear_error(self):
        g = self.galleries[0]
        for args, says in [(["--since", "yesterday"], "--since takes"), (["--since", "-5d"], "--since takes"),
                           (["--since", "99999999d"], "--since takes"), (["--limit", "0"], "--limit takes"),
                           (["--limit", "10001"], "--limit takes"), (["--limit", "x"], "--limit takes"),
                           (["--kind", "exit"], "--kind takes"), (["--person"], "needs a value"),
                           (["--bogus"], "unknown option"), ([], "one GALLERY"),
                           (["--since", "1h", "--until", "2h"], "after --until"),
                           (["--person", "x" * 5000], "--person takes")]:
            with self.subTest(args=args):
                r = cli(*([g] if args != [] else []), *args) if args else cli()
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertIn(says, r.stderr)
                self.assertEqual(r.stdout, "")

    def test_a_missing_gallery_is_an_error_naming_it(self):
        missing = os.path.join(self.dir, "absent.db")
        r = cli(missing)
        self.assertEqual(r.returncode, 1)
        self.assertIn(missing, r.stderr)

    def test_a_gallery_without_events_lists_none(self):
        g = os.path.join(self.dir, "empty.db")
        helper("create", g)
        r = cli(g, "--json")
        self.assertEqual((r.returncode, r.stdout), (0, ""), r.stderr)

    def test_help_names_the_command(self):
        r = subprocess.run([CLI, "--help"], capture_output=True, text=True, timeout=60)
        self.assertIn("events GALLERY [--person NAME]", r.stdout)


if __name__ == "__main__":
    try:
        if SERVER:
            SERVER.start()
        result = unittest.main(argv=sys.argv[:1], exit=False).result
    finally:
        if SERVER:
            SERVER.stop()
    sys.exit(0 if result.wasSuccessful() else 1)
