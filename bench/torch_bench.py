#!/usr/bin/python3
"""PyTorch fp32 eager peer for the cpu backend benchmark, on the bundle's own weights.

Rebuilds the network from a bundle directory (manifest.txt + tensors.txt + tensors.bin) in
PyTorch: conv weights unpacked from the packed layout of spec section 5.3 (the same
[oc/8][icg/8][ky][kx][i8][o8] layout runtime/numerics/weight_packing.cpp unpacks), input-channel
groups merged, conv -> [bias] -> subsample(s) folded into a strided conv as the cpu backend does,
other subsamples as 1x1 max pooling, affine as a per-channel scale-shift, the head as a Linear.
Measures warm median latency / throughput and can export the same network to ONNX (for OpenCV DNN).

usage: torch_bench.py BUNDLE THREADS BATCH... [--onnx OUT.onnx --face OUT.f32 --ref OUT.f32]
Prints one JSON line.
"""
import argparse
import json
import resource
import statistics
import time

import numpy as np
import torch
import torch.nn.functional as F


def read_tensors(bundle):
    blob = np.memmap(f"{bundle}/tensors.bin", dtype=np.uint8, mode="r")
    tensors = {}
    for line in open(f"{bundle}/tensors.txt"):
        fields = line.split()
        if len(fields) != 5:
            continue
        name, dtype, _shape, offset, size = fields
        raw = np.asarray(blob[int(offset):int(offset) + int(size)])
        if dtype == "bf16":
            values = (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
        elif dtype == "f32":
            values = raw.view(np.float32)
        else:
            continue
        tensors[name] = values
    return tensors


def read_steps(bundle):
    steps = []
    for line in open(f"{bundle}/manifest.txt"):
        fields = line.split()
        if not fields or fields[0].startswith("#") or fields[0] in ("version", "param", "xclbin"):
            continue
        record = {"tag": fields[0]}
        for field in fields[1:]:
            if "=" in field:
                key, value = field.split("=", 1)
                record[key] = value
        steps.append(record)
    return steps


def unpack_conv(packed, oc, icg):
    """Spec 5.3: packed [oc/8][icg/8][ky][kx][i8][o8] -> OIHW."""
    k = 3 if packed.size == oc * icg * 9 else 1
    blocks = packed.reshape(oc // 8, icg // 8, k, k, 8, 8)  # og, ig, ky, kx, i8, o8
    return blocks.transpose(0, 5, 1, 4, 2, 3).reshape(oc, icg, k, k), k


class BundleNet(torch.nn.Module):
    """The bundle's steps as PyTorch ops on NCHW tensors (input: 3-channel faces)."""

    def __init__(self, bundle, real_channels=3):
        super().__init__()
        tensors = read_tensors(bundle)
        steps = read_steps(bundle)
        self.ops = []  # (kind, args) interpreted by forward()
        self.params = torch.nn.ParameterList()
        i = 0
        input_live = False  # does the input step's buffer still hold the face?
        while i < len(steps):
            s = steps[i]
            tag = s["tag"]
            if tag != "input" and s.get("out", s.get("buf")) == getattr(self, "input_buf", None):
                input_live = False  # redefined (or changed in place) by a later step
            if tag == "input":
                self.input_buf = s["buf"]
                input_live = True
                self.ops.append(("input", s["buf"]))
            elif tag == "conv":
                oc, ict = int(s["oc"]), int(s["ict"])
                records = [s]
                while records[-1]["last"] != "1":
                    i += 1
                    records.append(steps[i])
                weight = np.zeros((oc, ict, 3, 3), np.float32)
                for r in records:
                    w, k = unpack_conv(tensors[r["wt"]], oc, int(r["icg"]))
                    c0 = 8 * int(r["c0"])
                    weight = weight[:, :, :k, :k]
                    weight[:, c0:c0 + int(r["icg"])] = w
                if s["in"] == self.input_buf and input_live:
                    weight = weight[:, :real_channels]  # the stem's padding channels are zero
                out, bias, stride = s["out"], None, 1
                # Fold conv -> [bias on out] -> subsample(out) into a strided conv.
                j = i + 1
                if j < len(steps) and steps[j]["tag"] == "bias" and steps[j]["buf"] == out:
                    bias = tensors[steps[j]["bias"]]
                    j += 1
                if j < len(steps) and steps[j]["tag"] == "subsample" and steps[j]["in"] == out:
                    stride = int(steps[j]["stride"])
                    out = steps[j]["out"]
                    i = j
                elif bias is not None:
                    i = j - 1
                w = self._param(weight)
                b = self._param(bias) if bias is not None else None
                self.ops.append(("conv", (s["in"], out, w, b, stride, weight.shape[-1] // 2)))
            elif tag == "affine":
                self.ops.append(("affine", (s["in"], s["out"], self._param(tensors[s["scale"]], per_channel=True),
                                            self._param(tensors[s["shift"]], per_channel=True))))
            elif tag == "prelu_bias":
                self.ops.append(("prelu_bias", (s["buf"], self._param(tensors[s["alpha"]]),
                                                self._param(tensors[s["bias"]], per_channel=True))))
            elif tag == "bias":
                self.ops.append(("bias", (s["buf"], self._param(tensors[s["bias"]], per_channel=True))))
            elif tag == "subsample":
                self.ops.append(("subsample", (s["in"], s["out"], int(s["stride"]))))
            elif tag == "add":
                self.ops.append(("add", (s["a"], s["b"], s["out"])))
            elif tag == "head":
                k, n = int(s["k"]), int(s["n"])
                self.ops.append(("head", (s["in"], self._param(tensors[s["bT"]].reshape(k, n).T.copy()),
                                          self._param(tensors[s["b2"]]))))
            i += 1

    def _param(self, values, per_channel=False):
        t = torch.from_numpy(np.array(values, dtype=np.float32, copy=True))
        if per_channel:
            t = t.reshape(1, -1, 1, 1)
        p = torch.nn.Parameter(t, requires_grad=False)
        self.params.append(p)
        return p

    def forward(self, face):
        buf = {}
        for kind, a in self.ops:
            if kind == "input":
                buf[a] = face
            elif kind == "conv":
                src, out, w, b, stride, pad = a
                buf[out] = F.conv2d(buf[src], w, b, stride=stride, padding=pad)
            elif kind == "affine":
                buf[a[1]] = buf[a[0]] * a[2] + a[3]
            elif kind == "prelu_bias":
                buf[a[0]] = F.prelu(buf[a[0]] + a[2], a[1])
            elif kind == "bias":
                buf[a[0]] = buf[a[0]] + a[1]
            elif kind == "subsample":
                buf[a[1]] = F.max_pool2d(buf[a[0]], kernel_size=1, stride=a[2])
            elif kind == "add":
                buf[a[2]] = buf[a[0]] + buf[a[1]]
            elif kind == "head":
                return F.linear(torch.flatten(buf[a[0]], 1), a[1], a[2])
        raise RuntimeError("bundle has no head step")


def cosine(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bundle")
    parser.add_argument("threads", type=int)
    parser.add_argument("batches", type=int, nargs="+")
    parser.add_argument("--budget", type=float, default=3.0, help="seconds per measurement")
    parser.add_argument("--onnx")
    parser.add_argument("--face")
    parser.add_argument("--ref")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    start = time.perf_counter()
    net = BundleNet(args.bundle).eval()
    load_s = time.perf_counter() - start
    tensors = read_tensors(args.bundle)
    face = torch.from_numpy(tensors["ref.input_chw"].reshape(1, 3, 112, 112).copy())
    reference = tensors["ref.cpu_embedding"]

    results = {}
    with torch.inference_mode():
        cos = cosine(net(face)[0].numpy(), reference)
        for batch in args.batches:
            x = face.repeat(batch, 1, 1, 1)
            first = time.perf_counter()
            net(x)
            once = time.perf_counter() - first
            reps = max(3, min(50, int(args.budget / max(once, 1e-4))))
            times = []
            for _ in range(reps):
                t0 = time.perf_counter()
                net(x)
                times.append(time.perf_counter() - t0)
            median = statistics.median(times)
            results[str(batch)] = {"median_ms": round(median * 1e3, 2), "faces_per_s": round(batch / median, 2),
                                   "reps": reps}
    if args.onnx:
        torch.onnx.export(net, face, args.onnx, input_names=["face"], output_names=["embedding"],
                          dynamic_axes={"face": {0: "n"}, "embedding": {0: "n"}}, opset_version=13)
        face.numpy().astype(np.float32).tofile(args.face)
        np.asarray(reference, np.float32).tofile(args.ref)
    print(json.dumps({"bundle": args.bundle, "backend": "pytorch", "precision": "f32", "threads": args.threads,
                      "torch": torch.__version__, "load_s": round(load_s, 3),
                      "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                      "cosine_fp32": round(cos, 6), "batches": results}))


if __name__ == "__main__":
    main()
