// Umbrella header of the taconite-adaface runtime (tool-only calls: taconite/inspect.hpp).
#pragma once

#include "taconite/embedder.hpp"
#include "taconite/error.hpp"
#include "taconite/model.hpp"
