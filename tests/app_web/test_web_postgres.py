"""The web page's API on a PostgreSQL gallery (a private server this test starts, as the gallery
tests do: tests/gallery/pg_server.py): photos added with their thumbnails kept in the database's
template_thumbnails table, recognised, renamed, a template removed (its thumbnail with it), an
unknown-face cluster named. Skips without Debian's postgresql or the YuNet model.

Usage: test_web_postgres.py WEB_HOST TACONITE_GALLERY BUNDLE UNKNOWN_FACES_HELPER"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gallery"))
import pg_server  # noqa: E402

from web_fixture import Host, YUNET, need_yunet, skip, unknown_line  # noqa: E402

MESSI = "/usr/share/doc/opencv-doc/examples/data/messi5.jpg"


def main():
    host_exe, cli, bundle, helper = sys.argv[1:5]
    need_yunet()
    if not pg_server.installed():
        skip("no PostgreSQL server binaries (Debian's postgresql)")
    if not os.path.isfile(MESSI):
        skip(f"no {MESSI} (Debian's opencv-doc)")
    messi = open(MESSI, "rb").read()
    server = pg_server.Server()
    server.start()
    host = None
    try:
        gallery = server.createdb("faces")

        def run(*args, **kw):
            r = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=600, env=server.env,
                               **kw)
            assert r.returncode == 0, r.stdout + r.stderr
            return r
        run(cli, "create", gallery, "--model", bundle)
        # web_host reads the server's password file from the environment, as libpq does.
        os.environ.update(server.env)
        # The model handed over already loaded, as taconite-run shares its engine's.
        host = Host(host_exe, "--gallery", gallery, "--model", bundle, "--detector", YUNET, "--shared-model", "yes")
        status, r = host.upload("/api/people/photos?name=Messi", [("messi5.jpg", messi), ("x.txt", b"no")])
        assert status == 200 and r["enrolled"] == 1 and r["failed"] == 1, r
        people = host.json("/api/people")[1]
        thumb = people[0]["templates"][0]["thumbnail"]
        status, headers, jpeg = host.request(thumb)
        assert status == 200 and jpeg[:2] == b"\xff\xd8", status
        assert server.psql("faces", "SELECT count(*) FROM template_thumbnails").strip() == "1"
        status, r = host.json("/api/recognize", messi, "POST", content_type="image/jpeg")
        assert status == 200 and r["faces"][0]["label"] == "Messi", r

        # An unknown-face cluster named through the API.
        values = json.loads(run(cli, "export", gallery).stdout.splitlines()[1])["embedding"]
        lines = [unknown_line([v * 20 + i * 1e-3 for v in values], "door1", i, 1764590400000 + i) for i in range(2)]
        run(helper, gallery, input="".join(lines))
        clusters = host.json("/api/unknowns")[1]
        assert [c["size"] for c in clusters] == [2], clusters
        status, r = host.post_json("/api/unknowns/name", {"key": clusters[0]["key"], "name": "Leo"})
        assert status == 200 and r["enrolled"] == 2, r
        assert host.json("/api/unknowns") == (200, [])

        status, r = host.post_json("/api/people/rename", {"name": "Leo", "new_name": "Messi"})
        assert status == 400, r
        status, r = host.post_json("/api/people/rename", {"name": "Messi", "new_name": "Lionel"})
        assert status == 200, r
        people = {p["name"]: p for p in host.json("/api/people")[1]}
        assert sorted(people) == ["Leo", "Lionel"], people
        template = people["Lionel"]["templates"][0]["id"]
        assert host.post_json(f"/api/templates/{template}/remove", {})[0] == 200
        assert host.request(thumb)[0] == 404
        assert server.psql("faces", "SELECT count(*) FROM template_thumbnails").strip() == "0"
        assert run(cli, "list", gallery).stdout.count("\n") >= 2
        print("ok: the API on a PostgreSQL gallery, thumbnails in its database")
    finally:
        if host:
            host.stop()
        server.stop()


if __name__ == "__main__":
    main()
