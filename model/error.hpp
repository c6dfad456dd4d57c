#pragma once
// The error type lives in the shared library every layer uses (common/error.hpp); this header
// keeps `#include "model/error.hpp"` working.
#include "common/error.hpp"
