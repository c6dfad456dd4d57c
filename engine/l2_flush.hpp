#pragma once
// How a kernel timing clears the L2 before each sample (engine/in_step_timing.hpp): `Write` (a
// memset of 2 × L2: every line left dirty, so a kernel that streams more than the L2 also writes
// them back to HBM; how the stored serving tables were timed) or `Read` (a kernel reads 2 × L2:
// the lines left clean, as the weights a step has just streamed through its GEMMs leave them).
#include <string>

#include "common/error.hpp"

namespace infraplan::engine {

enum class L2Flush { Write, Read };

inline const char* l2_flush_name(L2Flush f) { return f == L2Flush::Read ? "read" : "write"; }

/// "write" or "read"; anything else is refused naming `field` and the choices.
inline L2Flush parse_l2_flush(const std::string& s, const std::string& field) {
  if (s == "write") return L2Flush::Write;
  if (s == "read") return L2Flush::Read;
  throw Error(field + "='" + s + "': expected write or read");
}

}  // namespace infraplan::engine
