"""Unknown faces for the review commands' tests (test_gallery_cli.py on SQLite,
test_gallery_postgres.py on PostgreSQL), stored without a pipeline by the test-only
unknown_faces_helper (tests/gallery/unknown_faces_helper.cpp).

The faces are views of real photos' embeddings (the astronaut and Messi, embedded by
`taconite-gallery enroll` with the test bundle) plus a little noise, and one stranger (a random
direction). With the test bundle's synthetic weights the two photos' embeddings are far apart
(cosine ~0.24), so the clusters are known: astronaut (3 faces, 2 cameras), Messi (2 faces, one
without a picture), the stranger alone.
"""
import json
import os
import subprocess

import cv2
import numpy

ASTRONAUT = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png"
MESSI = "/usr/share/doc/opencv-doc/examples/data/messi5.jpg"
T0 = 1764590400000  # 2025-12-01T12:00:00.000Z


def photo_embeddings(cli, bundle, work, env=None):
    """The unit embeddings of the two photos, through enroll + export of a scratch SQLite gallery."""
    scratch = os.path.join(work, "embeddings.db")
    for args in (["create", scratch, "--bundle", bundle],
                 ["enroll", scratch, "--bundle", bundle, "--name", "astronaut", ASTRONAUT],
                 ["enroll", scratch, "--bundle", bundle, "--name", "messi", "--largest", MESSI]):
        r = subprocess.run([cli, *args], capture_output=True, text=True, timeout=600, env=env)
        assert r.returncode == 0, r.stderr
    r = subprocess.run([cli, "export", scratch], capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stderr
    lines = [json.loads(l) for l in r.stdout.splitlines()[1:]]
    return {l["name"]: numpy.array(l["embedding"], dtype=numpy.float64) for l in lines}


def crop(photo, work, name):
    """A 112x112 JPEG of the photo, as taconiteidentify keeps an aligned crop."""
    path = os.path.join(work, name)
    cv2.imwrite(path, cv2.resize(cv2.imread(photo), (112, 112), interpolation=cv2.INTER_AREA))
    return path


def view(embedding, seed, noise=0.05):
    rng = numpy.random.default_rng(seed)
    v = embedding + rng.normal(0.0, noise / numpy.sqrt(len(embedding)), len(embedding))
    return v / numpy.linalg.norm(v) * 20.0  # a raw embedding: stored at unit length, norm 20


def line(embedding, stream="door", track=7, first=T0, last=T0 + 4000, quality=0.8, jpeg="-", nearest=0,
         nearest_name="", similarity=0.0):
    """One face for unknown_faces_helper: tab-separated fields, the embedding's values by commas."""
    values = ",".join(repr(float(x)) if isinstance(x, (float, numpy.floating)) else str(x) for x in embedding)
    return f"{stream}\t{track}\t{first}\t{last}\t{quality}\t{nearest}\t{nearest_name}\t{similarity}\t{jpeg}\t{values}\n"


def review_faces(embeddings, work):
    """The faces of the review scenario, in the order stored (ids 1..6)."""
    astronaut = crop(ASTRONAUT, work, "astronaut-crop.jpg")
    messi = crop(MESSI, work, "messi-crop.jpg")
    stranger = numpy.random.default_rng(99).normal(size=len(embeddings["astronaut"]))
    return [
        line(view(embeddings["astronaut"], 1), "door", 1, T0, T0 + 4000, 0.5, astronaut, 2, "messi", 0.24),
        line(view(embeddings["astronaut"], 2), "yard", 2, T0 + 60000, T0 + 65000, 0.9, astronaut, 2, "messi", 0.31),
        line(view(embeddings["astronaut"], 3), "door", 3, T0 + 120000, T0 + 121000, 0.7, astronaut),
        line(view(embeddings["messi"], 4), "door", 4, T0 + 5000, T0 + 9000, 0.8, messi),
        line(view(embeddings["messi"], 5), "door", 5, T0 + 10000, T0 + 12000, 0.6),  # no picture kept
        line(stranger, "lobby", 6, T0 + 30000, T0 + 30000, 0.4, "-"),
    ]


def add_unknown(helper, gallery, lines, *retention, env=None):
    """Stores unknown faces; returns the completed process (stdout: their ids)."""
    return subprocess.run([helper, gallery, *map(str, retention)], input="".join(lines), capture_output=True,
                          text=True, timeout=600, env=env)
