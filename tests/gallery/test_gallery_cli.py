#!/usr/bin/python3
"""End-to-end tests of taconite-gallery on real photos (python3-skimage's astronaut, opencv-doc's
messi5.jpg) and the IR-tiny test bundle.

Usage (from meson): test_gallery_cli.py <taconite-gallery> <bundle dir> <unknown_faces_helper>
The test bundle's weights are synthetic: its embeddings identify the same photo again (what is
asserted here), not a person across photos.
"""
import datetime
import hashlib
import json
import os
import resource
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile
import unittest
import zlib

import cv2
import numpy
import skimage.io

import unknown_faces_fixture as fixture

CLI, BUNDLE, UNKNOWN_FACES_HELPER = map(os.path.abspath, sys.argv[1:4])
ASTRONAUT = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png"
MESSI = "/usr/share/doc/opencv-doc/examples/data/messi5.jpg"
WORK = tempfile.mkdtemp(prefix="taconite-gallery-cli-")


def run(*args, **kwargs):
    """Runs the CLI. The timeout only guards against a hang (a FIFO); nothing here is timed."""
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=600, **kwargs)


def path(name):
    return os.path.join(WORK, name)


def one_error_line(test, result):
    """Exit 1 with exactly one line on stderr that says it is an error (libpng may add its own)."""
    test.assertEqual(result.returncode, 1, result.stdout + result.stderr)
    lines = [l for l in result.stderr.splitlines() if l.startswith("taconite-gallery:")]
    test.assertEqual(len(lines), 1, result.stderr)
    test.assertIn("error: ", lines[0])
    return lines[0]


def skipped_alone(test, result, name="x"):
    """An enrolment whose only image was skipped: one warning naming the image and why, then one
    error saying nothing was enrolled, exit 1. Returns the warning."""
    test.assertEqual(result.returncode, 1, result.stdout + result.stderr)
    lines = [l for l in result.stderr.splitlines() if l.startswith("taconite-gallery:")]
    test.assertEqual(len(lines), 2, result.stderr)
    test.assertTrue(lines[0].startswith("taconite-gallery: warning: skipped "), lines[0])
    test.assertEqual(lines[1], f"taconite-gallery: error: no face enrolled for {name}: every image was skipped "
                               "(1 image(s); the warnings say why)")
    return lines[0]


def png_claiming(width, height):
    """A valid PNG header (signature, IHDR with its CRC) claiming width x height, a few rows of
    pixel data and IEND: a few KiB on disk, ~1.2 GB once decoded at 20000x20000."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = (b"\0" + b"\0" * (3 * width)) * 4
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def headers_claiming(side):
    """Minimal JPEG, BMP, PPM, WebP and TIFF headers claiming side x side pixels, by extension."""
    jfif = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0"
    sof0 = b"\xff\xc0" + struct.pack(">HBHHB", 17, 8, side, side, 3) + b"\x01\x11\0\x02\x11\0\x03\x11\0"
    bmp_info = struct.pack("<IiiHHIIiiII", 40, side, -side, 1, 24, 0, 0, 0, 0, 0, 0)
    vp8x = b"VP8X" + struct.pack("<I", 10) + b"\0\0\0\0" + (side - 1).to_bytes(3, "little") * 2
    tiff_entry = lambda tag: struct.pack("<HHII", tag, 4, 1, side)
    return {
        ".jpg": b"\xff\xd8" + jfif + sof0 + b"\xff\xd9",
        ".bmp": b"BM" + struct.pack("<IHHI", 54 + 64, 0, 0, 54) + bmp_info + b"\0" * 64,
        ".ppm": b"P6\n# a comment\n%d %d\n255\n" % (side, side) + b"\0" * 64,
        ".webp": b"RIFF" + struct.pack("<I", 4 + len(vp8x)) + b"WEBP" + vp8x,
        ".tif": b"II*\0" + struct.pack("<IH", 8, 2) + tiff_entry(256) + tiff_entry(257) + b"\0\0\0\0",
    }


def limit_address_space():
    """2 GiB of address space for the child: reading a whole giant line would fail (bad_alloc)."""
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def expected_key(cluster, face_ids):
    """A cluster's key as documented: ID:SIZE:first 8 hex digits of SHA-256("id,id,...")."""
    ids = ",".join(str(i) for i in sorted(face_ids))
    return f"{cluster}:{len(face_ids)}:{hashlib.sha256(ids.encode()).hexdigest()[:8]}"


def iso(ms):
    """Python's own ISO 8601 text of Unix ms (years 1..9999), to check the CLI's against."""
    t = datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=ms)
    return "%04d" % t.year + t.strftime("-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)


SHEET_TILE, SHEET_CAPTION = 112, 48  # contact_sheet.hpp: a tile and the caption under it


def caption_image(lines):
    """A caption as contact_sheet.cpp documents it: light Hershey text on a dark strip, BGR."""
    strip = numpy.full((SHEET_CAPTION, SHEET_TILE, 3), 40, numpy.uint8)
    for i, text in enumerate(lines):
        cv2.putText(strip, text, (3, (i + 1) * SHEET_CAPTION // 4 - 3), cv2.FONT_HERSHEY_SIMPLEX, 0.35,
                    (235, 235, 235), 1, cv2.LINE_AA)
    return strip


def fitted(text):
    """A caption line cut with ".." to the tile's width less its margins, as the sheet does."""
    width = lambda t: cv2.getTextSize(t, cv2.FONT_HERSHEY_SIMPLEX, 0.35, 1)[0][0]
    text = text[:40]
    if width(text) <= SHEET_TILE - 6:
        return text
    while text and width(text + "..") > SHEET_TILE - 6:
        text = text[:-1]
    return text + ".."


def caption_difference(sheet, column, row, lines):
    """Mean absolute difference between a tile's caption in the sheet and `lines` drawn."""
    top = row * (SHEET_TILE + SHEET_CAPTION) + SHEET_TILE
    strip = sheet[top:top + SHEET_CAPTION, column * SHEET_TILE:(column + 1) * SHEET_TILE].astype(int)
    return numpy.abs(strip - caption_image(lines).astype(int)).mean()


class TinyFilesystem:
    """A tmpfs of `size` mounted at `where` (the tests run as root in CI); None when mounting is
    not possible here."""

    def __init__(self, where, size):
        os.makedirs(where)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", where], capture_output=True,
                           text=True)
        self.where = where if r.returncode == 0 else None
        self.why = r.stderr.strip()

    def close(self):
        if self.where:
            subprocess.run(["umount", self.where], check=True)


class GalleryCli(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        photo = skimage.io.imread(ASTRONAUT)[:, :, :3]
        skimage.io.imsave(path("two-faces.png"), numpy.concatenate([photo, photo], axis=1), check_contrast=False)
        skimage.io.imsave(path("no-face.png"), numpy.full((200, 200, 3), 128, numpy.uint8), check_contrast=False)
        os.makedirs(path("dir"))
        shutil.copy(ASTRONAUT, path("dir/a.png"))
        shutil.copy(path("no-face.png"), path("dir/b.png"))
        # Another model: the same tensors, another manifest (part of the fingerprint).
        os.makedirs(path("other-bundle"))
        for f in ("tensors.txt", "tensors.bin"):
            os.symlink(os.path.join(BUNDLE, f), path("other-bundle/" + f))
        with open(os.path.join(BUNDLE, "manifest.txt")) as src, open(path("other-bundle/manifest.txt"), "w") as dst:
            dst.write(src.read() + "\n# another model\n")
        created = run("create", path("g.db"), "--bundle", BUNDLE)
        assert created.returncode == 0, created.stderr

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(WORK)

    def test_01_usage_errors_exit_2(self):
        self.assertEqual(run().returncode, 2)
        self.assertEqual(run("fly", path("g.db")).returncode, 2)
        self.assertEqual(run("enroll", path("g.db"), "--bundle", BUNDLE, ASTRONAUT).returncode, 2)  # no --name
        self.assertEqual(run("match", path("g.db"), "--bundle", BUNDLE, "--top-k", "0", ASTRONAUT).returncode, 2)
        for beam in ("0", "65537", "many"):
            r = run("match", path("g.db"), "--bundle", BUNDLE, "--ef-search", beam, ASTRONAUT)
            self.assertEqual(r.returncode, 2, beam)
            self.assertIn("--ef-search takes 1..65536", r.stderr)
        self.assertEqual(run("--help").returncode, 0)

    def test_02_create_refuses_an_existing_file(self):
        self.assertIn("already exists", one_error_line(self, run("create", path("g.db"), "--bundle", BUNDLE)))

    def test_03_enroll_and_match_the_same_photo(self):
        r = run("enroll", path("g.db"), "--bundle", BUNDLE, "--name", "astronaut", "--metadata", '{"team":"nasa"}',
                ASTRONAUT)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("enrolled 1 template(s) for astronaut", r.stdout)
        r = run("enroll", path("g.db"), "--bundle", BUNDLE, "--name", "messi", "--largest", MESSI)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = run("match", path("g.db"), "--bundle", BUNDLE, "--top-k", "2", ASTRONAUT)
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = [line.split("\t") for line in r.stdout.splitlines()]
        self.assertEqual([row[1] for row in rows], ["astronaut", "messi"])
        self.assertGreater(float(rows[0][2]), 0.999)  # the same photo, same front end
        self.assertLess(float(rows[1][2]), float(rows[0][2]))

    def test_04_no_face_and_several_faces_are_skipped_unless_chosen(self):
        # Issue 30: an image without a usable face is skipped with a warning, named or in a
        # directory; nothing enrolled is the error (it used to refuse the person at the first).
        self.assertIn("no-face.png: no face found", skipped_alone(
            self, run("enroll", path("g.db"), "--bundle", BUNDLE, "--name", "x", path("no-face.png"))))
        line = skipped_alone(self, run("enroll", path("g.db"), "--bundle", BUNDLE, "--name", "x",
                                       path("two-faces.png")))
        self.assertIn("2 faces found", line)
        self.assertIn("--face N or --largest", line)
        self.assertIn("only 2 face(s)", skipped_alone(
            self, run("enroll", path("g.db"), "--bundle", BUNDLE, "--name", "x", "--face", "2",
                      path("two-faces.png"))))
        self.assertNotIn("\tx\t", run("list", path("g.db")).stdout)
        r = run("enroll", path("g.db"), "--bundle", BUNDLE, "--name", "twin", "--face", "1", path("two-faces.png"))
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_05_directory_skips_bad_images_with_a_warning(self):
        r = run("enroll", path("g.db"), "--bundle", BUNDLE, "--name", "astronaut", path("dir"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("1 image(s) skipped", r.stdout)
        self.assertIn("warning: skipped", r.stderr)
        self.assertIn("b.png: no face found", r.stderr)
        # a.png is the photo enrolled in test_03: the same template is not stored twice.
        self.assertIn("enrolled 0 template(s) for astronaut", r.stdout)
        self.assertIn("1 already enrolled (not added again)", r.stdout)
        listing = run("list", path("g.db")).stdout
        self.assertIn("astronaut\t1 template(s)\t{\"team\":\"nasa\"}", listing)

    def test_06_another_model_is_refused(self):
        line = one_error_line(self, run("enroll", path("g.db"), "--bundle", path("other-bundle"), "--name", "x",
                                        ASTRONAUT))
        self.assertIn("another model", line)
        self.assertIn(path("g.db"), line)

    def test_07_export_import_round_trip(self):
        exported = path("export.jsonl")
        self.assertEqual(run("export", path("g.db"), exported).returncode, 0)
        with open(exported) as f:
            lines = [json.loads(line) for line in f]
        self.assertEqual(lines[0]["taconite_gallery"], 1)
        self.assertEqual(len(lines[0]["model_fingerprint"]), 64)
        self.assertTrue(all(len(line["embedding"]) == 512 for line in lines[1:]))
        r = run("import", path("copy.db"), exported)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("(created)", r.stdout)
        self.assertEqual(run("list", path("copy.db")).stdout.replace("\t", " ").split()[1:],
                         run("list", path("g.db")).stdout.replace("\t", " ").split()[1:])
        r = run("match", path("copy.db"), "--bundle", BUNDLE, "--top-k", "1", ASTRONAUT)
        self.assertTrue(r.stdout.startswith("1\tastronaut\t"), r.stdout + r.stderr)
        # A foreign header and a broken line are refused with the line named.
        with open(path("foreign.jsonl"), "w") as f:
            f.write(json.dumps(dict(lines[0], model_fingerprint="f" * 64)) + "\n")
        self.assertIn("another model", one_error_line(self, run("import", path("g.db"), path("foreign.jsonl"))))
        with open(path("broken.jsonl"), "w") as f:
            f.write(json.dumps(lines[0]) + "\n" + '{"name": "y", "embedding": [1, 2]}\n')
        self.assertIn("broken.jsonl:2: embedding of 2 values", one_error_line(
            self, run("import", path("g.db"), path("broken.jsonl"))))

    def test_08_remove_and_stats(self):
        self.assertEqual(run("remove", path("g.db"), "twin").returncode, 0)
        self.assertIn("no identity named twin", one_error_line(self, run("remove", path("g.db"), "twin")))
        stats = run("stats", path("g.db")).stdout
        self.assertIn("identities 2\n", stats)
        self.assertIn("templates 2\n", stats)
        self.assertIn("embedding size 512\n", stats)
        self.assertIn("search exact (every template scanned)", stats)
        self.assertRegex(stats, r"\nfile bytes [1-9][0-9]*\n")

    def test_09_corrupt_and_missing_files_name_the_file(self):
        with open(path("corrupt.db"), "wb") as f:
            f.write(b"\x5a" * 8192)
        line = one_error_line(self, run("stats", path("corrupt.db")))
        self.assertIn(path("corrupt.db"), line)
        self.assertIn("corrupt or not a taconite gallery", line)
        self.assertIn("no such gallery file", one_error_line(self, run("list", path("missing.db"))))

    def export_lines(self):
        self.assertEqual(run("export", path("g.db"), path("lines.jsonl")).returncode, 0)
        with open(path("lines.jsonl")) as f:
            return [json.loads(line) for line in f]

    def test_10_import_checks_every_member_type_and_names_the_line(self):
        lines = self.export_lines()
        header, good = lines[0], lines[1]
        good_line = json.dumps(dict(good, name="newcomer"))
        embedding = good["embedding"]
        cases = [  # (line 1, line 3, expected)
            (dict(header, model_fingerprint=5), None, ':1: "model_fingerprint" must be a string, not a number'),
            (dict(header, taconite_gallery="1"), None, ':1: "taconite_gallery" must be an integer, not a string'),
            (dict(header, embedding_dim=1.5), None, ':1: "embedding_dim" must be an integer, not a number'),
            (header, {"name": 5}, ':3: "name" must be a string, not a number'),
            (header, {"name": "y", "metadata": "x"}, ':3: "metadata" must be an object, not a string'),
            (header, {"name": "y", "embedding": "x"}, ':3: "embedding" must be an array of numbers, not a string'),
            (header, dict(good, name="y", source=7), ':3: "source" must be a string, not a number'),
            (header, dict(good, name="y", norm="x"), ':3: "norm" must be a number, not a string'),
            (header, dict(good, name="y", created_unix="x"), ':3: "created_unix" must be an integer, not a string'),
            (header, dict(good, name="y", embedding=embedding[:3] + ["a"] + embedding[4:]),
             ":3: embedding value 3 is not a finite float32 number"),
            (header, '{"name":"y","embedding":[1e999' + ",0" * (len(embedding) - 1) + "]}",
             ":3: embedding value 0 is not a finite float32 number"),
            (header, dict(good, name="y", embedding=[1e39] + embedding[1:]),
             ":3: embedding value 0 is not a finite float32 number"),
            (header, dict(good, name="bell\u0007"), ":3: identity name holds a control character (U+0007"),
            (header, dict(good, name=""), ":3: identity name of 0 bytes"),
            (header, [1, 2], ":3: a line must be a JSON object, not an array"),
            (header, "{'name': 'y'}", ":3: not accepted as JSON: a ' outside a string"),
            (header, "[" * 100000 + "]" * 100000, ":3: not accepted as JSON: nested 100000 levels deep"),
            (header, b'{"name":"caf\xe9"}', ":3: not valid UTF-8"),
        ]
        for first, third, expected in cases:
            with self.subTest(expected=expected):
                with open(path("typed.jsonl"), "wb") as f:
                    for line in (first, good_line, third):
                        if line is None:
                            continue
                        if isinstance(line, (dict, list)):
                            line = json.dumps(line)
                        f.write((line if isinstance(line, bytes) else line.encode()) + b"\n")
                result = run("import", path("typed.db"), path("typed.jsonl"))
                self.assertIn("typed.jsonl" + expected, one_error_line(self, result))
                self.assertFalse(os.path.exists(path("typed.db")), "a gallery the import created is removed")
                self.assertFalse(os.path.exists(path("typed.db-wal")))
                # Into an existing gallery: all or nothing, line 2's newcomer is not kept either.
                self.assertEqual(run("import", path("g.db"), path("typed.jsonl")).returncode, 1)
                self.assertNotIn("newcomer", run("list", path("g.db")).stdout)

    def test_11_import_refuses_devices_fifos_and_giant_lines_while_reading(self):
        self.assertIn("/dev/zero: is a device, not a regular file",
                      one_error_line(self, run("import", path("zero.db"), "/dev/zero")))
        os.mkfifo(path("lines.fifo"))
        self.assertIn("lines.fifo: is a FIFO, not a regular file",
                      one_error_line(self, run("import", path("zero.db"), path("lines.fifo"))))
        # 8 GiB of zeros without a newline (sparse: nothing on disk), read with 2 GiB of address
        # space: the line bound must hold while reading, not after the whole line is in memory.
        with open(path("giant.jsonl"), "wb") as f:
            f.truncate(8 << 30)
        line = one_error_line(self, run("import", path("zero.db"), path("giant.jsonl"),
                                        preexec_fn=limit_address_space))
        self.assertIn("giant.jsonl:1: line longer than 1048576 bytes", line)
        self.assertFalse(os.path.exists(path("zero.db")))

    def test_12_import_twice_adds_nothing(self):
        self.export_lines()
        first = run("import", path("twice.db"), path("lines.jsonl"))
        self.assertEqual(first.returncode, 0, first.stderr)
        self.assertIn("(created)", first.stdout)
        second = run("import", path("twice.db"), path("lines.jsonl"))
        self.assertEqual(second.returncode, 0, second.stderr)
        self.assertTrue(second.stdout.startswith("imported 0 template(s)"), second.stdout)
        self.assertIn("already present (not added again)", second.stdout)
        self.assertEqual([l for l in run("stats", path("twice.db")).stdout.splitlines() if l.startswith("templates")],
                         [l for l in run("stats", path("g.db")).stdout.splitlines() if l.startswith("templates")])
        # The export of the copy is the export of the original, bit for bit in every embedding.
        self.assertEqual(run("export", path("twice.db"), path("twice.jsonl")).returncode, 0)
        with open(path("lines.jsonl")) as a, open(path("twice.jsonl")) as b:
            strip = lambda rows: [{k: v for k, v in json.loads(r).items() if k != "created_unix"} for r in rows]
            self.assertEqual(strip(a), strip(b))

    def test_13_enroll_checks_name_and_metadata_first(self):
        enroll = lambda *args: run("enroll", path("g.db"), "--bundle", BUNDLE, *args, ASTRONAUT)
        self.assertIn("--name: identity name holds a control character (U+000A",
                      one_error_line(self, enroll("--name", "two\nlines")))
        self.assertIn("--name: identity name is blank", one_error_line(self, enroll("--name", "  \u3000")))
        self.assertIn("--name: identity name is not valid UTF-8",
                      one_error_line(self, run(b"enroll", path("g.db"), "--bundle", BUNDLE, "--name", b"caf\xe9",
                                               ASTRONAUT)))
        self.assertIn("--metadata: metadata must be a JSON object",
                      one_error_line(self, enroll("--name", "x", "--metadata", "not json")))
        self.assertIn("--metadata: metadata must be a JSON object ({...}), not an array",
                      one_error_line(self, enroll("--name", "x", "--metadata", "[1]")))
        self.assertNotIn("\tx\t", run("list", path("g.db")).stdout)

    def test_14_enroll_refuses_a_fifo_instead_of_waiting(self):
        os.mkfifo(path("face.png"))
        line = skipped_alone(self, run("enroll", path("g.db"), "--bundle", BUNDLE, "--name", "x", path("face.png")))
        self.assertIn("face.png: is a FIFO, not a regular file", line)

    def test_14b_passwords_never_show_in_messages(self):
        """Issue 29 bug 3: a PostgreSQL password in any form (a malformed URI that libpq's parse
        error quotes, the keyword, a query parameter) is masked; the rest still names the gallery."""
        for location in ("postgresql://nobody:hunter2secret@[::1/g2",
                         "host=/nonexistent port=5 user=nobody dbname=g2 password=hunter2secret",
                         "postgresql:///g2?host=/nonexistent&password=hunter2secret&user=nobody"):
            for command in (["list", location], ["stats", location], ["copy", path("g.db"), location]):
                r = run(*command)
                line = one_error_line(self, r)
                self.assertNotIn("hunter2secret", r.stdout + r.stderr)
                self.assertIn("nobody", line)
                self.assertIn("g2", line)
                self.assertIn("****", line)

    def test_14c_service_and_password_files_libpq_would_hang_on_are_refused(self):
        """Issue 29 bug 4: a FIFO (libpq blocked for good), a device (/dev/zero: it spun) or a
        directory as the service or password file is refused, naming the setting and the path. The
        timeout turns a regression into a failure instead of a hang."""
        fifo = path("svc.fifo")
        os.mkfifo(fifo)
        nowhere = "host=/nonexistent dbname=g2 connect_timeout=2"
        cases = [("PGSERVICEFILE", fifo, "service=gal", "is a FIFO"),
                 ("PGSERVICEFILE", "/dev/zero", "service=gal", "is a device"),
                 ("PGSERVICEFILE", WORK, "service=gal", "is a directory"),
                 ("PGPASSFILE", fifo, nowhere, "is a FIFO"),
                 ("PGPASSFILE", "/dev/zero", nowhere, "is a device")]
        for variable, value, location, problem in cases:
            env = {k: v for k, v in os.environ.items() if k not in ("PGSERVICEFILE", "PGPASSFILE", "PGSERVICE")}
            r = subprocess.run([CLI, "list", location], capture_output=True, text=True, timeout=60,
                               env=dict(env, **{variable: value}))
            line = one_error_line(self, r)
            self.assertIn(f"{variable} names {value}, which {problem}", line)
            self.assertEqual(r.stderr.count("\n"), 1, r.stderr)  # nothing from libpq itself

    def test_15_huge_images_are_refused_from_their_header(self):
        with open(path("huge.png"), "wb") as f:
            f.write(png_claiming(20000, 20000))
        line = skipped_alone(self, run("enroll", path("g.db"), "--bundle", BUNDLE, "--name", "x", path("huge.png")))
        self.assertIn("huge.png: its PNG header gives 20000x20000 pixels, more than 67108864 allowed "
                      "(refused from the header, before decoding)", line)
        # The other formats, as a directory (each refused image is skipped with a warning).
        os.makedirs(path("huge"))
        for ext, data in headers_claiming(20000).items():
            with open(path("huge/h" + ext), "wb") as f:
                f.write(data)
        shutil.copy(ASTRONAUT, path("huge/z.png"))
        r = run("enroll", path("g.db"), "--bundle", BUNDLE, "--name", "astronaut", path("huge"))
        self.assertEqual(r.returncode, 0, r.stderr)
        for ext, fmt in ((".jpg", "JPEG"), (".bmp", "BMP"), (".ppm", "PNM"), (".webp", "WebP"), (".tif", "TIFF")):
            self.assertIn("h%s: its %s header gives 20000x20000 pixels" % (ext, fmt), r.stderr)
        self.assertIn("5 image(s) skipped", r.stdout)
        self.assertIn("already enrolled (not added again)", r.stdout)  # z.png is the astronaut again

    def test_16_a_copy_that_fails_removes_what_it_created_and_only_that(self):
        # A source of 600 templates (~2.5 MB) and a 256 KiB filesystem: the copy fails, disk full.
        header = self.export_lines()[0]
        rng = numpy.random.default_rng(5)
        with open(path("many.jsonl"), "w") as f:
            f.write(json.dumps(header) + "\n")
            for i in range(600):
                f.write(json.dumps({"name": f"p{i}", "embedding": rng.normal(size=header["embedding_dim"]).tolist()})
                        + "\n")
        self.assertEqual(run("import", path("many.db"), path("many.jsonl")).returncode, 0)
        tiny = TinyFilesystem(path("tiny"), "256k")
        if not tiny.where:
            self.skipTest("cannot mount a tmpfs here (needs root): " + tiny.why)
        try:
            with open(os.path.join(tiny.where, "keep.txt"), "w") as f:
                f.write("not the copy's")
            dest = os.path.join(tiny.where, "copy.db")
            line = one_error_line(self, run("copy", path("many.db"), dest))
            self.assertIn(dest, line)
            self.assertIn("full", line)
            self.assertEqual(sorted(os.listdir(tiny.where)), ["keep.txt"])  # no 0-byte or partial copy.db
            # An existing empty gallery is the user's: the failed copy leaves it as it was.
            existing = os.path.join(tiny.where, "existing.db")
            self.assertEqual(run("create", existing, "--bundle", BUNDLE).returncode, 0)
            one_error_line(self, run("copy", path("many.db"), existing))
            self.assertTrue(os.path.exists(existing))
            self.assertIn("identities 0\n", run("stats", existing).stdout)
            with open(os.path.join(tiny.where, "keep.txt")) as f:
                self.assertEqual(f.read(), "not the copy's")
        finally:
            tiny.close()


class UnknownFacesReview(unittest.TestCase):
    """unknowns / name / forget on kept unknown faces (unknown_faces_fixture.py's scenario)."""

    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="taconite-gallery-review-")
        cls.faces = fixture.review_faces(fixture.photo_embeddings(CLI, BUNDLE, cls.work), cls.work)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work)

    def setUp(self):
        self.dir = tempfile.mkdtemp(dir=self.work)
        self.g = os.path.join(self.dir, "g.db")
        self.ok("create", self.g, "--bundle", BUNDLE)
        r = fixture.add_unknown(UNKNOWN_FACES_HELPER, self.g, self.faces)
        self.assertEqual(r.stdout.split(), ["1", "2", "3", "4", "5", "6"], r.stderr)

    def ok(self, *args, **kwargs):
        r = run(*args, **kwargs)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        return r.stdout

    def revision(self):
        return next(l for l in self.ok("stats", self.g).splitlines() if l.startswith("revision "))

    def listing(self, *options):
        return [l.split("\t") for l in self.ok("unknowns", self.g, "--sheets", os.path.join(self.dir, "s"),
                                               *options).splitlines()]

    def key(self, cluster, *options):
        """The key the listing gives the cluster."""
        return next(o["key"] for o in map(json.loads, self.ok("unknowns", self.g, "--json", *options).splitlines())
                    if o["cluster"] == cluster)

    def sql(self, statement, *params):
        with sqlite3.connect(self.g) as db:
            db.execute(statement, params)

    def test_unknowns_lists_clusters_largest_first_with_contact_sheets(self):
        sheets = os.path.join(self.dir, "s")
        rows = self.listing()
        self.assertEqual(rows, [
            ["cluster 1", "3 face(s)", "door,yard", "2025-12-01T12:00:00.000Z .. 2025-12-01T12:02:01.000Z",
             "nearest messi (0.310)", "key " + expected_key(1, [1, 2, 3]), os.path.join(sheets, "cluster-1.jpg")],
            ["cluster 4", "2 face(s)", "door", "2025-12-01T12:00:05.000Z .. 2025-12-01T12:00:12.000Z",
             "nearest none", "key " + expected_key(4, [4, 5]), os.path.join(sheets, "cluster-4.jpg")],
            ["cluster 6", "1 face(s)", "lobby", "2025-12-01T12:00:30.000Z .. 2025-12-01T12:00:30.000Z",
             "nearest none", "key " + expected_key(6, [6]), os.path.join(sheets, "cluster-6.jpg")]])
        # The sheets: one 112x112 tile per face (a caption under it), best quality first; grey where
        # no picture was kept.
        astronaut = cv2.imread(os.path.join(sheets, "cluster-1.jpg"))
        self.assertEqual(astronaut.shape, (112 + SHEET_CAPTION, 336, 3))
        self.assertGreater(astronaut[:112].std(), 20)  # pictures, not grey
        messi = cv2.imread(os.path.join(sheets, "cluster-4.jpg"))
        self.assertEqual(messi.shape, (112 + SHEET_CAPTION, 224, 3))
        self.assertGreater(messi[:112, :112].std(), 20)  # face 4 (quality 0.8) has a picture
        self.assertLess(abs(messi[:112, 112:].mean() - 128), 3)  # face 5 (0.6) has none: grey
        self.assertLess(messi[:112, 112:].std(), 3)
        self.assertEqual(cv2.imread(os.path.join(sheets, "cluster-6.jpg")).shape, (112 + SHEET_CAPTION, 112, 3))
        # --json: one object a line.
        objects = [json.loads(l) for l in self.ok("unknowns", self.g, "--json", "--sheets", sheets).splitlines()]
        self.assertEqual([o["cluster"] for o in objects], [1, 4, 6])
        self.assertEqual(objects[0]["key"], expected_key(1, [1, 2, 3]))
        self.assertEqual(objects[0]["faces"], [1, 2, 3])
        self.assertEqual(objects[0]["cameras"], ["door", "yard"])
        self.assertEqual(objects[0]["size"], 3)
        self.assertEqual((objects[0]["first_seen"], objects[0]["last_seen"]),
                         ("2025-12-01T12:00:00.000Z", "2025-12-01T12:02:01.000Z"))
        self.assertEqual(objects[0]["nearest"], {"identity": 2, "name": "messi", "similarity": 0.31})
        self.assertIsNone(objects[1]["nearest"])
        self.assertEqual(objects[2]["sheet"], os.path.join(sheets, "cluster-6.jpg"))
        # A threshold above every link: six clusters of one.
        self.assertEqual(len(self.listing("--threshold", "1")), 6)

    def test_unknowns_writes_contact_sheets_only_when_asked(self):
        # SQLite's own -wal/-shm files (a reader of a WAL gallery makes them) aside.
        files = lambda: sorted(f for f in os.listdir(self.dir) if f not in ("g.db-wal", "g.db-shm"))
        before = files()
        rows = [l.split("\t") for l in self.ok("unknowns", self.g, cwd=self.dir).splitlines()]
        self.assertEqual([(r[0], r[-1]) for r in rows],
                         [("cluster 1", "key " + expected_key(1, [1, 2, 3])), ("cluster 4", "key " + expected_key(4, [4, 5])),
                          ("cluster 6", "key " + expected_key(6, [6]))])  # no sheet column
        objects = [json.loads(l) for l in self.ok("unknowns", self.g, "--json", cwd=self.dir).splitlines()]
        self.assertEqual([o["sheet"] for o in objects], [None, None, None])
        self.assertEqual(files(), before)  # nothing written, ./unknown-faces included
        self.assertIn("--sheets takes a directory", run("unknowns", self.g, "--sheets", "").stderr)

    def test_contact_sheet_tiles_are_captioned_with_face_camera_and_time(self):
        sheets = os.path.join(self.dir, "s")
        self.listing()
        sheet = cv2.imread(os.path.join(sheets, "cluster-1.jpg"))
        # Best quality first: faces 2 (yard, T0 + 60 s), 3 (door, T0 + 120 s), 1 (door, T0).
        captions = [["face 2", "yard", "2025-12-01", "12:01:00 UTC"], ["face 3", "door", "2025-12-01", "12:02:00 UTC"],
                    ["face 1", "door", "2025-12-01", "12:00:00 UTC"]]
        for column, lines in enumerate(captions):
            drawn = caption_difference(sheet, column, 0, lines)
            self.assertLess(drawn, 2.5, lines)  # these words, drawn there (JPEG noise: ~1.6)
            for other in captions:  # another tile's words (one digit differs at least): clearly not
                if other != lines:
                    self.assertGreater(caption_difference(sheet, column, 0, other), drawn + 1, (lines, other))
        messi = cv2.imread(os.path.join(sheets, "cluster-4.jpg"))
        self.assertLess(caption_difference(messi, 1, 0, ["face 5", "door", "2025-12-01", "12:00:10 UTC"]), 2.5)
        # A long or non-ASCII camera name stays inside its tile: cut with "..", '?' for what the
        # font cannot draw; a time without an ISO text says so.
        self.sql("UPDATE unknown_faces SET stream = ?, first_seen_ms = ?, last_seen_ms = ? WHERE id = 6",
                 "caf\u00e9-" + "x" * 250, 2 ** 63 - 1, 2 ** 63 - 1)
        self.listing()
        lonely = cv2.imread(os.path.join(sheets, "cluster-6.jpg"))
        self.assertEqual(lonely.shape, (112 + SHEET_CAPTION, 112, 3))
        camera = fitted("caf?-" + "x" * 250)
        self.assertTrue(camera.startswith("caf?-x") and camera.endswith("x.."), camera)
        self.assertLess(caption_difference(lonely, 0, 0, ["face 6", camera, "time invalid", ""]), 2.5)

    def test_times_are_iso_8601_for_any_stored_value(self):
        for ms in (-5, -1000, -1001, 0, 1, 999, fixture.T0, -62135596800000, 253402300799999):
            self.sql("UPDATE unknown_faces SET first_seen_ms = ?, last_seen_ms = ? WHERE id = 6", ms, ms)
            row = next(r for r in self.listing() if r[0] == "cluster 6")
            self.assertEqual(row[3], f"{iso(ms)} .. {iso(ms)}", ms)
            obj = next(o for o in map(json.loads, self.ok("unknowns", self.g, "--json").splitlines())
                       if o["cluster"] == 6)
            self.assertEqual((obj["first_seen"], obj["last_seen"]), (iso(ms), iso(ms)))
        self.assertEqual(iso(-5), "1969-12-31T23:59:59.995Z")  # the reference itself floors
        # Year 0 (proleptic Gregorian, beyond Python's datetime) and past any four-digit year.
        self.sql("UPDATE unknown_faces SET first_seen_ms = ?, last_seen_ms = ? WHERE id = 6", -62167219200000,
                 253402300800000)
        row = next(r for r in self.listing() if r[0] == "cluster 6")
        self.assertEqual(row[3], "0000-01-01T00:00:00.000Z .. invalid time (253402300800000 ms)")
        for low, high in ((-2 ** 63, 2 ** 63 - 1), (-62167219200001, 0)):
            self.sql("UPDATE unknown_faces SET first_seen_ms = ?, last_seen_ms = ? WHERE id = 6", low, high)
            row = next(r for r in self.listing() if r[0] == "cluster 6")
            self.assertEqual(row[3], f"invalid time ({low} ms) .. " + (iso(high) if high == 0 else
                                                                        f"invalid time ({high} ms)"))
            obj = next(o for o in map(json.loads, self.ok("unknowns", self.g, "--json").splitlines())
                       if o["cluster"] == 6)
            self.assertIsNone(obj["first_seen"])

    def test_name_and_forget_act_only_on_the_membership_listed(self):
        before = (self.revision(), self.listing())
        key = self.key(1)
        self.assertEqual(key, expected_key(1, [1, 2, 3]))
        # Another threshold: astronaut and messi (cosine ~0.24) join, the cluster is not the one listed.
        merged = int(self.key(1, "--threshold", "0.0001").split(":")[1])
        self.assertGreaterEqual(merged, 5)
        line = one_error_line(self, run("forget", self.g, key, "--threshold", "0.0001"))
        self.assertIn(self.g + f": cluster 1 is not the one listed: it now holds {merged} face(s) at threshold 0.0001 "
                      "(3 listed)", line)
        self.assertIn("list again; nothing changed", line)
        # A bare id cannot be checked: refused, even when it is a cluster.
        line = one_error_line(self, run("name", self.g, "1", "Astronaut"))
        self.assertIn("cluster 1 (now 3 face(s) at threshold 0.5) is given by its id only", line)
        self.assertEqual((self.revision(), self.listing()), before)
        # A face arriving after the listing joins the cluster: refused.
        self.assertEqual(fixture.add_unknown(UNKNOWN_FACES_HELPER, self.g, [self.faces[1]]).stdout.split(), ["7"])
        line = one_error_line(self, run("name", self.g, key, "Astronaut"))
        self.assertIn("cluster 1 is not the one listed: it now holds 4 face(s) at threshold 0.5 (3 listed)", line)
        # As many faces as listed, but not the same ones: refused too.
        self.sql("DELETE FROM unknown_faces WHERE id = 3")
        line = one_error_line(self, run("forget", self.g, key))
        self.assertIn("now holds 3 face(s) at threshold 0.5 (the same number of faces, but not the same faces)", line)
        self.assertEqual(self.ok("list", self.g), "")
        self.assertEqual(len(self.listing()), 3)
        # Listed again, the new key acts.
        self.assertIn("forgot cluster 1: deleted 3 unknown face(s)", self.ok("forget", self.g, self.key(1)))
        # Malformed keys are usage errors.
        for bad in ("1:3", "1:3:abc", "1:3:ABCDEF12", "1:0:abcdef12", "0", "1:3:abcdef12:", "x:3:abcdef12"):
            r = run("forget", self.g, bad)
            self.assertEqual(r.returncode, 2, bad)
            self.assertIn("takes a cluster's key as taconite-gallery unknowns listed it (ID:SIZE:DIGEST)", r.stderr)

    def test_past_the_clustering_bound_stats_counts_and_forget_older_than_is_the_way_out(self):
        key = expected_key(4, [4, 5])
        # 100 000 faces stored 10 days ago (as an edge without a bound on reads would leave them),
        # with empty embeddings: reading one would be an error, so none is read.
        self.sql("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000) "
                 "INSERT INTO unknown_faces(embedding, norm, jpeg, stream, track_id, first_seen_ms, last_seen_ms, "
                 "quality, nearest_identity, nearest_name, nearest_similarity, created_unix) "
                 "SELECT x'', 1, x'', 'filler', i, 0, 0, 0, 0, '', 0, CAST(strftime('%s', 'now') AS INTEGER) - 864000 "
                 "FROM n")
        self.assertIn("\nunknown faces 100006\n", self.ok("stats", self.g))
        for args in (("unknowns", self.g), ("forget", self.g, key), ("name", self.g, key, "messi")):
            line = one_error_line(self, run(*args))
            self.assertIn(self.g + ": holds 100006 unknown faces, more than the 100000 this program clusters: delete "
                          "the oldest with taconite-gallery forget GALLERY --older-than DAYS", line)
        self.assertIn("forgot 100000 unknown face(s) stored more than 5 day(s) ago; 6 kept",
                      self.ok("forget", self.g, "--older-than", "5"))
        self.assertEqual([r[0] for r in self.listing()], ["cluster 1", "cluster 4", "cluster 6"])
        self.assertIn("forgot 0 unknown face(s) stored more than 1 day(s) ago; 6 kept",
                      self.ok("forget", self.g, "--older-than", "1"))
        self.assertIn("forgot 6 unknown face(s); 0 kept", self.ok("forget", self.g, "--older-than", "0"))
        self.assertIn("\nunknown faces 0\n", self.ok("stats", self.g))
        for bad in (("--older-than", "-1"), ("--older-than", "1.5"), ("--older-than", "36501"),
                    ("1", "--older-than", "3"), ()):
            self.assertEqual(run("forget", self.g, *bad).returncode, 2, bad)
        self.assertEqual(run("unknowns", self.g, "--older-than", "3").returncode, 2)

    def test_name_enrols_the_best_faces_and_removes_the_cluster_in_one_revision(self):
        before = int(self.revision().split()[1])
        out = self.ok("name", self.g, self.key(1), "Astronaut", "--templates", "2")
        self.assertIn("named cluster 1 Astronaut: enrolled 2 template(s) (identity 1), removed 3 unknown face(s)", out)
        listed = [l.split("\t") for l in self.ok("list", self.g).splitlines()]
        self.assertEqual(listed[0][:3], ["1", "Astronaut", "2 template(s)"])
        self.assertEqual(json.loads(listed[0][3])["enrolled_from"], "unknown-faces review")
        self.assertEqual(self.revision(), f"revision {before + 1}")
        self.assertEqual([r[0] for r in self.listing()], ["cluster 4", "cluster 6"])
        # The best two by quality (faces 2 and 3) are the templates: face 2 matches itself.
        exported = [json.loads(l) for l in self.ok("export", self.g).splitlines()[1:]]
        self.assertEqual(len(exported), 2)
        # Into an existing identity: its metadata is kept, the templates are added.
        self.ok("enroll", self.g, "--bundle", BUNDLE, "--name", "messi", "--largest", MESSI)
        self.assertIn("enrolled 2 template(s)", self.ok("name", self.g, self.key(4), "messi"))
        messi = [l.split("\t") for l in self.ok("list", self.g).splitlines() if "\tmessi\t" in l][0]
        self.assertEqual((messi[2], messi[3]), ("3 template(s)", "{}"))
        self.assertEqual(self.revision(), f"revision {before + 3}")

    def test_forget_deletes_a_cluster_without_a_new_revision(self):
        before = self.revision()
        self.assertIn("forgot cluster 4: deleted 2 unknown face(s)", self.ok("forget", self.g, self.key(4)))
        self.assertEqual([r[0] for r in self.listing()], ["cluster 1", "cluster 6"])
        self.assertEqual(self.revision(), before)
        self.assertEqual(self.ok("list", self.g), "")

    def test_an_unknown_cluster_is_a_clear_error_and_changes_nothing(self):
        before = (self.revision(), self.listing())
        line = one_error_line(self, run("name", self.g, "999", "Nobody"))
        self.assertIn(self.g + ": no cluster 999 among 6 unknown face(s)", line)
        self.assertIn("nothing changed", line)
        line = one_error_line(self, run("forget", self.g, "2"))
        self.assertIn("face 2 is in cluster 1", line)
        self.assertEqual((self.revision(), self.listing()), before)
        self.assertEqual(self.ok("list", self.g), "")

    def test_hostile_options_are_usage_errors_and_change_nothing(self):
        before = (self.revision(), self.listing())
        for threshold in ("nan", "0", "-0.5", "1.5", "inf", "half"):
            r = run("unknowns", self.g, "--threshold", threshold)
            self.assertEqual(r.returncode, 2, threshold)
            self.assertIn("--threshold takes a cosine similarity in (0, 1]", r.stderr)
            self.assertEqual(run("forget", self.g, "1", "--threshold", threshold).returncode, 2)
        for templates in ("0", "101", "99999999999999999999999", "-1"):
            r = run("name", self.g, "1", "X", "--templates", templates)
            self.assertEqual(r.returncode, 2, templates)
            self.assertIn("--templates takes 1..100", r.stderr)
        self.assertEqual(run("name", self.g, "one", "X").returncode, 2)
        self.assertIn("identity name holds a control character", one_error_line(self, run("name", self.g, "1", "A\nB")))
        self.assertEqual((self.revision(), self.listing()), before)

    def test_copy_leaves_the_unknown_faces_behind(self):
        copied = os.path.join(self.dir, "copy.db")
        self.ok("copy", self.g, copied)
        self.assertIn("no unknown faces kept in", self.ok("unknowns", copied, "--sheets", self.dir))
        self.assertIn("\nunknown faces 6\n", self.ok("stats", self.g))
        self.assertIn("\nunknown faces 0\n", self.ok("stats", copied))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
