#pragma once
// gzip'd inputs (profiles, scenarios, stored measurements): recognised by their first bytes and
// inflated with a bound on the inflated size, so a small file cannot expand past what a plain
// input of its kind may hold.
#include <cstdint>
#include <string>

namespace infraplan {

/// True when `bytes` start with the gzip magic number (1f 8b).
bool is_gzip(const std::string& bytes);

/// The inflated content of the gzip data `bytes` (one member or several concatenated). Throws
/// infraplan::Error naming `origin` when the data is not valid gzip, is cut short, or inflates to
/// more than `max_bytes`.
std::string gunzip(const std::string& bytes, std::uint64_t max_bytes, const std::string& origin);

}  // namespace infraplan
