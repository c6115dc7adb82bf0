// HNSW tests skip, saying why, in a build without FAISS (-Dfaiss=disabled): it searches exactly.
#pragma once

#include <gtest/gtest.h>

#include "gallery_index.hpp"

#define TACONITE_REQUIRE_HNSW()                                                         \
  if (!taconite::gallery::approximate_search_available())                               \
  GTEST_SKIP() << "this build has no FAISS (-Dfaiss=disabled): no HNSW index to test"
