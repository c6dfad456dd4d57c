#include "calib_cluster/fault_injection.hpp"

#include <sstream>

#include "common/error.hpp"
#include "common/json_util.hpp"

namespace infraplan::ccal {

std::optional<Fault> read_fault(const EnvLookup& env) {
  const char* v = env("INFRAPLAN_CALIB_FAULT");
  if (!v || !*v) return std::nullopt;
  const std::string value = v;
  auto bad = [&](const std::string& why) {
    return Error("INFRAPLAN_CALIB_FAULT='" + value + "': " + why +
                 " (expected rank=R,device=NAME | rank=R,fail=OP[@BYTES] | rank=R,exit=OP[@BYTES])");
  };
  Fault f;
  std::stringstream ss(value);
  std::string item;
  while (std::getline(ss, item, ',')) {
    auto eq = item.find('=');
    if (eq == std::string::npos) throw bad("'" + item + "' is not key=value");
    const std::string key = item.substr(0, eq), val = item.substr(eq + 1);
    if (key == "rank") {
      try {
        std::size_t used = 0;
        f.rank = std::stoi(val, &used);
        if (used != val.size() || f.rank < 0) throw 1;
      } catch (...) {
        throw bad("rank='" + val + "' is not a rank");
      }
    } else if (key == "device") {
      f.device = val;
    } else if (key == "fail" || key == "exit") {
      f.exit = key == "exit";
      const auto at = val.find('@');
      try {
        f.op = coll::parse_op(val.substr(0, at), "INFRAPLAN_CALIB_FAULT " + key);
      } catch (const Error& e) {
        throw bad(e.what());
      }
      if (at != std::string::npos)
        f.bytes = std::size_t(parse_bytes_string(val.substr(at + 1), "INFRAPLAN_CALIB_FAULT"));
    } else {
      throw bad("unknown key '" + key + "'");
    }
  }
  if (f.rank < 0) throw bad("no rank=");
  if (f.device.empty() && !f.op) throw bad("say device= or fail= or exit=");
  return f;
}

}  // namespace infraplan::ccal
