"""What the web page's tests share: a web_host started on a free loopback port (and stopped),
HTTP requests through urllib (a multipart/form-data encoder for uploads), the gallery CLI, and
unknown faces stored with tests/gallery's unknown_faces_helper."""
import base64
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request

YUNET = os.environ.get("TACONITE_YUNET_MODEL", "")


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(77)


def need_yunet():
    if not os.path.isfile(YUNET):
        skip(f"no YuNet model at {YUNET}: the web page finds faces with it (docs/models.md)")


class Host:
    """web_host serving a gallery; `url` ends with '/'."""

    def __init__(self, exe, *args, expect_failure=False):
        self.proc = subprocess.Popen([exe, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        if expect_failure:
            out, err = self.proc.communicate(timeout=120)
            self.returncode, self.stderr = self.proc.returncode, err
            return
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            self.proc.kill()
            raise AssertionError(f"web_host did not start: {line!r} {self.proc.stderr.read()}")
        self.url = line.split()[-1]
        self.auth = None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=60)

    def request(self, path, data=None, method=None, headers=None, content_type=None):
        """(status, headers, body bytes) of a request; never raises on an HTTP error status."""
        h = dict(headers or {})
        if content_type:
            h["Content-Type"] = content_type
        if self.auth:
            h["Authorization"] = "Basic " + base64.b64encode(self.auth.encode()).decode()
        req = urllib.request.Request(self.url.rstrip("/") + path, data=data, method=method, headers=h)
        try:
            with urllib.request.urlopen(req, timeout=300) as r:
                return r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read()

    def json(self, path, data=None, method=None, headers=None, content_type=None):
        status, _, body = self.request(path, data, method, headers, content_type)
        return status, json.loads(body) if body else None

    def post_json(self, path, fields):
        return self.json(path, json.dumps(fields).encode(), "POST", content_type="application/json")

    def upload(self, path, files):
        """POST multipart/form-data of (file name, bytes) pairs."""
        boundary = "taconite-test-boundary-7f3a"
        parts = []
        for name, data in files:
            head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"{name}\"\r\n"
                    "Content-Type: application/octet-stream\r\n\r\n")
            parts.append(head.encode() + data + b"\r\n")
        body = b"".join(parts) + f"--{boundary}--\r\n".encode()
        return self.json(path, body, "POST", content_type=f"multipart/form-data; boundary={boundary}")


def run(*args, **kw):
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=900, **kw)
    command = " ".join(map(str, args))
    assert r.returncode == 0, f"{command} failed ({r.returncode}):\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
    return r


def exported_embeddings(cli, gallery):
    """{name: [unit embedding of each template]} of a gallery, through taconite-gallery export."""
    out = {}
    for line in run(cli, "export", gallery).stdout.splitlines()[1:]:
        t = json.loads(line)
        out.setdefault(t["name"], []).append(t["embedding"])
    return out


def unknown_line(embedding, stream, track, first_ms, jpeg="-", quality=0.8):
    """One face for unknown_faces_helper (tab-separated; see tests/gallery/unknown_faces_helper.cpp)."""
    values = ",".join(repr(float(x)) for x in embedding)
    return f"{stream}\t{track}\t{first_ms}\t{first_ms + 3000}\t{quality}\t0\t\t0.0\t{jpeg}\t{values}\n"


def store_unknown_faces(helper, gallery, lines):
    r = subprocess.run([helper, gallery], input="".join(lines), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
