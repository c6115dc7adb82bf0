#!/usr/bin/python3
"""Valid JSON out of every gallery (issue 29 bugs 6 and 7), on SQLite and on a real PostgreSQL
server (pg_server.py; that half skips without Debian's postgresql): metadata with numbers over the
whole double range is stored as JSON a strict parser takes and exported and imported with the same
values (json-glib 1.6 stored 1e20 as `1e+20.0`, and export then wrote `"metadata":{}`); a gallery
already holding such metadata, metadata that is no JSON, or a name that is not UTF-8 (written by
sqlite3 or an older version) exports valid UTF-8 JSON, mended, with a warning naming the identity.

Usage (from meson): test_gallery_json.py <taconite-gallery> <bundle dir>
"""
import json
import math
import os
import random
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile
import unittest

import pg_server

CLI, BUNDLE = map(os.path.abspath, sys.argv[1:3])
ASTRONAUT = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png"
SERVER = pg_server.Server() if pg_server.installed() else None


def refuse_constant(name):
    raise ValueError("not JSON: " + name)


def strict_json(raw):
    """One JSON text from bytes: strict UTF-8 (no replacement), NaN / Infinity refused."""
    return json.loads(raw.decode("utf-8", errors="strict"), parse_constant=refuse_constant)


def strict_lines(raw):
    return [strict_json(line) for line in raw.splitlines()]


def exact(value):
    """A JSON value as text that tells every double apart (repr: shortest round trip, -0.0 kept)."""
    return json.dumps(value, sort_keys=True)


def double_range():
    values = [0.0, -0.0, 5e-324, 1e-300, 1e-7, 0.1, 1 / 3, 1e16, 1e17, 1e20, 1e308, sys.float_info.max,
              -sys.float_info.max, sys.float_info.min, -1e17, 123.0]
    rng = random.Random(29)
    while len(values) < 64:  # random bit patterns: every exponent
        value = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        if math.isfinite(value):
            values.append(value)
    return values


# The metadata and the whole range.
METADATA = {"a": 1e20, "b": 1e-300, "c": [1e17], "range": double_range(), "n": 7, "s": "1e+20.0"}


class GalleryJson:
    """The checks, run on a gallery `self.location(name)` of the backend of the subclass."""

    def cli(self, *args):
        return subprocess.run([CLI, *args], capture_output=True, timeout=600, env=self.env())

    def ok(self, *args):
        r = self.cli(*args)
        self.assertEqual(r.returncode, 0, (r.stdout + r.stderr).decode(errors="replace"))
        return r

    def export(self, gallery):
        r = self.ok("export", gallery)
        lines = strict_lines(r.stdout)
        return lines, r.stderr.decode("utf-8", errors="strict")

    def test_metadata_over_the_double_range_is_stored_and_exported_as_valid_json_with_the_same_values(self):
        gallery = self.new_gallery("range")
        self.ok("enroll", gallery, "--bundle", BUNDLE, "--name", "astronaut", "--metadata", json.dumps(METADATA),
                ASTRONAUT)
        stored = self.stored_metadata(gallery)
        self.assertEqual(len(stored), 1)
        self.assertEqual(exact(strict_json(stored[0])), exact(METADATA))
        self.assertIn('"a":1e+20,"b":1e-300,"c":[1e+17]', stored[0].decode())
        lines, warnings = self.export(gallery)
        self.assertEqual(warnings, "")
        self.assertEqual(exact(lines[1]["metadata"]), exact(METADATA))
        # And back: an import keeps the values, the next export shows the same.
        exported = os.path.join(self.dir, "range.jsonl")
        with open(exported, "wb") as f:
            f.write(self.ok("export", gallery).stdout)
        copy = self.new_gallery("range-copy")
        self.ok("import", copy, exported)
        again, _ = self.export(copy)
        self.assertEqual(exact(again[1]["metadata"]), exact(METADATA))

    def test_metadata_stored_by_json_glib_is_exported_mended_with_a_warning(self):
        gallery = self.new_gallery("legacy")
        self.ok("enroll", gallery, "--bundle", BUNDLE, "--name", "astronaut", ASTRONAUT)
        self.store_metadata(gallery, "astronaut", '{"a":1e+20.0,"b":[1e-300.0,2.5E+17.0],"s":"1e+20.0","n":1.5}')
        lines, warnings = self.export(gallery)
        self.assertEqual(exact(lines[1]["metadata"]), exact({"a": 1e20, "b": [1e-300, 2.5e17], "s": "1e+20.0",
                                                             "n": 1.5}))
        self.assertIn('identity 1 "astronaut": its metadata is not valid JSON (numbers as json-glib 1.6 wrote them',
                      warnings)
        self.assertEqual(warnings.count("warning:"), 1, warnings)

    def test_metadata_that_is_no_json_is_exported_as_a_string_with_a_warning(self):
        gallery = self.new_gallery("text")
        self.ok("enroll", gallery, "--bundle", BUNDLE, "--name", "astronaut", ASTRONAUT)
        self.store_metadata(gallery, "astronaut", "badge 7, 'front desk'")
        lines, warnings = self.export(gallery)
        self.assertEqual(lines[1]["metadata"], "badge 7, 'front desk'")
        self.assertIn('identity 1 "astronaut": its metadata is not a JSON object', warnings)
        self.assertIn("written as a string", warnings)


class SqliteGalleryJson(GalleryJson, unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="taconite-gallery-json-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def env(self):
        return None

    def new_gallery(self, name):
        gallery = os.path.join(self.dir, name + ".db")
        if name != "range-copy":  # import creates its gallery from the header
            self.ok("create", gallery, "--bundle", BUNDLE)
        return gallery

    def stored_metadata(self, gallery):
        with sqlite3.connect(gallery) as db:
            db.text_factory = bytes
            return [row[0] for row in db.execute("SELECT metadata FROM identities")]

    def store_metadata(self, gallery, name, text):
        with sqlite3.connect(gallery) as db:
            db.execute("UPDATE identities SET metadata = ? WHERE name = ?", (text, name))

    def test_a_name_that_is_not_utf8_is_exported_with_u_fffd_and_a_warning(self):
        gallery = self.new_gallery("names")
        self.ok("enroll", gallery, "--bundle", BUNDLE, "--name", "astronaut", ASTRONAUT)
        with sqlite3.connect(gallery) as db:  # as sqlite3 (or a version before the name checks) could
            db.execute("UPDATE identities SET name = CAST(X'61FF62C3' AS TEXT)")
            db.execute("UPDATE templates SET source = CAST(X'2FFE2E706E67' AS TEXT)")
        r = self.ok("export", gallery)
        lines = strict_lines(r.stdout)  # strict UTF-8: the old export wrote the bytes as they were
        self.assertEqual(lines[1]["name"], "a\ufffdb\ufffd")
        self.assertEqual(lines[1]["source"], "/\ufffd.png")
        warnings = r.stderr.decode("utf-8", errors="strict")
        self.assertIn('identity 1 "a\ufffdb\ufffd": "name" and other strings held bytes that are not UTF-8, '
                      "written as U+FFFD", warnings)
        self.assertEqual(warnings.count("warning:"), 1, warnings)


@unittest.skipUnless(SERVER, "Debian's postgresql is not installed")
class PostgresGalleryJson(GalleryJson, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        SERVER.start()

    @classmethod
    def tearDownClass(cls):
        SERVER.stop()

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="taconite-gallery-json-pg-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def env(self):
        return SERVER.env

    def new_gallery(self, name):
        database = name.replace("-", "_")
        location = SERVER.createdb(database)
        self.ok("create", location, "--bundle", BUNDLE)
        self.databases = getattr(self, "databases", {})
        self.databases[location] = database
        return location

    def stored_metadata(self, gallery):
        rows = SERVER.psql(self.databases[gallery], "SELECT metadata FROM identities ORDER BY id")
        return [line.encode() for line in rows.splitlines()]

    def store_metadata(self, gallery, name, text):
        quoted = text.replace("'", "''")
        SERVER.psql(self.databases[gallery], f"UPDATE identities SET metadata = '{quoted}' WHERE name = '{name}'")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
