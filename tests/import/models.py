"""Test models with the published architectures and random calibrated weights (spec §9): AdaFace
net.py backbones saved as Lightning-style checkpoints, and an InsightFace-style iresnet exported
to ONNX with torch.onnx.export. Nothing here can download real weights."""
import numpy as np
import torch
from torch import nn

from taconite_import.adaface_net import Backbone
from taconite_import.face import astronaut, to_chw


def calibration_batch(n=6, seed=0):
    """Aligned astronaut variants and smooth random images in [-1, 1], [n][3][112][112]."""
    rng = np.random.default_rng(seed)
    faces = [to_chw(astronaut(v), "RGB") for v in range(n // 2)]
    for _ in range(n - len(faces)):
        coarse = rng.uniform(-1, 1, (3, 14, 14)).astype(np.float32)
        noise = rng.normal(0, 0.05, (3, 112, 112)).astype(np.float32)
        faces.append(np.kron(coarse, np.ones((8, 8), np.float32)) + noise)
    return torch.from_numpy(np.stack(faces).astype(np.float32))


def randomise_and_calibrate(model, last_bns, seed=0):
    """Random BN affine and PReLU slopes, each residual branch's last BN gamma ~0.2, then every
    BN's running statistics from one train-mode forward (momentum 1: the batch's own statistics,
    layer by layer), as trained ResNets have."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.BatchNorm2d, nn.BatchNorm1d)):
                m.momentum = 1.0
                if m.affine:
                    m.weight.uniform_(0.8, 1.2, generator=generator)
                    m.bias.normal_(0.0, 0.1, generator=generator)
            elif isinstance(m, nn.PReLU):
                m.weight.uniform_(0.1, 0.35, generator=generator)
        for bn in last_bns:
            bn.weight.mul_(0.2)
        model.train()
        model(calibration_batch(seed=seed))
    model.eval()
    return model


def adaface(num_layers, seed=0):
    model = Backbone(num_layers)
    return randomise_and_calibrate(model, [b.res_layer[5] for b in model.body], seed)


def save_lightning_checkpoint(model, path, arch):
    """As AdaFace's training saves it: Lightning bookkeeping, model.* backbone, head.kernel margin head."""
    state = {"model." + k: v for k, v in model.state_dict().items()}
    state["head.kernel"] = torch.randn(512, 64)
    torch.save({"epoch": 3, "global_step": 1000, "pytorch-lightning_version": "1.8.6", "state_dict": state,
                "optimizer_states": [], "lr_schedulers": [], "hyper_parameters": {"arch": arch}}, path)


# ---- InsightFace arcface_torch iresnet (module tree and names as published) ----
class IBasicBlock(nn.Module):
    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.bn1 = nn.BatchNorm2d(inplanes, eps=1e-05)
        self.conv1 = nn.Conv2d(inplanes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes, eps=1e-05)
        self.prelu = nn.PReLU(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes, eps=1e-05)
        self.downsample = downsample

    def forward(self, x):
        out = self.bn3(self.conv2(self.prelu(self.bn2(self.conv1(self.bn1(x))))))
        return out + (x if self.downsample is None else self.downsample(x))


class IResNet(nn.Module):
    def __init__(self, layers, num_features=512):
        super().__init__()
        self.inplanes = 64
        self.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(64, eps=1e-05)
        self.prelu = nn.PReLU(64)
        self.layer1 = self._make_layer(64, layers[0])
        self.layer2 = self._make_layer(128, layers[1])
        self.layer3 = self._make_layer(256, layers[2])
        self.layer4 = self._make_layer(512, layers[3])
        self.bn2 = nn.BatchNorm2d(512, eps=1e-05)
        self.dropout = nn.Dropout(p=0.0, inplace=True)
        self.fc = nn.Linear(512 * 7 * 7, num_features)
        self.features = nn.BatchNorm1d(num_features, eps=1e-05)

    def _make_layer(self, planes, blocks, stride=2):
        downsample = nn.Sequential(nn.Conv2d(self.inplanes, planes, 1, stride, bias=False),
                                   nn.BatchNorm2d(planes, eps=1e-05))
        layers = [IBasicBlock(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes
        layers += [IBasicBlock(planes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.prelu(self.bn1(self.conv1(x)))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = self.dropout(torch.flatten(self.bn2(x), 1))
        return self.features(self.fc(x))


def iresnet(layers=(3, 4, 14, 3), seed=0):
    model = IResNet(list(layers))
    blocks = [b for layer in (model.layer1, model.layer2, model.layer3, model.layer4) for b in layer]
    return randomise_and_calibrate(model, [b.bn3 for b in blocks], seed)


class MobileFaceNetLike(nn.Module):
    """Not IR-family: MobileFaceNet's IR-like stem, then depthwise-separable blocks and a pooled head."""
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.PReLU(64))
        self.depthwise = nn.Sequential(nn.Conv2d(64, 64, 3, 2, 1, groups=64, bias=False), nn.BatchNorm2d(64),
                                       nn.PReLU(64), nn.Conv2d(64, 128, 1, bias=False), nn.BatchNorm2d(128))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(128, 512)
        self.features = nn.BatchNorm1d(512)

    def forward(self, x):
        return self.features(self.fc(torch.flatten(self.pool(self.depthwise(self.stem(x))), 1)))


def export_onnx(model, path, size=112):
    torch.onnx.export(model, torch.zeros(1, 3, size, size), path, input_names=["input.1"], output_names=["embedding"],
                      dynamic_axes={"input.1": {0: "None"}, "embedding": {0: "None"}}, opset_version=11)
