"""The AdaFace IR backbone (mk-minchul/AdaFace net.py) at 112x112, written from the published
architecture with the same module tree, so its state_dict keys are the official checkpoints'.

IR-18/34/50/101 all use BasicBlockIR (net.py picks BottleneckIR only above 100 layers).
"""
import torch
from torch.nn import BatchNorm1d, BatchNorm2d, Conv2d, Dropout, Linear, MaxPool2d, Module, PReLU, Sequential

UNITS_PER_STAGE = {18: [2, 2, 2, 2], 34: [3, 4, 6, 3], 50: [3, 4, 14, 3], 100: [3, 13, 30, 3]}
MODEL_NAMES = {18: "IR-18", 34: "IR-34", 50: "IR-50", 100: "IR-101"}
STAGE_CHANNELS = [64, 128, 256, 512]


class Flatten(Module):
    def forward(self, x):
        return x.view(x.size(0), -1)


class BasicBlockIR(Module):
    def __init__(self, in_channel, depth, stride):
        super().__init__()
        if in_channel == depth:
            self.shortcut_layer = MaxPool2d(1, stride)
        else:
            self.shortcut_layer = Sequential(Conv2d(in_channel, depth, (1, 1), stride, bias=False), BatchNorm2d(depth))
        self.res_layer = Sequential(
            BatchNorm2d(in_channel),
            Conv2d(in_channel, depth, (3, 3), (1, 1), 1, bias=False),
            BatchNorm2d(depth),
            PReLU(depth),
            Conv2d(depth, depth, (3, 3), stride, 1, bias=False),
            BatchNorm2d(depth))

    def forward(self, x):
        return self.res_layer(x) + self.shortcut_layer(x)


class Backbone(Module):
    def __init__(self, num_layers):
        super().__init__()
        self.input_layer = Sequential(Conv2d(3, 64, (3, 3), 1, 1, bias=False), BatchNorm2d(64), PReLU(64))
        self.output_layer = Sequential(BatchNorm2d(512), Dropout(0.4), Flatten(), Linear(512 * 7 * 7, 512),
                                       BatchNorm1d(512, affine=False))
        modules, in_channel = [], 64
        for depth, units in zip(STAGE_CHANNELS, UNITS_PER_STAGE[num_layers]):
            for u in range(units):
                modules.append(BasicBlockIR(in_channel, depth, 2 if u == 0 else 1))
                in_channel = depth
        self.body = Sequential(*modules)

    def forward(self, x):
        """As net.py: the L2-normalised embedding and its norm."""
        x = self.input_layer(x)
        for module in self.body:
            x = module(x)
        x = self.output_layer(x)
        norm = torch.norm(x, 2, 1, True)
        return torch.div(x, norm), norm


def num_layers_for_units(units):
    """The depth whose net.py body has `units` BasicBlockIR units, or None."""
    for layers, per_stage in UNITS_PER_STAGE.items():
        if sum(per_stage) == units:
            return layers
    return None
