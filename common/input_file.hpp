#pragma once
// Reading input files safely: only regular files (a FIFO, a directory or /dev/zero is refused
// with a clear message instead of blocking, misreading or reading until memory runs out), and
// never more than a stated size, checked before the content is read.
#include <cstdint>
#include <string>

namespace infraplan {

/// Largest JSON input (scenario, model, cluster, profile, Hugging Face config), bytes.
inline constexpr std::uint64_t kMaxJsonFileBytes = 64ull << 20;
/// Largest request trace (CSV or JSONL), bytes.
inline constexpr std::uint64_t kMaxTraceFileBytes = 256ull << 20;

/// Reads all of `path`, which must be a regular file of at most `max_bytes`. `what` names the
/// file's role in messages ("scenario", "trace"). Throws infraplan::Error otherwise.
std::string read_input_file(const std::string& path, std::uint64_t max_bytes, const std::string& what);

/// True when `path` names an existing regular file (following symlinks); no error for anything else.
bool is_regular_file_path(const std::string& path);

}  // namespace infraplan
