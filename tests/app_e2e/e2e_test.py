#!/usr/bin/python3
"""Issue 34's story through the one binary: taconite-run with every config section (MQTT to a real
mosquitto on loopback, the web page, the event history, snapshots, a gallery), file cameras.

1. The gallery starts empty: the first run's tracks end `unknown`, their best faces are kept, every
   event is in GET /api/events, snapshots are written and served, MQTT has `online` (retained),
   the discovery documents and a snapshot on `<prefix>/<camera>/snapshot`.
2. The largest unknown cluster is named "Alice" on the web page, in Debian's headless chromium (the
   Unknown faces tab's name field and button; through POST /api/unknowns/name only where chromium is
   not installed, saying so); its faces' pictures become her templates' thumbnails. Home Assistant
   learns of her: her occupancy binary_sensor is discovered (the people watch polls the gallery every 5 s).
3. SIGHUP with a camera `door2` added on the same recording: its events name Alice
   (GET /api/events?person=Alice; MQTT `<prefix>/door2/person` "Alice", retained; her sensor on door2
   on, then off). Then SIGHUP with door1 removed: its entities are deleted, the page forgets it.
4. SIGTERM: exit 0, `offline` retained.

The recording is ../shared/realfaces' clip with its real MobileFaceNet embedder; without it, the
project's own demo video (pipelines/make_demo_video.py) with the IR-tiny test bundle.

Usage: e2e_test.py TACONITE_RUN GALLERY_CLI MKBUNDLE YUNET.onnx SOURCE_DIR REALFACES_DIR WORK_DIR
Exit 77 (skipped, saying why) without mosquitto or the YuNet model.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "app_mqtt"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "app_web"))
from mqtt_fixtures import MOSQUITTO, Broker, free_port  # noqa: E402 (the app_mqtt suite's real broker)

SKIP = 77
PREFIX, NODE = "taconite", "e2e"  # topic_prefix, and the discovery node id (the client id, slugged)
MOBILEFACENET = "mobilefacenet_foamliu_opset10"
# The embedder's description (taconite-embedder/1), as bench/gst/real_clip_modes.py and docs/models.md give it.
MOBILEFACENET_DESCRIPTION = {
    "format": "taconite-embedder/1", "name": "mobilefacenet-foamliu",
    "input": {"name": "input0", "width": 112, "height": 112, "channel_order": "RGB",
              "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]},
    "output": {"name": "output0", "dim": 128}, "threshold": 0.32}


class StoryFailed(AssertionError):
    pass


def check(condition, message):
    if not condition:
        raise StoryFailed(message)


def wait_for(condition, timeout_s, what):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    raise StoryFailed(f"timed out after {timeout_s} s waiting for {what}")


def settle(read, ok, timeout_s):
    """read() until ok(value) or the time is up: the last value, for a check that shows it."""
    deadline = time.monotonic() + timeout_s
    value = read()
    while not ok(value) and time.monotonic() < deadline:
        time.sleep(0.2)
        value = read()
    return value


def run(*args):
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=300)
    check(done.returncode == 0, f"{' '.join(map(str, args))} failed ({done.returncode}): {done.stderr[-2000:]}")
    return done


class Subscriber:
    """mosquitto_sub on '#' from before taconite-run starts: every message in arrival order."""

    def __init__(self, port):
        self.path = os.path.join(WORK, "mqtt.log")
        self.out = open(self.path, "w", encoding="utf-8")
        self.process = subprocess.Popen(["mosquitto_sub", "-h", "127.0.0.1", "-p", str(port), "-t", "#", "-q", "1",
                                         "-F", "%t %x"], stdout=self.out, stderr=subprocess.DEVNULL)
        probe = f"probe/{time.monotonic_ns()}"  # once our own probe is back, the subscription is in place

        def probed():
            subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(port), "-t", probe, "-m", "p"], check=False)
            return probe in self.topics()
        wait_for(probed, 20, "mosquitto_sub's subscription")

    def messages(self):
        self.out.flush()
        with open(self.path, encoding="utf-8") as f:
            complete = f.read().split("\n")[:-1]  # the last line may still be being written
        lines = [line.rsplit(" ", 1) for line in complete if " " in line]
        return [(topic, bytes.fromhex(payload)) for topic, payload in lines]

    def topics(self):
        return {topic for topic, _ in self.messages()}

    def payloads(self, topic):
        return [payload for t, payload in self.messages() if t == topic]

    def close(self):
        self.process.terminate()
        self.process.wait(10)
        self.out.close()


def retained(port):
    """What the broker keeps (topic -> payload): a new subscriber gets exactly the retained messages."""
    done = subprocess.run(["mosquitto_sub", "-h", "127.0.0.1", "-p", str(port), "-t", "#", "--retained-only",
                           "-W", "2", "-F", "%r %t %x"], capture_output=True, text=True, timeout=20)
    kept = {}
    for line in done.stdout.splitlines():
        flag, rest = line.split(" ", 1)
        topic, payload = rest.rsplit(" ", 1)
        if flag == "1":
            kept[topic] = bytes.fromhex(payload)
    return kept


# The page is on loopback: never through a proxy the environment may name.
HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def get_json(url):
    with HTTP.open(url, timeout=20) as reply:
        check(reply.status == 200, f"GET {url}: {reply.status}")
        return json.loads(reply.read())


def post_json(url, body):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with HTTP.open(request, timeout=60) as reply:
        return json.loads(reply.read())


def fetch(url):
    with HTTP.open(url, timeout=20) as reply:
        return reply.status, reply.headers.get("Content-Type", ""), reply.read()


def recording_and_model():
    """(recording, model, what): the real clip and MobileFaceNet, else the demo video and IR-tiny."""
    clip = os.path.join(REALFACES, "video", "short_hamilton_clip.mp4")
    onnx = os.path.join(REALFACES, "models", MOBILEFACENET + ".onnx")
    if os.path.isfile(clip) and os.path.isfile(onnx):
        model = os.path.join(WORK, MOBILEFACENET + ".onnx")  # its description beside it (realfaces is read-only)
        os.symlink(onnx, model)
        with open(os.path.join(WORK, MOBILEFACENET + ".json"), "w", encoding="utf-8") as f:
            json.dump(MOBILEFACENET_DESCRIPTION, f)
        return clip, model, "the real clip with MobileFaceNet"
    print(f"{REALFACES} has no clip or MobileFaceNet: the demo video with the IR-tiny test bundle instead")
    bundle = os.path.join(WORK, "ir-tiny")
    run(MKBUNDLE, "--model", "ir-tiny", "--out", bundle, "--force")
    video = os.path.join(WORK, "demo.avi")
    run("/usr/bin/python3", os.path.join(SOURCE, "pipelines", "make_demo_video.py"), video, "--seconds", "4")
    return video, bundle, "the demo video with IR-tiny"


def write_config(path, model, gallery, mqtt_port, http_port, cameras):
    lines = [f"model: {model}", f"detector: {YUNET}", f"gallery: {gallery}",
             f"mqtt: {{host: 127.0.0.1, port: {mqtt_port}, topic_prefix: {PREFIX}, client_id: {NODE}}}",
             f"http: {{listen: '127.0.0.1:{http_port}'}}",
             f"storage: {{events: true, snapshots: {{dir: {os.path.join(WORK, 'snapshots')}}}}}", "cameras:"]
    lines += [f"  {name}: {{uri: 'file://{uri}'}}" for name, uri in cameras.items()]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def ended(events, camera):
    return [e for e in events if e["camera"] == camera and e["kind"] == "end"]


def first_run(base, sub, port):
    """(1): an empty gallery; every track ends unknown; history, snapshots and MQTT have it all."""
    wait_for(lambda: any(t == f"{PREFIX}/available" and p == b"online" for t, p in sub.messages()), 30,
             f"{PREFIX}/available online")
    wait_for(lambda: "door1: ended (end of stream)" in LOG.text(), 60, "door1's end of stream")
    # Every event the camera published on MQTT is in the history (the same uids and kinds), each end
    # with its snapshot (both are written by threads of their own: given a few seconds).
    def both():
        published = [json.loads(p) for p in sub.payloads(f"{PREFIX}/door1/events")]
        return published, get_json(base + "/api/events?camera=door1&limit=1000")

    def agree(value):
        published, events = value
        return ({(e["uid"], e["event"]) for e in published} == {(e["uid"], e["kind"]) for e in events} and
                all(e.get("snapshot_url") for e in ended(events, "door1")))
    published, events = settle(both, agree, 10)
    ends = ended(events, "door1")
    check(ends, f"door1's history holds no end event: {events[:3]}")
    check(all(e["label_state"] == "unknown" for e in ends),
          f"with an empty gallery every track ends unknown: {[(e['uid'], e['label_state']) for e in ends]}")
    on_mqtt = sorted((e["uid"][:8], e["event"]) for e in published)
    in_history = sorted((e["uid"][:8], e["kind"]) for e in events)
    check({(e["uid"], e["event"]) for e in published} == {(e["uid"], e["kind"]) for e in events},
          f"MQTT published {len(published)} events, the history holds {len(events)}: {on_mqtt} vs {in_history}")
    # Snapshots: written, named in the history, served as JPEGs.
    with_snapshot = [e for e in ends if e.get("snapshot_url")]
    check(len(with_snapshot) == len(ends), f"{len(with_snapshot)} of {len(ends)} end events have a snapshot_url")
    status, kind, body = fetch(base + with_snapshot[0]["snapshot_url"])
    check(status == 200 and kind == "image/jpeg" and body[:3] == b"\xff\xd8\xff",
          f"{with_snapshot[0]['snapshot_url']}: {status} {kind} {body[:8]!r}")
    check(os.path.isfile(with_snapshot[0]["snapshot"]), f"{with_snapshot[0]['snapshot']} is not a file")
    # The best faces of the unknown tracks are kept for review.
    unknowns = get_json(base + "/api/unknowns")
    check(unknowns and sum(c["size"] for c in unknowns) == len(ends),
          f"{len(ends)} unknown tracks, unknown faces kept: {[(c['key'], c['size']) for c in unknowns]}")
    status, kind, body = fetch(base + unknowns[0]["faces"][0]["picture"])
    check(status == 200 and body[:3] == b"\xff\xd8\xff", f"an unknown face's picture: {status} {kind}")
    # MQTT: retained availability, discovery documents, a retained snapshot, the last person.
    kept = wait_for(lambda: (lambda r: r if f"{PREFIX}/door1/snapshot" in r else None)(retained(port)), 10,
                    "a retained snapshot")
    available = kept.get(f"{PREFIX}/available")
    check(available == b"online", f"{PREFIX}/available retained: {available}")
    check(kept[f"{PREFIX}/door1/snapshot"][:3] == b"\xff\xd8\xff", "the retained snapshot is not a JPEG")
    check(kept.get(f"{PREFIX}/door1/person") == b"unknown", f"door1/person: {kept.get(PREFIX + '/door1/person')}")
    sensor = json.loads(kept.get(f"homeassistant/sensor/{NODE}/{NODE}_door1_last_person/config", b"null"))
    check(sensor and sensor["state_topic"] == f"{PREFIX}/door1/person", f"the last-person sensor's discovery: {sensor}")
    image = json.loads(kept.get(f"homeassistant/image/{NODE}/{NODE}_door1_snapshot/config", b"null"))
    check(image and image["image_topic"] == f"{PREFIX}/door1/snapshot", f"the snapshot image's discovery: {image}")
    check(not [t for t in kept if "/binary_sensor/" in t], f"person sensors before anyone is known: {sorted(kept)}")
    print(f"(1) door1: {len(ends)} tracks ended unknown, {len(events)} events in the history, "
          f"{len(unknowns)} unknown clusters, snapshots served, MQTT retained {len(kept)} topics")
    return unknowns


def alice_sensor(camera):
    """Alice's occupancy binary_sensor's discovery topic on the camera (her slug ends in a hash of her name)."""
    return re.compile(rf"homeassistant/binary_sensor/{NODE}/{NODE}_{camera}_person_(alice_[0-9a-f]{{8}})/config")


def name_on_the_page(base, key, name):
    """Names the cluster listed under `key` as a user does: the page's Unknown faces tab in headless
    chromium, its name field and button. {"person", "enrolled"} as the page said them."""
    try:
        from headless_chromium import Chromium
        browser = Chromium()
    except FileNotFoundError:
        print("no chromium: the cluster is named through POST /api/unknowns/name instead of the page")
        return post_json(base + "/api/unknowns/name", {"key": key, "name": name})
    try:
        browser.navigate(base + "/")
        browser.wait_for("document.body.dataset.loaded === 'people'")
        browser.evaluate("document.body.dataset.loaded = ''")
        browser.evaluate("document.querySelector('#tabs button[data-tab=unknowns]').click()")
        browser.wait_for("document.body.dataset.loaded === 'unknowns'")
        card = f"document.querySelector('.cluster[data-key={json.dumps(key)}]')"
        check(browser.evaluate(f"{card} !== null"), f"the page does not list cluster {key}")
        browser.evaluate(f"{card}.querySelector('.cluster-name').value = {json.dumps(name)}")
        browser.evaluate(f"{card}.querySelector('.cluster-name-button').click()")
        said = browser.wait_for("document.getElementById('status').textContent.startsWith('Named') && "
                                "document.getElementById('status').textContent")
    finally:
        browser.close()
    match = re.fullmatch(r"Named (.+): (\d+) template\(s\) enrolled", said)
    check(match is not None, f"the page said {said!r}")
    print(f"the page said: {said}")
    return {"person": match.group(1), "enrolled": int(match.group(2))}


def name_alice(base, unknowns, port):
    """(2): the largest unknown cluster becomes Alice; Home Assistant learns of her (the gallery watch)."""
    largest = max(unknowns, key=lambda c: c["size"])
    check(largest is unknowns[0], f"/api/unknowns is not largest first: {[c['size'] for c in unknowns]}")
    named = name_on_the_page(base, largest["key"], "Alice")
    check(named.get("person") == "Alice" and named.get("enrolled", 0) >= 1, f"naming the cluster: {named}")
    people = get_json(base + "/api/people")
    check([p["name"] for p in people] == ["Alice"], f"the people after naming: {people}")
    left = get_json(base + "/api/unknowns")
    check(largest["key"] not in [c["key"] for c in left], "the named cluster is still listed as unknown")
    thumbnails = [t["thumbnail"] for t in people[0]["templates"]]
    check(len(thumbnails) == named["enrolled"] and all(thumbnails), f"Alice's templates' thumbnails: {thumbnails}")
    status, kind, body = fetch(base + thumbnails[0])
    check(status == 200 and body[:3] == b"\xff\xd8\xff", f"{thumbnails[0]}: {status} {kind}")
    # The people watch polls the gallery every 5 s: Alice's sensor on door1, off (she is not there).
    sensor = alice_sensor("door1")
    kept = settle(lambda: retained(port), lambda r: any(sensor.fullmatch(t) for t in r), 15)
    found = [sensor.fullmatch(t) for t in kept if sensor.fullmatch(t)]
    check(found, f"no binary_sensor of Alice on door1 within 15 s: {sorted(t for t in kept if 'binary' in t)}")
    document = json.loads(kept[found[0].group(0)])
    slug = found[0].group(1)
    check(document["name"] == "Alice" and document["device_class"] == "occupancy" and
          document["state_topic"] == f"{PREFIX}/door1/{slug}", f"Alice's sensor on door1: {document}")
    check(kept.get(f"{PREFIX}/door1/{slug}") == b"OFF", f"{PREFIX}/door1/{slug}: {kept.get(f'{PREFIX}/door1/{slug}')}")
    print(f"(2) cluster {largest['key']} ({largest['size']} faces) named Alice: {named['enrolled']} templates "
          f"with thumbnails; her occupancy sensor on door1 discovered ({slug})")
    return slug


def second_run(base, sub, port, config, cameras, slug):
    """(3): SIGHUP with door2 added: its events know Alice, on the web API and on MQTT."""
    write_config(config, *cameras)
    LOG.process.send_signal(signal.SIGHUP)
    wait_for(lambda: "door2: ended (end of stream)" in LOG.text(), 60, "door2's end of stream")
    check("reload: 1 started, 0 stopped, 0 restarted" in LOG.text(), "the reload did not start door2 alone")
    # The history and MQTT name Alice on the same tracks (each written by a thread of its own).
    def both():
        published = [json.loads(p) for p in sub.payloads(f"{PREFIX}/door2/events")]
        return published, get_json(base + "/api/events?person=Alice&limit=1000")

    def agree(value):
        published, alice = value
        return alice and {e["uid"] for e in published if e.get("label") == "Alice"} == {e["uid"] for e in alice}
    published, alice = settle(both, agree, 10)
    check(alice, "no event of Alice in GET /api/events?person=Alice")
    check(all(e["label"] == "Alice" and e["label_state"] == "known" for e in alice),
          f"GET /api/events?person=Alice: {[(e['camera'], e['label'], e['label_state']) for e in alice]}")
    check(all(e["camera"] == "door2" for e in alice), f"Alice before she was named: {[e['camera'] for e in alice]}")
    alice_ends = [e for e in alice if e["kind"] == "end"]
    check(alice_ends, f"no track of door2 ended as Alice: {[(e['kind'], e['uid'][:8]) for e in alice]}")
    alice_ends = settle(lambda: ended(get_json(base + "/api/events?person=Alice&limit=1000"), "door2"),
                        lambda ends: all(e.get("snapshot_url") for e in ends), 10)
    check(all(e.get("snapshot_url") for e in alice_ends), f"Alice's end events without a snapshot: {alice_ends}")
    status, kind, body = fetch(base + alice_ends[0]["snapshot_url"])
    check(status == 200 and body[:3] == b"\xff\xd8\xff", f"{alice_ends[0]['snapshot_url']}: {status} {kind}")
    # MQTT: door2's events name Alice, its person topic said Alice, and what is retained is its last word.
    check({e["uid"] for e in published if e.get("label") == "Alice"} == {e["uid"] for e in alice},
          f"door2's MQTT events name Alice on {sum(e.get('label') == 'Alice' for e in published)} of "
          f"{len(published)}; the history on {len(alice)}")
    said = sub.payloads(f"{PREFIX}/door2/person")
    check(b"Alice" in said, f"{PREFIX}/door2/person said {said}")
    kept = settle(lambda: retained(port), lambda r: r.get(f"{PREFIX}/door2/{slug}") == b"OFF", 5)
    check(kept.get(f"{PREFIX}/door2/person") == said[-1], f"door2/person retained {kept.get(PREFIX + '/door2/person')}"
          f", last said {said[-1]}")
    # The camera added by the reload got its entities: Alice's sensor, on while her tracks were open,
    # off once the recording ended; its availability and a snapshot.
    document = json.loads(kept.get(f"homeassistant/binary_sensor/{NODE}/{NODE}_door2_person_{slug}/config", b"null"))
    check(document and document["state_topic"] == f"{PREFIX}/door2/{slug}", f"Alice's sensor on door2: {document}")
    occupancy = sub.payloads(f"{PREFIX}/door2/{slug}")
    check(b"ON" in occupancy and kept.get(f"{PREFIX}/door2/{slug}") == b"OFF",
          f"{PREFIX}/door2/{slug} said {occupancy}, retained {kept.get(f'{PREFIX}/door2/{slug}')}")
    check(b"online" in sub.payloads(f"{PREFIX}/door2/available"), f"door2/available said "
          f"{sub.payloads(PREFIX + '/door2/available')}")
    check(kept.get(f"{PREFIX}/door2/snapshot", b"")[:3] == b"\xff\xd8\xff", "door2 has no retained JPEG snapshot")
    # The page's Cameras tab: both recordings ended, door2's last event is one of its own.
    cameras = {c["camera"]: c for c in get_json(base + "/api/cameras")}
    check(sorted(cameras) == ["door1", "door2"] and all(c["state"] == "stopped" for c in cameras.values()),
          f"GET /api/cameras: {[(c['camera'], c['state'], c['detail']) for c in cameras.values()]}")
    last = cameras["door2"]["last_event"] or {}
    check(last.get("stream") == "door2" and last.get("uid") in {e["uid"] for e in published},
          f"door2's last event on the page: {last}")
    print(f"(3) door2: {len(alice_ends)} tracks ended known as Alice; MQTT door2/person said Alice "
          f"{said.count(b'Alice')} of {len(said)} times; her occupancy on door2 {b' '.join(occupancy).decode()}")


def remove_door1(base, port, config, settings, recording):
    """(3b): SIGHUP with door1 removed: Home Assistant's entities of door1 are deleted, the page forgets it."""
    write_config(config, *settings, {"door2": recording})
    LOG.process.send_signal(signal.SIGHUP)
    wait_for(lambda: LOG.text().count("reload: ") >= 2, 20, "the second reload")
    kept = settle(lambda: retained(port), lambda r: not [t for t in r if "door1" in t], 10)
    left = sorted(t for t in kept if "door1" in t)
    check(not left, f"door1's retained topics left: {left}")
    check(f"homeassistant/sensor/{NODE}/{NODE}_door2_last_person/config" in kept and f"{PREFIX}/door2/snapshot" in kept,
          f"door2's entities went too: {sorted(kept)}")
    cameras = [c["camera"] for c in get_json(base + "/api/cameras")]
    check(cameras == ["door2"], f"GET /api/cameras after door1 was removed: {cameras}")
    print("(3b) door1 removed by SIGHUP: its Home Assistant entities deleted, the page shows door2 alone")


def stop(port):
    """(4): SIGTERM: exit 0, offline retained."""
    LOG.process.send_signal(signal.SIGTERM)
    code = LOG.process.wait(timeout=30)
    check(code == 0, f"taconite-run exited {code} after SIGTERM")
    kept = retained(port)
    available = kept.get(f"{PREFIX}/available")
    check(available == b"offline", f"{PREFIX}/available retained {available}")
    print("(4) SIGTERM: exit 0, offline retained")


class Log:
    def __init__(self, args):
        self.path = os.path.join(WORK, "taconite-run.log")
        self.file = open(self.path, "w", encoding="utf-8")
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=self.file,
                                        env=dict(os.environ, OMP_WAIT_POLICY="passive"))

    def text(self):
        self.file.flush()
        with open(self.path, encoding="utf-8") as f:
            return f.read()


def main():
    global RUN, GALLERY_CLI, MKBUNDLE, YUNET, SOURCE, REALFACES, WORK, LOG
    if len(sys.argv) != 8:
        sys.exit(__doc__)
    RUN, GALLERY_CLI, MKBUNDLE, YUNET, SOURCE, REALFACES, WORK = sys.argv[1:8]
    if not MOSQUITTO or not shutil.which("mosquitto_sub"):
        print("SKIP: mosquitto and mosquitto-clients are not installed (Debian: mosquitto mosquitto-clients)")
        return SKIP
    if not os.path.isfile(YUNET):
        print(f"SKIP: the YuNet model {YUNET} is absent")
        return SKIP
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    started = time.monotonic()
    recording, model, what = recording_and_model()
    gallery = os.path.join(WORK, "gallery.db")
    run(GALLERY_CLI, "create", gallery, "--model", model)
    broker = Broker().start()
    sub = Subscriber(broker.port)
    http_port = free_port()
    base = f"http://127.0.0.1:{http_port}"
    config = os.path.join(WORK, "taconite.yaml")
    settings = [model, gallery, broker.port, http_port]
    write_config(config, *settings, {"door1": recording})
    LOG = Log([RUN, config])
    try:
        print(f"{what}: {recording}")
        wait_for(lambda: "the web page is at" in LOG.text() or LOG.process.poll() is not None, 60, "the web page")
        check(LOG.process.poll() is None, f"taconite-run exited {LOG.process.returncode}")
        unknowns = first_run(base, sub, broker.port)
        slug = name_alice(base, unknowns, broker.port)
        second_run(base, sub, broker.port, config, settings + [{"door1": recording, "door2": recording}], slug)
        remove_door1(base, broker.port, config, settings, recording)
        stop(broker.port)
    except (StoryFailed, OSError, ValueError, KeyError) as e:
        print(f"FAILED: {type(e).__name__}: {e}")
        print("--- taconite-run's log (last 60 lines):\n" + "\n".join(LOG.text().splitlines()[-60:]))
        print("--- MQTT topics seen: " + ", ".join(sorted(sub.topics())))
        return 1
    finally:
        if LOG.process.poll() is None:
            LOG.process.kill()
            LOG.process.wait()
        sub.close()
        broker.close()
    print(f"the story held in {time.monotonic() - started:.1f} s")
    shutil.rmtree(WORK, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
