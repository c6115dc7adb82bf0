#!/usr/bin/python3
"""The Python reader of docs/gstreamer.md ("Python: the GstTaconite typelib"), taken from the doc
and run from the build tree with the environment docs/install.md gives for it (GST_PLUGIN_PATH,
GI_TYPELIB_PATH, LD_LIBRARY_PATH into BUILD_DIR): it must print one line per frame for its 3 frames,
each face with 512 floats, and read the GstTaconite typelib of the build tree; the face contract's
setters and getters (face_contract_check.py) must hold through that typelib too.

Usage: build_tree_python_test.py DOC BUILD_DIR BUNDLE
"""
import os
import subprocess
import sys

MARKER = "### Python: the GstTaconite typelib"
DOC_BUNDLE = "bundle=/tmp/ir-tiny"  # the doc's placeholder, replaced by the test bundle


def doc_program(doc):
    text = open(doc, encoding="utf-8").read()
    at = text.find(MARKER)
    if at < 0:
        sys.exit(f"FAIL: {doc}: {MARKER!r} not found")
    start = text.index("```python\n", at) + len("```python\n")
    program = text[start:text.index("```", start)]
    if DOC_BUNDLE not in program:
        sys.exit(f"FAIL: {doc}: the Python reader no longer names {DOC_BUNDLE}")
    return program


def main(doc, build, bundle):
    build = os.path.abspath(build)
    program = doc_program(doc).replace(DOC_BUNDLE, f"bundle={bundle}")
    program += ('gi.require_version("GIRepository", "2.0")\nfrom gi.repository import GIRepository\n'
                'print("typelib", GIRepository.Repository.get_default().get_typelib_path("GstTaconite"))\n'
                'import sys\n'
                f'sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})\n'
                'from face_contract_check import check_face_contract\n'
                'gi.require_version("GstVideo", "1.0")\nfrom gi.repository import GstVideo\n'
                'print("contract", "; ".join(check_face_contract(Gst, GstVideo, GstTaconite)) or "ok")\n')
    env = dict(os.environ, GST_PLUGIN_PATH=f"{build}/gst/plugin", GI_TYPELIB_PATH=f"{build}/gst/meta",
               LD_LIBRARY_PATH=f"{build}/gst/meta",
               GST_REGISTRY_1_0=f"{build}/tests/gst/registry-build-tree-python.bin")
    run = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=300)
    print(run.stdout, run.stderr, sep="")
    if run.returncode != 0:
        sys.exit(f"FAIL: the documented reader exited {run.returncode}")
    lines = run.stdout.splitlines()
    typelib = [line.split(" ", 1)[1] for line in lines if line.startswith("typelib ")]
    if not typelib or not typelib[0].startswith(f"{build}/gst/meta/"):
        sys.exit(f"FAIL: GstTaconite was read from {typelib}, not from {build}/gst/meta")
    contract = [line.split(" ", 1)[1] for line in lines if line.startswith("contract ")]
    if contract != ["ok"]:
        sys.exit(f"FAIL: the face contract through the build tree's typelib: {contract}")
    faces = [line for line in lines if not line.startswith(("typelib ", "contract "))]
    if len(faces) != 3 or not all(line.endswith(" 512") for line in faces):
        sys.exit(f"FAIL: expected 3 lines of 512-float faces, got {faces}")
    print(f"ok: the documented Python reader ran from {build}")


if __name__ == "__main__":
    main(*sys.argv[1:4])
