#include "cpu/fused_graph.hpp"

#include <algorithm>
#include <variant>

namespace taconite::cpu {

namespace {

std::string at_line(int line) { return "manifest.txt:" + std::to_string(line); }
std::string at_step(int step) { return "step " + std::to_string(step) + " (in manifest order)"; }

// Phase 1: one op per step (the records of one conv merged), values in single assignment.
class RawBuilder {
 public:
  explicit RawBuilder(const plan::Plan& plan) : slot_value_(plan.slot_elements.size(), -1) {}

  std::string add(const plan::Step& step) { return std::visit([&](const auto& s) { return take(s); }, step); }

  FusedGraph graph;
  int step_number = 0;  // 1-based position of the step being taken, in manifest order

 private:
  int new_value(const plan::Dims& dims) {
    graph.values.push_back(dims);
    return static_cast<int>(graph.values.size()) - 1;
  }
  int value_of(plan::Slot slot) const { return slot_value_[static_cast<std::size_t>(slot)]; }
  void define(plan::Slot slot, int value) { slot_value_[static_cast<std::size_t>(slot)] = value; }

  std::string take(const plan::InputStep& s) {
    FusedOp op;
    op.kind = OpKind::Input;
    op.step = step_number;
    op.output = new_value(s.dims);
    graph.input_value = op.output;
    graph.recorded_input = s.recorded;
    define(s.buf, op.output);
    graph.ops.push_back(op);
    return {};
  }

  std::string take(const plan::ConvStep& s) {
    if (s.first) {
      FusedOp op;
      op.kind = OpKind::Conv;
      op.inputs = {value_of(s.in)};
      op.kernel = s.kernel;
      op.oc = s.oc;
      op.line = s.line;
      op.step = step_number;
      graph.ops.push_back(op);
      open_conv_ = static_cast<int>(graph.ops.size()) - 1;
    } else if (open_conv_ != static_cast<int>(graph.ops.size()) - 1 || open_conv_ < 0) {
      return "conv record at " + at_line(s.line) + " continues a conv that is not the previous step";
    }
    FusedOp& conv = graph.ops[static_cast<std::size_t>(open_conv_)];
    if (conv.kernel != s.kernel || conv.inputs[0] != value_of(s.in))
      return "conv record at " + at_line(s.line) + " differs in kernel size or input from its first record";
    conv.records.push_back(&s);
    if (s.last) {
      conv.output = new_value({s.oc, s.oh, s.ow});
      define(s.out, conv.output);
      open_conv_ = -1;
    }
    return {};
  }

  std::string take(const plan::AffineStep& s) {
    FusedOp op;
    op.kind = OpKind::Affine;
    op.inputs = {value_of(s.in)};
    op.scale = s.scale;
    op.shift = s.shift;
    return push_defining(op, s.out, s.dims);
  }

  // prelu_bias is a Bias op with alpha set until it is fused into a conv.
  std::string take(const plan::PreluBiasStep& s) {
    FusedOp op;
    op.kind = OpKind::Bias;
    op.inputs = {value_of(s.buf)};
    op.bias = s.bias;
    op.alpha = s.alpha;
    return push_defining(op, s.buf, s.dims);
  }

  std::string take(const plan::BiasStep& s) {
    FusedOp op;
    op.kind = OpKind::Bias;
    op.inputs = {value_of(s.buf)};
    op.bias = s.bias;
    return push_defining(op, s.buf, s.dims);
  }

  std::string take(const plan::SubsampleStep& s) {
    FusedOp op;
    op.kind = OpKind::Subsample;
    op.inputs = {value_of(s.in)};
    op.stride = s.stride;
    return push_defining(op, s.out, s.out_dims());
  }

  std::string take(const plan::AddStep& s) {
    FusedOp op;
    op.kind = OpKind::Add;
    op.inputs = {value_of(s.a), value_of(s.b)};
    return push_defining(op, s.out, s.dims);
  }

  std::string take(const plan::HeadStep& s) {
    FusedOp op;
    op.kind = OpKind::Head;
    op.inputs = {value_of(s.in)};
    op.head = &s;
    op.step = step_number;
    graph.ops.push_back(op);
    return {};
  }

  std::string push_defining(FusedOp op, plan::Slot slot, const plan::Dims& dims) {
    op.output = new_value(dims);
    op.step = step_number;
    define(slot, op.output);
    graph.ops.push_back(op);
    return {};
  }

  std::vector<int> slot_value_;
  int open_conv_ = -1;
};

// Phase 2: fusions, one forward sweep. Each rule checks its preconditions exactly.
class Fuser {
 public:
  explicit Fuser(FusedGraph& graph) : g_(graph), producer_(graph.values.size(), -1) {
    for (std::size_t i = 0; i < g_.ops.size(); ++i)
      if (g_.ops[i].output >= 0) producer_[static_cast<std::size_t>(g_.ops[i].output)] = static_cast<int>(i);
  }

  std::string run() {
    // First, so the later rules see the conv reading the affine's input (e.g. fuse_add's check
    // that nothing reads a residual operand after the conv that accumulates into it).
    for (std::size_t i = 0; i < g_.ops.size(); ++i)
      if (g_.ops[i].kind == OpKind::Affine) fold_affine_into_conv(static_cast<int>(i));
    for (std::size_t i = 0; i < g_.ops.size(); ++i) {
      if (g_.ops[i].removed) continue;
      std::string refusal;
      switch (g_.ops[i].kind) {
        case OpKind::Bias: refusal = fuse_bias(static_cast<int>(i)); break;
        case OpKind::Subsample: refusal = fuse_subsample(static_cast<int>(i)); break;
        case OpKind::Conv: fuse_subsample_into_1x1(static_cast<int>(i)); break;
        case OpKind::Add: fuse_add(static_cast<int>(i)); break;
        default: break;
      }
      if (!refusal.empty()) return refusal;
    }
    return {};
  }

 private:
  FusedOp& op(int i) { return g_.ops[static_cast<std::size_t>(i)]; }
  int producer(int value) const { return producer_[static_cast<std::size_t>(value)]; }

  // Indices of the live ops reading `value` (as an input or as a sum operand).
  std::vector<int> consumers(int value) const {
    std::vector<int> found;
    for (std::size_t i = 0; i < g_.ops.size(); ++i) {
      const FusedOp& o = g_.ops[i];
      if (o.removed) continue;
      if (std::count(o.inputs.begin(), o.inputs.end(), value) > 0 || o.sum_input == value)
        found.push_back(static_cast<int>(i));
    }
    return found;
  }
  bool only_consumer(int value, int consumer) const {
    const std::vector<int> found = consumers(value);
    return found.size() == 1 && found[0] == consumer;
  }
  // The live conv producing `value`, or -1.
  int producing_conv(int value) {
    const int p = producer(value);
    return p >= 0 && !op(p).removed && op(p).kind == OpKind::Conv ? p : -1;
  }
  bool divisible(int value, int stride) const {
    const plan::Dims& d = g_.values[static_cast<std::size_t>(value)];
    return d.h % stride == 0 && d.w % stride == 0;
  }
  // `into` absorbs op `i`: it now defines i's output.
  void absorb(int into, int i) {
    op(into).output = op(i).output;
    producer_[static_cast<std::size_t>(op(i).output)] = into;
    op(i).removed = true;
  }

  // affine -> 3x3 conv: the conv reads the affine's input and applies the affine itself (folded
  // into its weights, bias and a border correction by the network). Only a conv that is the
  // affine output's one reader, through its input (not a sum operand), with padding 1.
  void fold_affine_into_conv(int i) {
    const int out = op(i).output;
    const std::vector<int> readers = consumers(out);
    if (readers.size() != 1) return;
    FusedOp& conv = op(readers[0]);
    if (conv.kind != OpKind::Conv || conv.inputs[0] != out || conv.sum_input == out || conv.kernel != 3 ||
        !conv.in_scale.empty())
      return;
    conv.inputs[0] = op(i).inputs[0];
    conv.in_scale = op(i).scale;
    conv.in_shift = op(i).shift;
    op(i).removed = true;
  }

  std::string fuse_bias(int i) {
    const int conv = producing_conv(op(i).inputs[0]);
    const bool fusable = conv >= 0 && only_consumer(op(i).inputs[0], i) && op(conv).bias.empty() &&
                         op(conv).alpha.empty() && op(conv).sum_input < 0;
    if (fusable) {
      op(conv).bias = op(i).bias;
      op(conv).alpha = op(i).alpha;
      absorb(conv, i);
      return {};
    }
    if (!op(i).alpha.empty())
      return "prelu_bias at " + at_step(op(i).step) + " does not directly follow a conv whose output only it reads";
    return {};  // a standalone bias runs as its own op
  }

  std::string fuse_subsample(int i) {
    const int in = op(i).inputs[0], s = op(i).stride;
    if (!divisible(in, s))
      return "subsample at " + at_step(op(i).step) + " has an input size not divisible by its stride " + std::to_string(s);
    const int conv = producing_conv(in);
    // Bias and PReLU are per element, so they commute with subsampling; a sum operand would not.
    if (conv >= 0 && only_consumer(in, i) && op(conv).stride == 1 && op(conv).sum_input < 0) {
      op(conv).stride = s;
      absorb(conv, i);
    }
    return {};
  }

  void fuse_subsample_into_1x1(int i) {
    FusedOp& conv = op(i);
    if (conv.kernel != 1 || conv.stride != 1) return;
    const int p = producer(conv.inputs[0]);
    if (p < 0 || op(p).removed || op(p).kind != OpKind::Subsample || !only_consumer(conv.inputs[0], i)) return;
    conv.stride = op(p).stride;
    conv.inputs[0] = op(p).inputs[0];
    op(p).removed = true;
  }

  void fuse_add(int i) {
    int best_conv = -1, best_other = -1;
    for (int k = 0; k < 2; ++k) {
      const int mine = op(i).inputs[static_cast<std::size_t>(k)], other = op(i).inputs[static_cast<std::size_t>(1 - k)];
      const int conv = producing_conv(mine);
      if (conv < 0 || mine == other || !only_consumer(mine, i)) continue;
      if (op(conv).sum_input >= 0 || !op(conv).alpha.empty() || op(conv).inputs[0] == other) continue;
      // The conv overwrites `other`'s buffer: nothing may read `other` after the conv but this add,
      // and `other` must exist before the conv runs (or its producer can run earlier).
      if (producer(other) >= conv && !hoistable(producer(other), conv)) continue;
      bool read_later = false;
      for (int c : consumers(other)) read_later = read_later || (c != i && c >= conv);
      if (read_later) continue;
      if (conv > best_conv) best_conv = conv, best_other = other;
    }
    if (best_conv < 0) return;  // stays a standalone add
    if (producer(best_other) > best_conv) best_conv = hoist(producer(best_other), best_conv);
    op(best_conv).sum_input = best_other;
    absorb(best_conv, i);
  }

  // A cheap op (subsample, bias, affine, add) whose inputs all exist before `before` computes the
  // same value when run just before it (values are single-assignment).
  bool hoistable(int p, int before) {
    const FusedOp& o = op(p);
    if (o.kind == OpKind::Conv || o.kind == OpKind::Input || o.kind == OpKind::Head) return false;
    for (int in : o.inputs)
      if (producer(in) >= before) return false;
    return true;
  }
  // Moves op p to just before op `before`; returns the new index of `before`.
  int hoist(int p, int before) {
    auto first = g_.ops.begin();
    std::rotate(first + before, first + p, first + p + 1);
    for (std::size_t k = 0; k < g_.ops.size(); ++k)
      if (g_.ops[k].output >= 0 && !g_.ops[k].removed) producer_[static_cast<std::size_t>(g_.ops[k].output)] = static_cast<int>(k);
    return before + 1;
  }

  FusedGraph& g_;
  std::vector<int> producer_;
};

}  // namespace

int FusedGraph::count(OpKind kind) const {
  return static_cast<int>(std::count_if(ops.begin(), ops.end(), [&](const FusedOp& o) { return o.kind == kind; }));
}

Lowering lower_plan(const plan::Plan& plan) {
  RawBuilder builder(plan);
  for (const plan::Step& step : plan.steps) {
    ++builder.step_number;
    std::string refusal = builder.add(step);
    if (!refusal.empty()) return {std::nullopt, refusal};
  }
  FusedGraph graph = std::move(builder.graph);
  std::string refusal = Fuser(graph).run();
  if (!refusal.empty()) return {std::nullopt, refusal};
  std::erase_if(graph.ops, [](const FusedOp& op) { return op.removed; });
  return {std::move(graph), {}};
}

// A conv over few input channels (the stem's image) is faster direct: IR-18's 8-channel stem on the
// Xeon's ISA took 1.03 ms on Winograd, 0.64 ms direct; every wider conv was faster on Winograd.
constexpr int kMinWinogradChannels = 16;

void make_winograd_variant(FusedGraph& graph) {
  for (FusedOp& op : graph.ops) {
    op.winograd = op.kind == OpKind::Conv && op.kernel == 3 && op.stride == 1 &&
                  graph.values[static_cast<std::size_t>(op.inputs[0])].c >= kMinWinogradChannels;
    op.bf16_input = op.kind == OpKind::Head;
  }
}

std::string describe(const FusedGraph& graph) {
  int strided = 0, with_sum = 0, with_prelu = 0, with_affine = 0;
  for (const FusedOp& op : graph.ops) {
    if (op.kind != OpKind::Conv) continue;
    strided += op.stride > 1;
    with_sum += op.sum_input >= 0;
    with_prelu += !op.alpha.empty();
    with_affine += !op.in_scale.empty();
  }
  return "conv " + std::to_string(graph.count(OpKind::Conv)) + " (strided " + std::to_string(strided) +
         ", +input affine " + std::to_string(with_affine) + ", +prelu " + std::to_string(with_prelu) +
         ", +residual sum " + std::to_string(with_sum) + "), affine " +
         std::to_string(graph.count(OpKind::Affine)) + ", bias " + std::to_string(graph.count(OpKind::Bias)) +
         ", add " + std::to_string(graph.count(OpKind::Add)) + ", subsample " +
         std::to_string(graph.count(OpKind::Subsample)) + ", head " + std::to_string(graph.count(OpKind::Head));
}

}  // namespace taconite::cpu
