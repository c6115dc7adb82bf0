"""taconite-import --from adaface-ckpt|onnx INPUT --out DIR: extract the trained graph, compute
the references, and hand the network to taconite-mkbundle, which folds, packs, writes and
replays it (ref.npu_embedding = the cpu-reference replay)."""
import argparse
import subprocess
import sys
import tempfile

from . import UnsupportedModel, one_line
from .face import astronaut, to_chw
from .ir_graph import write_handoff

NPU_NOTE = "emulated: ref.npu_embedding is the cpu-reference replay, not recorded on an NPU"


def parse(argv):
    p = argparse.ArgumentParser(prog="taconite-import", description=(
        "Turn a trained AdaFace checkpoint or an IR-family ONNX face recogniser into a taconite bundle "
        "for the CPU backends."))
    p.add_argument("--from", dest="kind", required=True, choices=["adaface-ckpt", "onnx"],
                   help="adaface-ckpt: an AdaFace Lightning checkpoint (net.py IR-18/34/50/101); "
                        "onnx: an InsightFace-style iresnet export")
    p.add_argument("input", metavar="INPUT", help="the checkpoint or .onnx file")
    p.add_argument("--out", required=True, metavar="DIR", help="the bundle directory to write")
    p.add_argument("--channel-order", choices=["rgb", "bgr"],
                   help="the plane order the model was trained on (default: bgr for AdaFace checkpoints, "
                        "rgb for ONNX); recorded in the manifest as param input_channel_order")
    p.add_argument("--name", help="the bundle's param model (default: IR-50, iresnet100, ...)")
    p.add_argument("--force", action="store_true", help="replace the bundle files in a non-empty DIR")
    return p.parse_args(argv)


def run(args, mkbundle):
    if args.kind == "adaface-ckpt":
        from .adaface_ckpt import load
        graph, forward = load(args.input)
    else:
        from .onnx_graph import load
        graph, forward = load(args.input)
    if args.channel_order:
        graph.channel_order = args.channel_order.upper()
    if args.name:
        graph.name = args.name
    face = to_chw(astronaut(), graph.channel_order)
    embedding = forward(face)
    params = {"writer": "taconite-import", "source": graph.source, "input_channel_order": graph.channel_order,
              "npu_kernels": "none", "npu_embedding": NPU_NOTE}
    with tempfile.TemporaryDirectory(prefix="taconite-import-") as handoff:
        write_handoff(graph, face, embedding, handoff, params)
        command = [mkbundle, "--network", handoff, "--out", args.out] + (["--force"] if args.force else [])
        try:
            done = subprocess.run(command, capture_output=True, text=True)
        except OSError as e:
            raise UnsupportedModel(f"cannot run the bundle writer {mkbundle}: {e.strerror}") from None
    sys.stderr.write(done.stderr.replace("taconite-mkbundle: ", "taconite-import: "))
    if done.returncode != 0:
        return 1
    sys.stdout.write(f"{graph.source} ({graph.channel_order}, {len(graph.units)} units) -> {done.stdout}")
    for note in graph.notes:
        print(f"taconite-import: {note}", file=sys.stderr)
    return 0


def main(argv, mkbundle):
    args = parse(argv)
    try:
        return run(args, mkbundle)
    except UnsupportedModel as e:
        print(f"taconite-import: error: {e}", file=sys.stderr)
    except Exception as e:  # a model this code did not foresee still ends in one line, never a traceback
        print(f"taconite-import: error: {args.input}: cannot import ({one_line(e)})", file=sys.stderr)
    return 1
