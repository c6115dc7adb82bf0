"""The web page in a real headless browser (Debian's chromium over the DevTools protocol): the page
loads, a person is added through its form, a hostile name is shown as text (never run), an
unknown-face cluster is named through the page, and then POST /api/recognize of another photo of
that face returns the name. With ../shared/realfaces (a real embedder, real people) when present;
otherwise the IR-tiny test bundle and opencv-doc's messi5.jpg (synthetic weights: the same photo
is recognised, which still shows the naming reached the gallery). Screenshots of each tab (faces
blurred) are copied into docs/images/ with TACONITE_UPDATE_DOC_IMAGES=1, on the fallback scenario only:
realfaces' people are never committed, not even in a screenshot.

Usage: test_web_browser.py WEB_HOST TACONITE_GALLERY UNKNOWN_FACES_HELPER BUNDLE"""
import json
import os
import shutil
import sys
import tempfile

import cv2

from headless_chromium import Chromium
from web_fixture import Host, YUNET, exported_embeddings, need_yunet, run, skip, store_unknown_faces, unknown_line

REALFACES = os.environ.get("TACONITE_REALFACES_DIR", "")
MESSI = "/usr/share/doc/opencv-doc/examples/data/messi5.jpg"
# The real 128-d embedder and its description (docs/models.md), as tests/gst/realfaces_model.py.
REAL_MODEL = "mobilefacenet_foamliu_opset10.onnx"
REAL_DESCRIPTION = {"format": "taconite-embedder/1", "name": "mobilefacenet-foamliu",
                    "input": {"name": "input0", "width": 112, "height": 112, "channel_order": "RGB",
                              "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]},
                    "output": {"name": "output0", "dim": 128}, "threshold": 0.32}
HOSTILE = "<img src=x onerror=\"document.title='pwned'\">"


def crop(photo, path):
    """A 112x112 JPEG of the photo, standing in for the aligned crop a pipeline keeps."""
    cv2.imwrite(path, cv2.resize(cv2.imread(photo), (112, 112), interpolation=cv2.INTER_AREA))
    return path


def scenario(work, bundle):
    """(model, known person and photos added through the page or None, unknown person's photos, held-out photo)."""
    photos = os.path.join(REALFACES, "photos")
    if os.path.isdir(photos) and os.path.isfile(os.path.join(REALFACES, "models", REAL_MODEL)):
        model = os.path.join(work, REAL_MODEL)
        os.symlink(os.path.join(REALFACES, "models", REAL_MODEL), model)
        with open(model[:-len(".onnx")] + ".json", "w") as f:
            json.dump(REAL_DESCRIPTION, f)
        obama = [os.path.join(photos, "barack_obama", p) for p in ("obama.jpg", "obama1.jpg")]
        seinfeld = [os.path.join(photos, "jerry_seinfeld", p) for p in
                    ("jasmcaus_train_1.jpg", "jasmcaus_train_11.jpg", "jasmcaus_train_12.jpg")]
        held_out = os.path.join(photos, "jerry_seinfeld", "jasmcaus_val_4.jpg")
        print("real faces: mobilefacenet, Obama added through the page, Seinfeld named from unknown faces")
        return model, ("Barack Obama", obama), ("Jerry Seinfeld", seinfeld), held_out
    if not os.path.isfile(MESSI):
        skip(f"neither {REALFACES} nor {MESSI} (opencv-doc): no faces to show the page")
    print(f"no real faces at {REALFACES}: the IR-tiny bundle and messi5.jpg (the same photo is recognised)")
    return bundle, None, ("Lionel Messi", [MESSI]), MESSI


def main():
    host_exe, cli, helper, bundle = sys.argv[1:5]
    need_yunet()
    if not shutil.which("chromium"):
        skip("no chromium (Debian's chromium package): the page is tested in a real browser")
    work = tempfile.mkdtemp(prefix="app-web-browser-")
    model, known, unknown, held_out = scenario(work, bundle)
    gallery = os.path.join(work, "faces.db")
    run(cli, "create", gallery, "--model", model)

    # The unknown person's faces, embedded as a pipeline would (YuNet, aligned, the model), kept as
    # unknown faces of two cameras.
    scratch = os.path.join(work, "scratch.db")
    run(cli, "create", scratch, "--model", model)
    run(cli, "enroll", scratch, "--model", model, "--detector", YUNET, "--largest", "--name", "x", *unknown[1])
    embeddings = exported_embeddings(cli, scratch)["x"]
    assert len(embeddings) == len(unknown[1]), embeddings
    t0 = 1764590400000
    store_unknown_faces(helper, gallery, [
        unknown_line([v * 20 for v in e], ("door1", "door2")[i % 2], i + 1, t0 + i * 60000,
                     crop(unknown[1][i], os.path.join(work, f"crop{i}.jpg")))
        for i, e in enumerate(embeddings)])
    snapshots = os.path.join(work, "snapshots")
    os.makedirs(snapshots)
    crop(unknown[1][0], os.path.join(snapshots, "door1-u1.jpg"))
    events = [{"schema": "taconite-tracks/1", "stream": "door1", "event": "end", "uid": "u1",
               "epoch_s": t0 / 1000 + 120, "label": None, "label_state": "unknown", "dwell_s": 4.2,
               "snapshot": "door1-u1.jpg"},
              {"schema": "taconite-tracks/1", "stream": "door2", "event": "new", "uid": "u2",
               "epoch_s": t0 / 1000 + 60, "label": HOSTILE, "label_state": "known", "confidence": 0.71}]
    events_file = os.path.join(work, "events.json")
    with open(events_file, "w") as f:
        json.dump(events, f)

    host = Host(host_exe, "--gallery", gallery, "--model", model, "--detector", YUNET, "--snapshots", snapshots,
                "--events", events_file, "--camera", "door1=streaming", "--camera", "door2=lost:no route to host")
    browser = None
    shots = []
    try:
        # A hostile name, enrolled through the API: the page must show it as text.
        status, r = host.upload("/api/people/photos?name=" + __import__("urllib.parse").parse.quote(HOSTILE),
                                [("p.jpg", open(held_out if known is None else known[1][0], "rb").read())])
        assert status == 200, r
        browser = Chromium()

        def show(tab):
            browser.evaluate("document.body.dataset.loaded = ''")
            browser.evaluate(f"document.querySelector('#tabs button[data-tab={tab}]').click()")
            browser.wait_for(f"document.body.dataset.loaded === '{tab}'")

        def screenshot(name):
            browser.evaluate("document.querySelectorAll('img').forEach(i => { i.style.filter = 'blur(12px)'; })")
            browser.wait_for("[...document.images].every(i => i.complete)")
            path = os.path.join(work, name)
            browser.screenshot(path)
            shots.append(path)

        browser.navigate(host.url)
        browser.wait_for("document.body.dataset.loaded === 'people'")
        names = browser.evaluate("[...document.querySelectorAll('.person h2')].map(h => h.textContent)")
        assert HOSTILE in names, names
        assert browser.evaluate("document.title") != "pwned"
        assert browser.evaluate("document.querySelectorAll('.person h2 img').length") == 0

        # Rename the hostile name through the page; remove one of its templates.
        browser.evaluate("document.querySelector('.person .rename-input').value = 'Renamed Person'")
        browser.evaluate("document.querySelector('.person .rename-button').click()")
        browser.wait_for("[...document.querySelectorAll('.person h2')].some(h => h.textContent === 'Renamed Person')")
        browser.evaluate("document.querySelector('.person .template-remove').click()")
        browser.evaluate("document.querySelector('.person .template-remove').click()")  # the second click confirms
        browser.wait_for("document.getElementById('status').textContent.startsWith('Removed a template')")
        people = {p["name"]: p for p in host.json("/api/people")[1]}
        assert "Renamed Person" in people and people["Renamed Person"]["template_count"] == 0, people

        if known:
            # Add photos through the page's form (the file input set as a user would pick files).
            browser.evaluate(f"document.getElementById('add-name').value = {json.dumps(known[0])}")
            doc = browser.call("DOM.getDocument")["root"]["nodeId"]
            node = browser.call("DOM.querySelector", nodeId=doc, selector="#add-files")["nodeId"]
            browser.call("DOM.setFileInputFiles", nodeId=node, files=[os.path.realpath(p) for p in known[1]])
            browser.evaluate("document.body.dataset.loaded = ''")
            browser.evaluate("document.querySelector('#add-photos button').click()")
            browser.wait_for("document.getElementById('status').textContent.includes('enrolled')", timeout=120)
            said = browser.evaluate("document.getElementById('status').textContent")
            assert said.startswith(f"{len(known[1])} template(s) enrolled for {known[0]}"), said
            browser.wait_for(f"[...document.querySelectorAll('.person h2')].some(h => h.textContent === "
                             f"{json.dumps(known[0])})")
            browser.wait_for("[...document.querySelectorAll('.person img')].some(i => "
                             "i.src.includes('/thumbnail.jpg') && i.complete && i.naturalWidth > 0)")
        screenshot("web-people.png")

        show("unknowns")
        sizes = browser.evaluate("[...document.querySelectorAll('.cluster h2')].map(h => h.textContent)")
        assert sizes == [f"{len(unknown[1])} face(s)"], sizes
        screenshot("web-unknowns.png")
        # Name the cluster through the page.
        browser.evaluate(f"document.querySelector('.cluster .cluster-name').value = {json.dumps(unknown[0])}")
        browser.evaluate("document.querySelector('.cluster .cluster-name-button').click()")
        browser.wait_for("document.getElementById('status').textContent.startsWith('Named')")
        browser.wait_for("document.querySelectorAll('.cluster').length === 0")

        # The named person is now recognised in another photo: through the page, and the API.
        show("people")
        doc = browser.call("DOM.getDocument")["root"]["nodeId"]
        node = browser.call("DOM.querySelector", nodeId=doc, selector="#recognize-file")["nodeId"]
        browser.call("DOM.setFileInputFiles", nodeId=node, files=[os.path.realpath(held_out)])
        browser.evaluate("document.querySelector('#recognize button').click()")
        said = browser.wait_for("/[a-z]/.test(document.getElementById('recognize-result').textContent) && "
                                "document.getElementById('recognize-result').textContent")
        assert said.startswith(unknown[0] + " ("), said
        status, r = host.json("/api/recognize", open(held_out, "rb").read(), "POST", content_type="image/jpeg")
        assert status == 200 and r["faces"], r
        assert r["faces"][0]["label"] == unknown[0], r
        print(f"recognised {unknown[0]} with confidence {r['faces'][0]['confidence']:.3f} "
              f"(threshold {r['threshold']})")

        show("events")
        rows = browser.evaluate("[...document.querySelectorAll('#events-table tbody tr')].map(r => r.textContent)")
        assert len(rows) == 2 and HOSTILE in rows[1], rows
        assert browser.evaluate("document.querySelector('#events-table img').naturalWidth") == 112
        assert browser.evaluate("document.title") != "pwned"
        screenshot("web-events.png")
        show("cameras")
        states = browser.evaluate("[...document.querySelectorAll('#cameras-table tbody tr td:nth-child(2)')]"
                                  ".map(t => t.textContent)")
        assert states == ["streaming", "lost"], states
        screenshot("web-cameras.png")
    finally:
        if browser:
            browser.close()
        host.stop()
    target = os.environ.get("TACONITE_DOCS_IMAGES", "")
    if os.environ.get("TACONITE_UPDATE_DOC_IMAGES") == "1" and target and model != bundle:
        # ../shared/realfaces' people are never committed, not even in a screenshot.
        print("screenshots not copied: they show ../shared/realfaces' people; run with TACONITE_REALFACES_DIR=/none")
    elif os.environ.get("TACONITE_UPDATE_DOC_IMAGES") == "1" and target:
        os.makedirs(target, exist_ok=True)
        for s in shots:
            shutil.copy(s, target)
        print(f"screenshots copied to {target}")
    shutil.rmtree(work, ignore_errors=True)  # kept when the test fails, to look at
    print("ok: the page named a cluster and the person is recognised")


if __name__ == "__main__":
    main()
