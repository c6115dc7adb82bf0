#!/usr/bin/python3
"""taconite-gallery on a real PostgreSQL server (Debian's postgresql 15), started here on a private
Unix socket directory (no TCP) as a non-root user, with password (SCRAM) logins read from a
password file, and stopped and removed at the end. One server for the whole file.

Usage (from meson): test_gallery_postgres.py <taconite-gallery> <bundle dir> <unknown_faces_helper>
                    [<gst tests binary>]
Skips (exit 77) when the PostgreSQL server binaries are absent. With the gst tests binary, its
IdentifyTest.PostgresGallery* tests run against this server too (taconiteidentify names the
astronaut from a PostgreSQL gallery; an enrolment while it plays arrives through LISTEN/NOTIFY;
keep-unknowns keeps messi's unknown track in it), and IdentifyHarnessTest.PostgresOutage* (the server
stopped and started while a pipeline plays: it is given the shell commands that do it).
"""
import json
import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import unittest

import cv2

import pg_server
import unknown_faces_fixture as fixture

CLI, BUNDLE, UNKNOWN_FACES_HELPER = map(os.path.abspath, sys.argv[1:4])
GST_TESTS = sys.argv[4] if len(sys.argv) > 4 else ""
ASTRONAUT, MESSI = fixture.ASTRONAUT, fixture.MESSI
USER, PASSWORD = pg_server.USER, pg_server.PASSWORD
SERVER = pg_server.Server()  # one for the whole file
createdb, location, psql = SERVER.createdb, SERVER.location, SERVER.psql


def run(*args, env=None):
    """The CLI with the test server's password file. The timeout only guards against a hang."""
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=600,
                          env=SERVER.env if env is None else env)


def add_unknown(gallery, lines, *retention):
    return fixture.add_unknown(UNKNOWN_FACES_HELPER, gallery, lines, *retention, env=SERVER.env)


def notified_while(database, command):
    """Whether `command` (a shell command) makes the server NOTIFY taconite_gallery: psql listens,
    runs it, then asks the server once more and so prints what arrived meanwhile."""
    script = f"LISTEN taconite_gallery;\n\\! {command}\nSELECT 1;\n"
    r = subprocess.run([pg_server.pg("psql"), "-v", "ON_ERROR_STOP=1", "-qAt", "-d", database], input=script,
                       capture_output=True, text=True, timeout=600, env=SERVER.env)
    assert r.returncode == 0, r.stdout + r.stderr
    return "Asynchronous notification" in r.stdout


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
        self.assertIn("\nunknown faces 0\n", stats)
        self.assertNotIn("file bytes", stats)  # no file of its own
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

    def test_copy_moves_the_sequences_past_every_copied_id(self):
        """Issue 29 bug 5: after a copy the next enrolments get new ids whatever the largest copied
        id: 1 (a fresh sequence's own last_value: the next enrolment collided on it), 2, a large
        one, or none at all."""
        for case, ids in (("one", [1]), ("two", [1, 2]), ("large", [1000000]), ("none", [])):
            lite = os.path.join(self.dir, f"seq-{case}.db")
            self.ok("create", lite, "--bundle", BUNDLE)
            for i in range(len(ids)):
                self.enroll(lite, f"person{i}", ASTRONAUT)
            with sqlite3.connect(lite) as db:  # the ids wanted, identities and templates alike
                for i, wanted in reversed(list(enumerate(ids, start=1))):
                    db.execute("UPDATE identities SET id = ? WHERE id = ?", (wanted, i))
                    db.execute("UPDATE templates SET id = ?, identity_id = ? WHERE id = ?", (wanted, wanted, i))
            db.close()
            copied = createdb(f"sequences_{case}")
            self.ok("copy", lite, copied)
            self.enroll(copied, "newcomer1", ASTRONAUT)
            self.enroll(copied, "newcomer2", ASTRONAUT)
            rows = [l.split("\t") for l in self.ok("list", copied).splitlines()]
            self.assertEqual(sorted(int(r[0]) for r in rows if not r[1].startswith("newcomer")), ids, case)
            new = sorted(int(r[0]) for r in rows if r[1].startswith("newcomer"))
            self.assertEqual(len(new), 2, case)
            self.assertGreater(new[0], max(ids, default=0), case)
            templates = psql(f"sequences_{case}", "SELECT max(id), count(*) FROM templates").split("|")
            self.assertEqual(int(templates[1]), len(ids) + 2, case)

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

    def dim(self, gallery):
        return int(next(l for l in self.ok("stats", gallery).splitlines() if l.startswith("embedding size")).split()[-1])

    def test_unknown_faces_are_kept_with_retention_and_no_revision_or_notification(self):
        db = createdb("unknowns")
        self.ok("create", db, "--bundle", BUNDLE)
        dim = self.dim(db)
        axis = lambda i: [4.0 if j == i else 0.0 for j in range(dim)]
        jpeg = os.path.join(self.dir, "face.jpg")
        with open(jpeg, "wb") as f:
            f.write(bytes([0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3, 0xFF, 0xD9]))
        r = add_unknown(db, [fixture.line(axis(0), jpeg=jpeg, nearest=3, nearest_name="alice", similarity=0.25),
                             fixture.line(axis(1), stream="yard"), fixture.line(axis(2))], 2)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split(), ["1", "2", "3"])
        listed = subprocess.run([UNKNOWN_FACES_HELPER, db, "--list"], capture_output=True, text=True, timeout=600,
                                env=SERVER.env)
        self.assertEqual(listed.returncode, 0, listed.stderr)
        rows = [l.split("\t") for l in listed.stdout.splitlines()]
        self.assertEqual([row[0] for row in rows], ["2", "3"])  # max_count 2: the oldest went
        self.assertEqual(rows[0][1:5], ["yard", "7", str(fixture.T0), str(fixture.T0 + 4000)])
        self.assertEqual((rows[0][10], rows[0][11]), ("4", "0"))  # norm 4, stored at unit length
        self.assertIn("\nrevision 0\n", self.ok("stats", db))  # PostgreSQL: create made none
        # A face with a picture reads back whole.
        r = add_unknown(db, [fixture.line(axis(3), jpeg=jpeg, nearest=3, nearest_name="alice", similarity=0.25)])
        self.assertEqual(r.stdout.split(), ["4"])
        self.assertEqual(psql("unknowns", "SELECT length(jpeg), nearest_name, nearest_similarity FROM unknown_faces"
                                          " WHERE id = 4").strip(), "9|alice|0.25")
        # By age: a face stored 1000 s ago goes when the next add keeps 600 s.
        psql("unknowns", "UPDATE unknown_faces SET created_unix = created_unix - 1000 WHERE id = 2")
        self.assertEqual(add_unknown(db, [fixture.line(axis(4))], 10, 600).stdout.split(), ["5"])
        self.assertEqual(psql("unknowns", "SELECT id FROM unknown_faces ORDER BY id").split(), ["3", "4", "5"])
        # Ids are never given again.
        psql("unknowns", "DELETE FROM unknown_faces")
        self.assertEqual(add_unknown(db, [fixture.line(axis(5))]).stdout.split(), ["6"])
        # No NOTIFY for an unknown face; an enrolment notifies (the check can see one).
        face = os.path.join(self.dir, "face.txt")
        with open(face, "w") as f:
            f.write(fixture.line(axis(6)))
        self.assertFalse(notified_while("unknowns", f"{UNKNOWN_FACES_HELPER} '{db}' < {face} >/dev/null"))
        self.assertEqual(psql("unknowns", "SELECT count(*) FROM unknown_faces").strip(), "2")
        self.assertIn("\nrevision 0\n", self.ok("stats", db))
        self.assertTrue(notified_while("unknowns", f"{CLI} enroll '{db}' --bundle {BUNDLE} --name a {ASTRONAUT}"
                                                   " >/dev/null"))

    def test_hostile_unknown_faces_are_refused_naming_the_field_and_the_gallery(self):
        db = createdb("hostileunknowns")
        self.ok("create", db, "--bundle", BUNDLE)
        dim = self.dim(db)
        good = [1.0] * dim
        huge = os.path.join(self.dir, "huge.jpg")
        with open(huge, "wb") as f:
            f.write(bytes([0xFF, 0xD8]) + bytes(256 * 1024))
        cases = [(fixture.line(["nan"] + good[1:]), "value 0 is not finite"),
                 (fixture.line(good[1:]), f"has {dim - 1} values, the gallery holds {dim}"),
                 (fixture.line(good, jpeg=huge), "jpeg of 262146 bytes, at most 262144"),
                 (fixture.line(good, stream="caf\u00e9\u2028x"), "stream name holds a control character"),
                 (fixture.line(good, first=2000, last=1000), "first_seen_ms 2000 is after last_seen_ms 1000"),
                 (fixture.line(good, quality="nan"), "quality nan"),
                 (fixture.line(good, similarity="-1.5"), "nearest_similarity -1.5")]
        for line, expected in cases:
            r = add_unknown(db, [line])
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            self.assertIn(expected, r.stderr)
            self.assertIn(db + ": unknown face", r.stderr)
        self.assertEqual(psql("hostileunknowns", "SELECT count(*) FROM unknown_faces").strip(), "0")

    def test_an_older_gallery_gets_the_unknown_faces_table_on_the_first_read_write_use(self):
        db = createdb("olderunknowns")
        self.ok("create", db, "--bundle", BUNDLE)
        psql("olderunknowns", "DROP TABLE unknown_faces")
        # Readers see none and write nothing.
        listed = subprocess.run([UNKNOWN_FACES_HELPER, db, "--list"], capture_output=True, text=True, timeout=600,
                                env=SERVER.env)
        self.assertEqual((listed.returncode, listed.stdout), (0, ""), listed.stderr)
        self.assertEqual(psql("olderunknowns", "SELECT to_regclass('unknown_faces') IS NULL").strip(), "t")
        r = add_unknown(db, [fixture.line([1.0] * self.dim(db))])
        self.assertEqual(r.stdout.split(), ["1"], r.stderr)
        self.assertIn("\nrevision 0\n", self.ok("stats", db))
        self.assertIn("schema version 2", self.ok("stats", db))

    def test_review_unknown_faces_on_postgres(self):
        db = createdb("review")
        self.ok("create", db, "--bundle", BUNDLE)
        faces = fixture.review_faces(fixture.photo_embeddings(CLI, BUNDLE, self.dir, env=SERVER.env), self.dir)
        self.assertEqual(add_unknown(db, faces).stdout.split(), ["1", "2", "3", "4", "5", "6"])
        sheets = os.path.join(self.dir, "sheets")
        rows = [l.split("\t") for l in self.ok("unknowns", db, "--sheets", sheets).splitlines()]
        self.assertEqual([r[:3] for r in rows], [["cluster 1", "3 face(s)", "door,yard"],
                                                 ["cluster 4", "2 face(s)", "door"], ["cluster 6", "1 face(s)", "lobby"]])
        self.assertEqual(rows[0][3], "2025-12-01T12:00:00.000Z .. 2025-12-01T12:02:01.000Z")
        self.assertEqual(rows[0][4], "nearest messi (0.310)")
        messi = cv2.imread(os.path.join(sheets, "cluster-4.jpg"))
        self.assertEqual(messi.shape, (112 + 48, 224, 3))  # tiles of 112 and their captions
        self.assertGreater(messi[:112, :112].std(), 20)  # a picture read back from bytea
        self.assertLess(messi[:112, 112:].std(), 3)  # none kept: grey
        # An unknown cluster: a clear error, nothing changed.
        line = error_line(self, run("name", db, "999", "Nobody"))
        self.assertIn(db + ": no cluster 999", line)
        self.assertIn("\nrevision 0\n", self.ok("stats", db))
        # name: one revision and a NOTIFY, so running pipelines reload; the cluster is gone.
        keys = {o["cluster"]: o["key"] for o in map(json.loads, self.ok("unknowns", db, "--json").splitlines())}
        # A key of another membership (here: another threshold) is refused, nothing changed.
        line = error_line(self, run("name", db, keys[1], "Astronaut", "--threshold", "0.0001"))
        self.assertIn(db + ": cluster 1 is not the one listed", line)
        self.assertIn("\nrevision 0\n", self.ok("stats", db))
        self.assertTrue(notified_while("review", f"{CLI} name '{db}' {keys[1]} Astronaut --templates 2 >/dev/null"))
        self.assertIn("\nrevision 1\n", self.ok("stats", db))
        self.assertEqual(self.ok("list", db).split("\t")[:3], ["1", "Astronaut", "2 template(s)"])
        self.assertEqual(psql("review", "SELECT id FROM unknown_faces ORDER BY id").split(), ["4", "5", "6"])
        # forget: deleted, no revision, no NOTIFY.
        self.assertFalse(notified_while("review", f"{CLI} forget '{db}' {keys[4]} >/dev/null"))
        self.assertEqual(psql("review", "SELECT id FROM unknown_faces ORDER BY id").split(), ["6"])
        self.assertIn("\nrevision 1\n", self.ok("stats", db))

    def test_past_the_clustering_bound_stats_counts_and_forget_older_than_is_the_way_out(self):
        db = createdb("manyunknowns")
        self.ok("create", db, "--bundle", BUNDLE)
        faces = fixture.review_faces(fixture.photo_embeddings(CLI, BUNDLE, self.dir, env=SERVER.env), self.dir)
        self.assertEqual(add_unknown(db, faces).stdout.split(), ["1", "2", "3", "4", "5", "6"])
        # 100 000 faces stored 10 days ago, with empty embeddings: reading one would be an error.
        psql("manyunknowns", "INSERT INTO unknown_faces(embedding, norm, jpeg, stream, track_id, first_seen_ms,"
             " last_seen_ms, quality, nearest_identity, nearest_name, nearest_similarity, created_unix)"
             " SELECT ''::bytea, 1, ''::bytea, 'filler', i, 0, 0, 0, 0, '', 0,"
             " extract(epoch FROM now())::bigint - 864000 FROM generate_series(1, 100000) AS i")
        self.assertIn("\nunknown faces 100006\n", self.ok("stats", db))
        for args in (("unknowns", db), ("forget", db, "4:2:abcdef12")):
            self.assertIn(db + ": holds 100006 unknown faces, more than the 100000 this program clusters: delete the "
                          "oldest with taconite-gallery forget GALLERY --older-than DAYS", error_line(self, run(*args)))
        self.assertIn("forgot 100000 unknown face(s) stored more than 5 day(s) ago; 6 kept",
                      self.ok("forget", db, "--older-than", "5"))
        self.assertEqual([l.split("\t")[0] for l in self.ok("unknowns", db).splitlines()],
                         ["cluster 1", "cluster 4", "cluster 6"])
        self.assertIn("\nrevision 0\n", self.ok("stats", db))  # no revision for unknown faces
        self.assertIn("forgot 6 unknown face(s); 0 kept", self.ok("forget", db, "--older-than", "0"))
        self.assertEqual(psql("manyunknowns", "SELECT count(*) FROM unknown_faces").strip(), "0")

    def test_identify_names_the_astronaut_from_a_postgres_gallery(self):
        if not GST_TESTS:
            self.skipTest("the gst tests binary was not given")
        env = dict(SERVER.env, TACONITE_TEST_PG_GALLERY=createdb("identify"),
                   TACONITE_TEST_PG_LIVE_GALLERY=createdb("identifylive"),
                   TACONITE_TEST_PG_UNKNOWNS_GALLERY=createdb("identifyunknowns"))
        r = subprocess.run([GST_TESTS, "--gtest_filter=IdentifyTest.PostgresGallery*"],
                           capture_output=True, text=True, timeout=900, env=env)
        self.assertEqual(r.returncode, 0, r.stdout[-4000:] + r.stderr[-4000:])
        self.assertIn("[  PASSED  ] 3 tests", r.stdout)
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
