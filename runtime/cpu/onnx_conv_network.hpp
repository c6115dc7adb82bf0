// A small convolutional ONNX graph (YuNet's kind) run by oneDNN in f32 at one fixed input size:
// Conv (groups, strides, pads, dilations) with a following Relu or Sigmoid fused as a post-op,
// MaxPool, Resize (nearest, integer scales), Add, Relu, Sigmoid, and the outputs' Transpose /
// Reshape done by one final reorder per output into the layout they declare. Activations stay in
// the blocked layouts the convolutions choose; their buffers are reused by liveness. Anything else
// is refused at construction, naming the node, so the caller can run the model another way.
// Batch 1. Not thread-safe: one network per thread.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "onnx/onnx_graph.hpp"

namespace taconite::cpu {

class OnnxConvNetwork {
 public:
  // The graph's single input as 1 x C x height x width, run with `threads` (1..64) OpenMP threads.
  // `graph` is read here only (it need not outlive the network).
  // Throws Failure(Input) "<origin>: node '<name>' (<op>): ..." for what it cannot run exactly,
  // Failure(Device) when oneDNN refuses a primitive.
  OnnxConvNetwork(const onnx::OnnxGraph& graph, int height, int width, int threads, const std::string& origin);
  ~OnnxConvNetwork();
  OnnxConvNetwork(const OnnxConvNetwork&) = delete;
  OnnxConvNetwork& operator=(const OnnxConvNetwork&) = delete;

  // The input, float NCHW (channels x height x width), written by the caller before run().
  std::span<float> input();
  // One forward pass (the caller's own OpenMP setting is restored).
  void run();
  // A graph output after run(), in its declared (row-major) order; empty for an unknown name.
  std::span<const float> output(const std::string& name) const;

  // The oneDNN implementation of every primitive, counted, e.g. "conv jit:avx512_core x53, ...".
  std::string implementations() const;
  std::size_t activation_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int threads_;
};

}  // namespace taconite::cpu
