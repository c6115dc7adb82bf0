#!/usr/bin/python3
"""taconite-gallery on a real PostgreSQL server (Debian's postgresql 15), started here on a private
Unix socket directory (no TCP) as a non-root user, with password (SCRAM) logins read from a
password file, and stopped and removed at the end. One server for the whole file.

Usage (from meson): test_gallery_postgres.py <taconite-gallery> <bundle dir> [<gst tests binary>]
Skips (exit 77) when the PostgreSQL server binaries are absent. With the gst tests binary, its
IdentifyTest.PostgresGallery* tests run against this server too (taconiteidentify names the
astronaut from a PostgreSQL gallery; an enrolment while it plays arrives through LISTEN/NOTIFY), and
IdentifyHarnessTest.PostgresOutage* (the server stopped and started while a pipeline plays: it is
given the shell commands that do it).
"""
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest

import pg_server

CLI, BUNDLE = sys.argv[1:3]
GST_TESTS = sys.argv[3] if len(sys.argv) > 3 else ""
ASTRONAUT = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png"
MESSI = "/usr/share/doc/opencv-doc/examples/data/messi5.jpg"
USER, PASSWORD = pg_server.USER, pg_server.PASSWORD
SERVER = pg_server.Server()  # one for the whole file
createdb, location, psql = SERVER.createdb, SERVER.location, SERVER.psql


def run(*args, env=None):
    """The CLI with the test server's password file. The timeout only guards against a hang."""
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=600,
                          env=SERVER.env if env is None else env)


def error_line(test, result):
    test.assertEqual(result.returncode, 1, result.stdout + result.stderr)
    lines = [l for l in result.stderr.splitlines() if l.startswith("taconite-gallery: error: ")]
    test.assertEqual(len(lines), 1, result.stderr)
    return lines[0]


class PostgresGalleryTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="taconite-pg-cli-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def ok(self, *args):
        r = run(*args)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        return r.stdout

    def enroll(self, gallery, name, *photo):
        return self.ok("enroll", gallery, "--bundle", BUNDLE, "--name", name, *photo)

    def test_create_enroll_list_remove_on_postgres(self):
        db = createdb("lifecycle")
        self.ok("create", db, "--bundle", BUNDLE)
        self.assertIn("schema version 2", self.ok("stats", db))
        self.enroll(db, "astronaut", ASTRONAUT)
        self.enroll(db, "messi", "--largest", MESSI)
        listed = self.ok("list", db).splitlines()
        self.assertEqual([l.split("\t")[:3] for l in listed],
                         [["1", "astronaut", "1 template(s)"], ["2", "messi", "1 template(s)"]])
        self.assertIn("astronaut", self.ok("match", db, "--bundle", BUNDLE, ASTRONAUT).splitlines()[0])
        self.ok("remove", db, "astronaut")
        self.assertEqual([l.split("\t")[1] for l in self.ok("list", db).splitlines()], ["messi"])
        # Ids are never given again: a newcomer after a removal gets a new one.
        self.enroll(db, "astronaut", ASTRONAUT)
        self.assertIn("3\tastronaut", self.ok("list", db))
        stats = self.ok("stats", db)
        self.assertIn("revision 4", stats)
        # Creating it again is refused, the gallery kept.
        self.assertIn("already holds a taconite gallery", error_line(self, run("create", db, "--bundle", BUNDLE)))
        self.assertEqual(len(self.ok("list", db).splitlines()), 2)

    def test_copy_both_ways_keeps_ids(self):
        lite = os.path.join(self.dir, "people.db")
        self.ok("create", lite, "--bundle", BUNDLE)
        self.enroll(lite, "gone", ASTRONAUT)
        self.enroll(lite, "astronaut", ASTRONAUT)
        self.enroll(lite, "messi", "--largest", MESSI)
        self.ok("remove", lite, "gone")  # ids 2 and 3 left: a gap to keep
        db = createdb("copied")
        self.ok("copy", lite, db)
        self.assertEqual(self.ok("list", db), self.ok("list", lite))
        self.assertEqual(self.ok("export", db), self.ok("export", lite))
        back = os.path.join(self.dir, "back.db")
        self.ok("copy", db, back)
        self.assertEqual(self.ok("list", back), self.ok("list", lite))
        self.assertEqual(self.ok("export", back), self.ok("export", lite))
        # export / import into an existing PostgreSQL gallery: the same templates, nothing added twice.
        exported = os.path.join(self.dir, "people.jsonl")
        self.ok("export", lite, exported)
        self.assertIn("imported 0 template(s)", self.ok("import", db, exported))
        imported = createdb("imported")
        self.ok("create", imported, "--bundle", BUNDLE)
        self.assertIn("imported 2 template(s)", self.ok("import", imported, exported))
        # A copied gallery never gives a copied id again.

        # (PostgreSQL's sequences also spend an id on an insert that meets an existing name, as
        # the import above did: ids may skip, never come back.)
        self.enroll(db, "newcomer", ASTRONAUT)
        newcomer = [l for l in self.ok("list", db).splitlines() if l.split("\t")[1] == "newcomer"]
        self.assertGreater(int(newcomer[0].split("\t")[0]), 3)
        self.enroll(back, "newcomer", ASTRONAUT)
        self.assertIn("4\tnewcomer", self.ok("list", back))
        # A non-empty destination is refused (ids would clash), the destination unchanged.
        self.assertIn("already holds", error_line(self, run("copy", lite, db)))
        self.assertEqual(len(self.ok("list", db).splitlines()), 3)

    def test_copy_refuses_a_destination_of_another_model(self):
        lite = os.path.join(self.dir, "people.db")
        self.ok("create", lite, "--bundle", BUNDLE)
        self.enroll(lite, "astronaut", ASTRONAUT)
        db = createdb("othermodel_copy")
        self.ok("create", db, "--bundle", BUNDLE)
        psql("othermodel_copy", "UPDATE gallery SET model_fingerprint = repeat('f', 64), model = 'other'")
        line = error_line(self, run("copy", lite, db))
        self.assertIn("made with another model", line)
        self.assertIn("othermodel_copy", line)
        self.assertEqual(self.ok("list", db), "")

    def test_concurrent_enrolment_from_several_processes_loses_nothing(self):
        db = createdb("concurrent")
        self.ok("create", db, "--bundle", BUNDLE)
        names = [f"person{i}" for i in range(6)]
        procs = [subprocess.Popen([CLI, "enroll", db, "--bundle", BUNDLE, "--name", n, ASTRONAUT],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=SERVER.env)
                 for n in names]
        for p in procs:
            out, err = p.communicate(timeout=600)
            self.assertEqual(p.returncode, 0, out + err)
        listed = self.ok("list", db).splitlines()
        self.assertEqual(sorted(l.split("\t")[1] for l in listed), names)
        self.assertEqual(sorted(int(l.split("\t")[0]) for l in listed), list(range(1, 7)))
        self.assertIn("revision 6", self.ok("stats", db))  # one revision per enrolment

    def test_wrong_password_is_a_clear_error(self):
        db = createdb("wrongpassword")
        wrong = os.path.join(self.dir, "pgpass")
        with open(wrong, "w") as f:
            f.write(f"*:*:*:{USER}:not-the-password\n")
        os.chmod(wrong, 0o600)
        line = error_line(self, run("list", db, env=dict(SERVER.env, PGPASSFILE=wrong)))
        self.assertIn(db, line)
        self.assertIn("password authentication failed", line)
        self.assertIn("wrong password", line)
        # No password at all: the error says where it goes.
        none = os.path.join(self.dir, "none")
        line = error_line(self, run("list", db, env=dict(SERVER.env, PGPASSFILE=none)))
        self.assertIn("password file", line)

    def test_a_password_in_the_connection_string_is_refused_and_not_shown(self):
        db = createdb("passwordinstring")
        self.ok("create", db, "--bundle", BUNDLE)
        with_password = f"postgresql://{USER}:{PASSWORD}@/passwordinstring?host={SERVER.sockets}"
        line = error_line(self, run("list", with_password))
        self.assertIn("holds a password", line)
        self.assertIn("passwordinstring", line)
        self.assertNotIn(PASSWORD, line)
        self.ok("list", db)  # the same gallery, its password in the password file

    def test_a_database_of_another_schema_is_a_clear_error_naming_the_gallery(self):
        db = createdb("otherschema")
        psql("otherschema", "CREATE TABLE identities(person text)")
        line = error_line(self, run("list", db))
        self.assertIn(db, line)
        self.assertIn("not a taconite gallery", line)
        empty = createdb("emptydatabase")
        self.assertIn("not a taconite gallery", error_line(self, run("list", empty)))
        newer = createdb("newerschema")
        self.ok("create", newer, "--bundle", BUNDLE)
        psql("newerschema", "UPDATE gallery SET schema_version = 99")
        line = error_line(self, run("list", newer))
        self.assertIn(newer, line)
        self.assertIn("schema version 99", line)
        damaged = createdb("damagedtemplate")
        self.ok("create", damaged, "--bundle", BUNDLE)
        self.enroll(damaged, "astronaut", ASTRONAUT)
        psql("damagedtemplate", "UPDATE templates SET embedding = '\\x00'")
        line = error_line(self, run("export", damaged))
        self.assertIn(damaged, line)
        self.assertIn("holds 1 bytes, expected", line)

    def test_a_database_of_another_model_is_a_clear_error_naming_the_gallery(self):
        db = createdb("othermodel")
        self.ok("create", db, "--bundle", BUNDLE)
        psql("othermodel", "UPDATE gallery SET model_fingerprint = repeat('f', 64), model = 'other'")
        line = error_line(self, run("enroll", db, "--bundle", BUNDLE, "--name", "astronaut", ASTRONAUT))
        self.assertIn(db, line)
        self.assertIn("made with another model", line)

    def test_an_unreachable_server_is_a_clear_error(self):
        nowhere = f"postgresql:///gallery?host={self.dir}&user={USER}"
        line = error_line(self, run("list", nowhere))
        self.assertIn(nowhere, line)
        self.assertIn("unreachable", line)

    def test_identify_names_the_astronaut_from_a_postgres_gallery(self):
        if not GST_TESTS:
            self.skipTest("the gst tests binary was not given")
        env = dict(SERVER.env, TACONITE_TEST_PG_GALLERY=createdb("identify"),
                   TACONITE_TEST_PG_LIVE_GALLERY=createdb("identifylive"))
        r = subprocess.run([GST_TESTS, "--gtest_filter=IdentifyTest.PostgresGallery*"],
                           capture_output=True, text=True, timeout=900, env=env)
        self.assertEqual(r.returncode, 0, r.stdout[-4000:] + r.stderr[-4000:])
        self.assertIn("[  PASSED  ] 2 tests", r.stdout)
        self.assertNotIn("SKIPPED", r.stdout)

    def test_identify_keeps_going_through_a_server_outage_and_recovers(self):
        if not GST_TESTS:
            self.skipTest("the gst tests binary was not given")
        # The gst test stops and starts the server itself, when its pipeline is at the right point.
        env = dict(SERVER.env, TACONITE_TEST_PG_OUTAGE_GALLERY=createdb("outage"),
                   TACONITE_TEST_PG_STOP=shlex.join(pg_server.server_user_args(SERVER.stop_args())) + " >/dev/null",
                   TACONITE_TEST_PG_START=shlex.join(pg_server.server_user_args(SERVER.start_args())) + " >/dev/null")
        try:
            r = subprocess.run([GST_TESTS, "--gtest_filter=IdentifyHarnessTest.PostgresOutage*"],
                               capture_output=True, text=True, timeout=900, env=env)
        finally:
            SERVER.ensure_running()
        self.assertEqual(r.returncode, 0, r.stdout[-4000:] + r.stderr[-4000:])
        self.assertIn("[  PASSED  ] 1 test", r.stdout)
        self.assertNotIn("SKIPPED", r.stdout)


if __name__ == "__main__":
    if not pg_server.installed():
        print("SKIP: the PostgreSQL server binaries (Debian package postgresql) are not installed")
        sys.exit(77)
    try:
        SERVER.start()
        result = unittest.main(argv=sys.argv[:1], exit=False).result
    finally:
        SERVER.stop()
    sys.exit(0 if result.wasSuccessful() else 1)
