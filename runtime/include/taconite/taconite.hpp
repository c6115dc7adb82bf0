// Umbrella header of the taconite-adaface runtime.
#pragma once

#include "taconite/embedder.hpp"
#include "taconite/error.hpp"
