#pragma once
// Typed JSON reads live in the shared library every layer uses (common/json_util.hpp); this
// header keeps `#include "model/json_util.hpp"` working.
#include "common/json_util.hpp"
