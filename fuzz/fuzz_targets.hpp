#pragma once
// The fuzz targets (fuzz_targets.cpp): one input in, 0 out; anything but success or an
// infraplan::Error escapes as a finding.
#include <cstddef>
#include <cstdint>

namespace infraplan::fuzz {

/// JSON scenario → Scenario → serving engine options and workload (requests generated).
int scenario(const std::uint8_t* data, std::size_t size);
/// Hugging Face config.json (or an infraplan model object) → ModelSpec → its arithmetic.
int hf_config(const std::uint8_t* data, std::size_t size);
/// Hardware profile JSON → Profile → calibrated cost model queries.
int profile(const std::uint8_t* data, std::size_t size);
/// First byte: 0 CSV, 1 JSONL; the rest a request trace.
int trace(const std::uint8_t* data, std::size_t size);
/// NUL-separated argument list; the first word picks cost, models, cluster or the bare parser.
int cli_args(const std::uint8_t* data, std::size_t size);

}  // namespace infraplan::fuzz
