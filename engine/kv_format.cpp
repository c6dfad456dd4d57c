#include "engine/kv_format.hpp"

#include <cmath>

#include "common/error.hpp"

namespace infraplan::engine {

const char* kv_format_name(KvFormat f) { return f == KvFormat::FP8 ? "fp8" : "bf16"; }

KvFormat parse_kv_format(const std::string& s, const std::string& field) {
  if (s == "bf16") return KvFormat::BF16;
  if (s == "fp8") return KvFormat::FP8;
  throw Error(field + "='" + s + "': " + unknown_name_message("KV cache format", s, {"bf16", "fp8"}));
}

void KvScales::validate(int layers) const {
  if (kv.empty()) return;
  if (std::int64_t(kv.size()) != 2 * std::int64_t(layers))
    throw Error("KV scales: " + std::to_string(kv.size()) + " values for " + std::to_string(layers) +
                " layers; need 2 per layer (key, value) or none");
  for (std::size_t i = 0; i < kv.size(); ++i)
    if (!(std::isfinite(kv[i]) && kv[i] > 0.0f))
      throw Error("KV scales: layer " + std::to_string(i / 2) + (i % 2 ? " value" : " key") + " scale " +
                  std::to_string(kv[i]) + " must be positive and finite");
}

}  // namespace infraplan::engine
