#!/usr/bin/python3
"""Checks taconitepublish's JSON lines from pipelines/publish-video-faces.sh.

Usage: check_faces_documents.py FILE.jsonl STREAMS SCHEMA.json [--detector INTERVAL]
Every line must be standard JSON (NaN and Infinity refused) valid against the schema (docs/faces-message.schema.json, jsonschema), frame
numbers must count 0, 1, 2, ... per stream (publish-empty=true: one document per frame), and the
embedded faces, flattened into the Python writer's per-face lines (faces_to_jsonl.py), must pass
check_faces_jsonl.py's checks (faces in at least 5 frames, boxes inside and moving, 512 unit
floats, aligned, one track holding most of them). Every face embedded on its frame carries
taconiteadaface's quality: its score and its embedding's score, numbers in 0..1. With --detector
INTERVAL (taconitedetect interval=INTERVAL > 1 upstream of taconitetrack) every face carries the
detection's confidence, and faces on frames between detections are marked predicted.
"""
import json
import sys
import tempfile

import jsonschema

import check_faces_jsonl


def refuse_constant(name):
    raise ValueError(f"{name} is not JSON (a non-finite number must be null)")


def main(path, streams, schema_path, detect_interval=0):
    detector = detect_interval > 0
    with open(schema_path, encoding="utf-8") as f:
        validator = jsonschema.Draft202012Validator(json.load(f))
    faces, frames, predicted = [], {}, 0
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            where = f"{path}:{number}"
            doc = json.loads(line, parse_constant=refuse_constant)  # strict: no NaN / Infinity
            errors = sorted(validator.iter_errors(doc), key=str)
            assert not errors, f"{where}: {errors[0].message} at {list(errors[0].absolute_path)}"
            expected = frames.get(doc["stream"], 0)
            assert doc["frame"] == expected, f"{where}: frame {doc['frame']}, expected {expected}"
            frames[doc["stream"]] = expected + 1
            for face in doc["faces"]:
                if detector:
                    detection = face.get("detection")
                    assert detection and isinstance(detection["confidence"], (int, float)), \
                        f"{where}: a face without the detector's confidence: {detection!r}"
                    predicted += detection["predicted"]
                if face["status"] == "computed":
                    quality = face.get("quality") or {}
                    for member in ("score", "embedding_score"):
                        value = quality.get(member)
                        assert isinstance(value, (int, float)) and 0 <= value <= 1, \
                            f"{where}: a computed face's quality {member} is {value!r}"
                if face["status"] in ("computed", "cached"):
                    faces.append(dict(face, stream=doc["stream"], frame=doc["frame"],
                                      running_time_ns=doc["running_time_ns"]))
    assert not detector or predicted > 0, f"{path}: no face was marked predicted between detections"
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", encoding="utf-8") as flat:
        flat.writelines(json.dumps(face) + "\n" for face in faces)
        flat.flush()
        check_faces_jsonl.main(flat.name, streams, max(detect_interval, 1))


if __name__ == "__main__":
    try:
        interval = int(sys.argv[5]) if sys.argv[4:5] == ["--detector"] else 0
        main(sys.argv[1], int(sys.argv[2]), sys.argv[3], interval)
    except (AssertionError, ValueError) as error:
        print(f"FAIL: {error}", file=sys.stderr)
        sys.exit(1)
