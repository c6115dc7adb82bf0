#!/usr/bin/python3
"""HomeAssistantMqtt against a real mosquitto on loopback, seen by a subscriber on '#'.

Usage: TACONITE_VERSION=X.Y.Z ha_mqtt_test.py HA_MQTT_HOST [NAME_PART]   (meson sets the project version)

Availability (retained online; offline by the last will when the process is killed -9, and by
stop()), discovery documents against Home Assistant's documented members, retained states for a
late subscriber, track events carrying uid and epoch_s, a snapshot JPEG arriving byte for byte, a
broker down at start then up, a broker away while the outgoing queue fills (bounded in bytes,
drops counted, the newest kept), credentials files, TLS, and hostile person and camera names.
Exit 77 (skipped) without mosquitto. With HA_MQTT_VALGRIND=1 every host runs under valgrind
memcheck and any error or definite leak it reports fails the run.
"""
import json
import os
import re
import shutil
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ha_discovery_schema import problems  # noqa: E402
from mqtt_fixtures import MOSQUITTO, Broker, Host, Subscriber, free_port, wait_until  # noqa: E402

HOST = sys.argv[1] if len(sys.argv) > 1 else ""
VERSION = os.environ.get("TACONITE_VERSION", "")  # meson's project version: the devices' sw_version
APP_DOC = os.environ.get("APP_DOC", "")  # docs/app.md: its discovery example is checked
SCHEMA = os.environ.get("TRACKS_SCHEMA", "")  # docs/tracks-message.schema.json
JPEG = "/usr/share/doc/opencv-doc/examples/data/messi5.jpg"
DISCOVERY = re.compile(r"^homeassistant/(sensor|binary_sensor|image)/taconite/([a-z0-9_]+)/config$")


def event(kind, uid, track_id, state=None, label=None, camera="door", epoch=1796128024.879027):
    """A taconite-tracks/1 event as taconitepublish writes it (docs/tracks-message.md)."""
    doc = {"schema": "taconite-tracks/1", "event": kind, "stream": camera, "track_id": track_id, "uid": uid,
           "utc": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(int(epoch))) + f".{round(epoch % 1 * 1e6):06d}Z",
           "epoch_s": epoch, "pts_ns": 0, "label_state": state, "label": label,
           "label_id": (1 if state == "known" else -1 if state == "unknown" else None),
           "confidence": 0.8 if label else None, "best_face": None}
    if kind == "end":
        doc.update(reason="lost", first_utc=doc["utc"], last_utc=doc["utc"], first_epoch_s=epoch, last_epoch_s=epoch,
                   first_pts_ns=0, last_pts_ns=0, dwell_s=0.0, frames=1, identified=state is not None)
    return doc


def wait_len(fetch, n, timeout_s, what, at_least=False):
    """fetch() once it holds n items (at least n with at_least)."""
    def ready():
        got = fetch()
        return got if (len(got) >= n if at_least else len(got) == n) else None
    return wait_until(ready, timeout_s, what)


def start(host, broker_port, **options):
    options = {"host": "127.0.0.1", "port": broker_port, "cameras": ["door"], **options}
    return host.send(cmd="start", options=options)


def discovery(sub):
    """Config topic -> parsed document, the latest of each (None: deleted)."""
    out = {}
    for _, topic, payload in sub.all():
        if DISCOVERY.match(topic):
            out[topic] = json.loads(payload) if payload else None
    return out


def test_availability_discovery_states_events_snapshot():
    broker = Broker().start()
    sub = Subscriber(broker)
    host = Host(HOST)
    try:
        assert start(host, broker.port, cameras=["door", "yard"], people=["alice", "Jean-Luc Picard"],
                     person_timeout_s=2) == "ok"
        sub.wait_for("taconite/available", b"online")
        host.send(cmd="camera", camera="door", state="streaming")
        sub.wait_for("taconite/door/available", b"online")

        configs = wait_len(lambda: discovery(sub), 8, 10, "8 discovery documents")
        for topic, config in configs.items():
            component = DISCOVERY.match(topic).group(1)
            assert not problems(component, config), f"{topic}: {problems(component, config)}"
            assert config["availability_mode"] == "all"
            assert [a["topic"] for a in config["availability"]] == \
                ["taconite/available", f"taconite/{'door' if 'door' in topic else 'yard'}/available"], topic
            assert DISCOVERY.match(topic).group(2) == config["unique_id"] == config["object_id"]
            assert config["device"]["sw_version"] == VERSION and config["device"]["identifiers"]
        people = {c["name"]: c for t, c in configs.items() if "/binary_sensor/" in t}
        assert set(people) == {"alice", "Jean-Luc Picard"}, people.keys()
        assert all(c["off_delay"] == 2 and c["device_class"] == "occupancy" for c in people.values())
        picard_state = people["Jean-Luc Picard"]["state_topic"]
        assert re.fullmatch(r"taconite/(door|yard)/jean_luc_picard_[0-9a-f]{8}", picard_state), picard_state
        image = next(c for t, c in configs.items() if t.startswith("homeassistant/image/") and "door" in t)
        assert image["image_topic"] == "taconite/door/snapshot" and image["content_type"] == "image/jpeg"

        a = "4b0c58d2-5f3e-4f0e-9a6b-7f1d2c3e4a5b"
        b = "9e1c58d2-5f3e-4f0e-9a6b-7f1d2c3e4a5c"
        sent = [event("new", a, 1, "pending"), event("update", a, 1, "known", "alice", epoch=1796128025.5),
                event("new", b, 2, "unknown", "unknown", epoch=1796128026.25)]
        for doc in sent:
            assert host.send(cmd="event", document=doc) == "ok"
        sub.wait_for("taconite/door/alice", b"ON")
        # Home Assistant's off_delay (2 s) would turn her off: ON goes again while she is there.
        wait_len(lambda: sub.on("taconite/door/alice"), 3, 5, "ON repeated for off_delay", True)
        assert all(p in (b"ON", b"OFF") for _, p in sub.on("taconite/door/alice"))
        assert sub.last("taconite/door/person") == b"unknown"
        assert b"alice" in [p for _, p in sub.on("taconite/door/person")]
        host.send(cmd="event", document=event("end", a, 1, "known", "alice", epoch=1796128027.0))
        sub.wait_for("taconite/door/alice", b"OFF")
        events = [json.loads(p) for _, p in wait_len(lambda: sub.on("taconite/door/events"), 4, 10, "4 events")]
        if SCHEMA:  # the events arrive as taconitepublish's documents: valid taconite-tracks/1
            import jsonschema
            validator = jsonschema.Draft202012Validator(json.load(open(SCHEMA)))
            for e in events:
                assert not list(validator.iter_errors(e)), list(validator.iter_errors(e))[0].message
        assert [(e["uid"], e["epoch_s"], e["event"]) for e in events] == \
            [(d["uid"], d["epoch_s"], d["event"]) for d in sent] + [(a, 1796128027.0, "end")]

        # A real JPEG (opencv-doc's photo); without it, JPEG markers around every byte value (NUL, newline).
        jpeg = open(JPEG, "rb").read() if os.path.exists(JPEG) else b"\xff\xd8" + bytes(range(256)) * 64 + b"\xff\xd9"
        snapshot = os.path.join(broker.dir, "snapshot.jpg")
        with open(snapshot, "wb") as f:
            f.write(jpeg)
        host.send(cmd="snapshot", camera="door", uid=a, path=snapshot)
        sub.wait_for("taconite/door/snapshot", jpeg)
        host.send(cmd="event", document=event("new", b, 2, camera="nowhere"))  # not configured: counted

        late = Subscriber(broker)  # what a Home Assistant starting now would get: the retained messages
        try:
            wait_until(lambda: late.on("taconite/door/alice"), 10, "retained states")
            retained = {t: p for r, t, p in late.all() if r}
            assert retained["taconite/available"] == b"online"
            assert retained["taconite/door/available"] == b"online"
            assert retained["taconite/yard/available"] == b"offline", "a camera never streaming is offline"
            assert retained["taconite/door/person"] == b"unknown"
            assert retained["taconite/door/alice"] == b"OFF"
            assert retained["taconite/door/snapshot"] == jpeg, "the snapshot is not the JPEG sent"
            assert "taconite/door/events" not in retained, "events must not be retained"
            assert sum(DISCOVERY.match(t) is not None for t in retained) == 8
        finally:
            late.close()

        host.send(cmd="people", people=["alice"])  # Picard leaves the gallery: his entities go
        for camera in ("door", "yard"):
            topic = next(t for t, c in configs.items() if c["name"] == "Jean-Luc Picard" and camera in t)
            sub.wait_for(topic, b"")
        host.send(cmd="camera", camera="door", state="lost", detail="no frames for 10 s")
        sub.wait_for("taconite/door/available", b"offline")
        counters = host.send(cmd="counters")
        assert counters["events"] == 4 and counters["unknown_camera"] == 1, counters
        assert host.send(cmd="stop") == "ok"
        sub.wait_for("taconite/available", b"offline")
        assert host.process.poll() is None, "stop() publishes offline itself: no will needed"
    finally:
        host.close()
        sub.close()
        broker.close()


def test_broker_restart_gets_everything_again():
    broker = Broker().start()
    host = Host(HOST)
    try:
        assert start(host, broker.port, people=["alice"]) == "ok"
        host.send(cmd="camera", camera="door", state="streaming")
        host.send(cmd="event", document=event("new", "3b0c58d2-5f3e-4f0e-9a6b-7f1d2c3e4a5b", 1, "known", "alice"))
        first = Subscriber(broker)
        first.wait_for("taconite/door/alice", b"ON")
        first.close()
        broker.stop()  # no persistence: every retained message is gone with it
        time.sleep(0.5)
        broker.start()
        sub = Subscriber(broker)
        try:
            sub.wait_for("taconite/available", b"online", timeout_s=25)
            sub.wait_for("taconite/door/available", b"online")
            sub.wait_for("taconite/door/person", b"alice")
            sub.wait_for("taconite/door/alice", b"ON")
            wait_len(lambda: discovery(sub), 3, 10, "discovery published again")
        finally:
            sub.close()
        assert "reconnected to the MQTT broker" in host.log(), host.log()
    finally:
        host.close()
        broker.close()


def test_cameras_reloaded():
    broker = Broker().start()
    sub = Subscriber(broker)
    host = Host(HOST)
    try:
        assert start(host, broker.port, cameras=["door", "yard"], people=["alice"]) == "ok"
        wait_len(lambda: discovery(sub), 6, 10, "6 discovery documents")
        host.send(cmd="camera", camera="yard", state="streaming")
        host.send(cmd="event", document=event("new", "5b0c58d2-5f3e-4f0e-9a6b-7f1d2c3e4a5b", 1, "known", "alice",
                                              camera="yard"))
        sub.wait_for("taconite/yard/alice", b"ON")
        refused = host.send(cmd="cameras", cameras=["door", "bad/name"])
        assert "error" in refused and "bad/name" in refused["error"], refused
        assert host.send(cmd="cameras", cameras=["door", "garage"]) == "ok"
        for leaf in ("available", "person", "alice"):
            sub.wait_for(f"taconite/yard/{leaf}", b"")  # its retained states cleared
        configs = wait_len(lambda: {t: c for t, c in discovery(sub).items() if c}, 6, 10, "door and garage only")
        assert not [t for t in configs if "yard" in t] and len([t for t in configs if "garage" in t]) == 3
        assert [t for t, c in discovery(sub).items() if c is None and "yard" in t], "yard's configs deleted"
        sub.wait_for("taconite/garage/available", b"offline")
        sub.wait_for("taconite/garage/alice", b"OFF")
        host.send(cmd="event", document=event("end", "5b0c58d2-5f3e-4f0e-9a6b-7f1d2c3e4a5b", 1, "known", "alice",
                                              camera="yard"))
        assert host.send(cmd="counters")["unknown_camera"] == 1, "yard is no camera of ours any more"
    finally:
        host.close()
        sub.close()
        broker.close()


def test_last_will_when_killed():
    broker = Broker().start()
    sub = Subscriber(broker)
    host = Host(HOST)
    try:
        assert start(host, broker.port) == "ok"
        sub.wait_for("taconite/available", b"online")
        host.kill()
        sub.wait_for("taconite/available", b"offline", timeout_s=10)
        late = Subscriber(broker)
        try:
            wait_until(lambda: late.on("taconite/available"), 10, "the retained will")
            assert late.on("taconite/available")[-1] == (True, b"offline")
        finally:
            late.close()
    finally:
        host.close()
        sub.close()
        broker.close()


def test_broker_down_at_start_then_up():
    port = free_port()
    host = Host(HOST)
    broker = None
    try:
        began = time.monotonic()
        assert start(host, port, people=["alice"]) == "ok"
        took = time.monotonic() - began
        limit = 5.0 if Host.valgrind_dir else 1.0  # valgrind's own start-up is slow
        assert took < limit, f"start waited {took:.2f} s for an absent broker"
        host.send(cmd="event", document=event("new", "0b0c58d2-5f3e-4f0e-9a6b-7f1d2c3e4a5b", 1, "known", "alice"))
        time.sleep(2)  # a few failed attempts
        assert host.send(cmd="counters")["connected"] is False
        broker = Broker(port=port).start()
        sub = Subscriber(broker)
        try:
            sub.wait_for("taconite/available", b"online", timeout_s=25)
            wait_until(lambda: len(discovery(sub)) == 3, 10, "discovery after the late connection")
            sub.wait_for("taconite/door/alice", b"ON")
            assert host.send(cmd="counters")["connected"] is True
        finally:
            sub.close()
        assert "cannot connect to the MQTT broker 127.0.0.1:" in host.log(), host.log()
    finally:
        host.close()
        if broker:
            broker.close()


def test_queue_bounded_in_bytes_while_broker_refuses():
    # The broker refuses our client (not authorised) until its password file lets it in, so the
    # subscriber is surely there before the queued events leave.
    broker = Broker(user="sub", password="sub").start()
    sub = Subscriber(broker)
    host = Host(HOST)
    credentials = os.path.join(broker.dir, "credentials")
    try:
        with open(credentials, "w") as f:
            f.write("ha\nletmein\n")
        os.chmod(credentials, 0o600)
        answer = start(host, broker.port, credentials_file=credentials, max_queue_bytes=64 * 1024,
                       max_snapshot_bytes=32 * 1024)
        assert answer == "ok", answer
        uids = [f"{i:08x}-5f3e-4f0e-9a6b-7f1d2c3e4a5b" for i in range(100)]
        for i, uid in enumerate(uids):
            doc = event("new", uid, i + 1, "pending")
            doc["best_face"] = {"quality": 0.5, "jpeg_base64": "A" * 2000}  # ~2.3 KB each, 230 KB in all
            host.send(cmd="event", document=doc)
        counters = host.send(cmd="counters")
        assert counters["events"] == 100
        assert 60 <= counters["dropped"] < 100, f"64 KiB holds about 28 of them: {counters}"
        wait_until(lambda: "not authorised" in host.log(), 10, "the refusal logged")
        assert not sub.on("taconite/door/events")
        broker.write_passwords({"sub": "sub", "ha": "letmein"})
        broker.reload()
        # After the connection our discovery and states join the full queue, evicting a few more
        # of the oldest events: what arrives is the newest events, and every other one is counted.
        sub.wait_for("taconite/available", b"online", timeout_s=25)
        host.send(cmd="stop")
        sub.wait_for("taconite/available", b"offline")  # the last message: everything before it is in
        final = host.send(cmd="counters")
        got = [json.loads(p)["uid"] for _, p in sub.on("taconite/door/events")]
        assert 20 <= len(got) == 100 - final["dropped"], f"{len(got)} events arrived, {final}"
        assert got == uids[-len(got):], "the oldest are dropped, the newest kept"
    finally:
        host.close()
        sub.close()
        broker.close()


def test_credentials_file():
    broker = Broker(user="ha", password="s3cret pw").start()
    sub = Subscriber(broker)
    host = Host(HOST)
    path = os.path.join(broker.dir, "credentials")
    try:
        with open(path, "w") as f:
            f.write("ha\ns3cret pw\n")
        os.chmod(path, 0o644)
        refused = start(host, broker.port, credentials_file=path)
        assert "error" in refused and path in refused["error"] and "s3cret" not in refused["error"], refused
        host.close()
        os.chmod(path, 0o600)
        host = Host(HOST)
        assert start(host, broker.port, credentials_file=path) == "ok"
        sub.wait_for("taconite/available", b"online")
    finally:
        host.close()
        sub.close()
        broker.close()


def test_tls():
    broker = Broker(tls=True).start()
    sub = Subscriber(broker, ca=broker.ca)
    host = Host(HOST)
    try:
        assert start(host, broker.port, tls_ca=broker.ca) == "ok"
        sub.wait_for("taconite/available", b"online")
        wait_until(lambda: len(discovery(sub)) == 2, 10, "discovery over TLS")
    finally:
        host.close()
        sub.close()
        broker.close()


def test_stop_turns_people_off_and_open_tracks_are_bounded():
    broker = Broker().start()
    sub = Subscriber(broker)
    host = Host(HOST)
    try:
        assert start(host, broker.port, people=["alice", "bob"], max_open_tracks=1) == "ok"
        host.send(cmd="camera", camera="door", state="streaming")
        host.send(cmd="event", document=event("new", "1b0c58d2-5f3e-4f0e-9a6b-7f1d2c3e4a5b", 1, "known", "alice"))
        host.send(cmd="event", document=event("new", "2b0c58d2-5f3e-4f0e-9a6b-7f1d2c3e4a5b", 2, "known", "bob"))
        sub.wait_for("taconite/door/alice", b"ON")
        sub.wait_for("taconite/door/person", b"bob")  # the last person is told beyond the bound
        counters = host.send(cmd="counters")
        assert counters["tracks_refused"] == 1 and counters["events"] == 2, counters
        assert "more than 1 open tracks" in host.log(), host.log()
        assert host.send(cmd="stop") == "ok"
        sub.wait_for("taconite/door/alice", b"OFF")
        sub.wait_for("taconite/available", b"offline")
        assert b"ON" not in [p for _, p in sub.on("taconite/door/bob")], "bob's track was not followed"
    finally:
        host.close()
        sub.close()
        broker.close()


def test_tls_client_certificate():
    broker = Broker(tls=True, client_certificates=True).start()
    sub = Subscriber(broker, ca=broker.ca)
    host = Host(HOST)
    try:
        assert start(host, broker.port, tls_ca=broker.ca) == "ok"  # no certificate: the handshake fails
        wait_until(lambda: "cannot connect to the MQTT broker" in host.log(), 10, "the TLS failure logged")
        assert not sub.on("taconite/available")
        host.close()
        host = Host(HOST)
        assert start(host, broker.port, tls_ca=broker.ca, tls_cert=f"{broker.dir}/client.pem",
                     tls_key=f"{broker.dir}/client.key") == "ok"
        sub.wait_for("taconite/available", b"online")
        refused = Host(HOST)
        try:
            answer = start(refused, broker.port, tls_ca=broker.ca, tls_cert=f"{broker.dir}/client.pem")
            assert "error" in answer and "tls-key" in answer["error"], answer  # a certificate without its key
        finally:
            refused.close()
    finally:
        host.close()
        sub.close()
        broker.close()


def test_events_never_wait_for_the_network():
    # The runner's main loop calls on_track_event: with the broker away (queue full, dropping) and
    # with it there, a call only queues. A generous bound: 2 ms per event on a loaded 2-core box.
    port = free_port()
    host = Host(HOST)
    broker = None
    try:
        assert start(host, port, people=["alice"], max_queue_bytes=64 * 1024, max_snapshot_bytes=1024) == "ok"
        doc = event("new", "x", 1, "known", "alice")
        away = host.send(cmd="time-events", count=5000, document=doc)["us_per_event"]
        broker = Broker(port=port).start()
        sub = Subscriber(broker)
        try:
            sub.wait_for("taconite/available", b"online", timeout_s=25)
            there = host.send(cmd="time-events", count=5000, document=doc)["us_per_event"]
        finally:
            sub.close()
        print(f"     on_track_event: {away:.1f} us per event with the broker away, {there:.1f} us with it there")
        limit = 20000 if Host.valgrind_dir else 2000
        assert away < limit and there < limit, (away, there)
    finally:
        host.close()
        if broker:
            broker.close()


def test_oversized_snapshot_refused_and_counted():
    broker = Broker().start()
    sub = Subscriber(broker)
    host = Host(HOST)
    try:
        assert start(host, broker.port, max_snapshot_bytes=4096) == "ok"
        sub.wait_for("taconite/available", b"online")
        big, small = os.path.join(broker.dir, "big.jpg"), os.path.join(broker.dir, "small.jpg")
        with open(big, "wb") as f:
            f.write(b"\xff\xd8" + b"\0" * 4096 + b"\xff\xd9")
        with open(small, "wb") as f:
            f.write(b"\xff\xd8" + b"\0" * 100 + b"\xff\xd9")
        host.send(cmd="snapshot", camera="door", uid="u1", path=big)
        host.send(cmd="snapshot", camera="door", uid="u2", path=small)
        sub.wait_for("taconite/door/snapshot", open(small, "rb").read())
        assert len(sub.on("taconite/door/snapshot")) == 1, "the oversized one went out"
        assert host.send(cmd="counters")["snapshots_refused"] == 1
        assert "snapshot of track u1 on 'door' has 4100 bytes" in host.log(), host.log()
    finally:
        host.close()
        sub.close()
        broker.close()


def test_docs_discovery_example_is_what_is_published():
    if not APP_DOC:
        print("     skipped: APP_DOC (docs/app.md) not given")
        return
    text = open(APP_DOC, encoding="utf-8").read()
    block = text[text.index("```", text.index("An example:")) + 3:]
    block = block[block.index("\n") + 1:block.index("```")].splitlines()
    topic, documented = block[0], json.loads("".join(block[1:]))
    broker = Broker().start()
    sub = Subscriber(broker)
    host = Host(HOST)
    try:
        assert start(host, broker.port, people=["Jean-Luc Picard"]) == "ok"
        sub.wait_for(topic)
        published = json.loads(sub.last(topic))
        documented["device"]["sw_version"] = published["device"]["sw_version"]  # the version moves on
        assert published == documented, f"docs/app.md's example is not what is published: {published}"
    finally:
        host.close()
        sub.close()
        broker.close()


def test_hostile_names():
    broker = Broker().start()
    sub = Subscriber(broker)
    host = Host(HOST)
    try:
        refused = start(host, broker.port, cameras=["door/+#"])
        assert "error" in refused and "door/+#" in refused["error"], refused
        host.close()
        host = Host(HOST)
        hostile = ["../#+", "", "x" * 300, "events", "Alice", "alice", "Zoë 😀", 'q"uote\nnew line', "   ",
                   "snapshot", "person", "available", "Ａｌｉｃｅ"]
        overflow = [f"p{i}" for i in range(40)]
        # max_entities 30 over one camera: 2 for the camera, 28 people.
        assert start(host, broker.port, people=hostile + overflow, max_entities=30) == "ok"
        configs = wait_len(lambda: discovery(sub), 30, 10, "30 discovery documents")
        time.sleep(0.5)
        assert len(discovery(sub)) == 30, "no more than max_entities"
        names = {c["name"] for t, c in configs.items() if "/binary_sensor/" in t}
        accepted = [n for n in hostile if n and len(n) <= 256]
        assert set(accepted) <= names, set(accepted) - names  # the real names, unchanged
        assert len(names) == 28
        counters = host.send(cmd="counters")
        assert counters["people_refused"] == 2 + len(hostile + overflow) - 2 - 28, counters
        for topic, config in configs.items():
            assert not problems(DISCOVERY.match(topic).group(1), config)
        person_topics = [c["state_topic"] for t, c in configs.items() if "/binary_sensor/" in t]
        for topic in person_topics:
            assert re.fullmatch(r"taconite/door/[a-z0-9_]{1,41}", topic), topic
            assert topic.split("/")[-1] not in ("available", "events", "person", "snapshot"), topic
        assert len(set(person_topics)) == len(person_topics), "two people share a topic"
        assert "taconite/door/alice" in person_topics
        assert "ha_mqtt_host" not in host.log() and "people get no sensors" in host.log(), host.log()
    finally:
        host.close()
        sub.close()
        broker.close()


def main():
    if not HOST:
        sys.exit("usage: ha_mqtt_test.py HA_MQTT_HOST")
    if not MOSQUITTO:
        print("SKIP: mosquitto is not installed (apt-get install mosquitto mosquitto-clients)")
        return 77
    if os.environ.get("HA_MQTT_VALGRIND"):
        if not shutil.which("valgrind"):
            print("SKIP: valgrind is not installed")
            return 77
        Host.valgrind_dir = tempfile.mkdtemp(prefix="taconite-app-memcheck-")
    only = sys.argv[2] if len(sys.argv) > 2 else ""  # a part of a test's name: run only those
    tests = [v for k, v in globals().items() if k.startswith("test_") and only in k]
    failed = 0
    for test in tests:
        began = time.monotonic()
        try:
            test()
            print(f"ok   {test.__name__} ({time.monotonic() - began:.1f} s)")
        except Exception:  # noqa: BLE001 - report every test, then fail
            failed += 1
            print(f"FAIL {test.__name__}")
            traceback.print_exc()
    if Host.valgrind_dir:
        for name in sorted(os.listdir(Host.valgrind_dir)):
            report = open(os.path.join(Host.valgrind_dir, name)).read()
            if report.strip():
                failed += 1
                print(f"FAIL memcheck {name}:\n{report[:20000]}")
        shutil.rmtree(Host.valgrind_dir)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
