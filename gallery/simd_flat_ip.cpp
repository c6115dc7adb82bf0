#include "simd_flat_ip.hpp"

#include "simd_dot.hpp"

namespace taconite::gallery {

namespace {

struct SimdInnerProduct final : faiss::FlatCodesDistanceComputer {
  SimdInnerProduct(const SimdFlatIP& index)
      : faiss::FlatCodesDistanceComputer(index.codes.data(), index.code_size), vectors(index.get_xb()),
        dim(static_cast<std::size_t>(index.d)) {}

  void set_query(const float* x) override { query = x; }
  float distance_to_code(const std::uint8_t* code) override {
    return dot_f32(query, reinterpret_cast<const float*>(code), dim);
  }
  float symmetric_dis(idx_t i, idx_t j) override {
    return dot_f32(vectors + static_cast<std::size_t>(i) * dim, vectors + static_cast<std::size_t>(j) * dim, dim);
  }

  const float* vectors;
  std::size_t dim;
  const float* query = nullptr;
};

}  // namespace

faiss::FlatCodesDistanceComputer* SimdFlatIP::get_FlatCodesDistanceComputer() const {
  return new SimdInnerProduct(*this);
}

std::unique_ptr<SimdFlatIP> SimdFlatIP::adopt(faiss::IndexFlatIP&& flat) {
  auto simd = std::make_unique<SimdFlatIP>(flat.d);
  simd->codes = std::move(flat.codes);
  simd->ntotal = flat.ntotal;
  flat.ntotal = 0;
  return simd;
}

}  // namespace taconite::gallery
