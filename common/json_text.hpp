#pragma once
// Strict JSON: what infraplan accepts as JSON text. On top of RFC 8259 syntax (nlohmann::json's
// parser, which already refuses trailing garbage and comments) it refuses duplicate keys (no
// "last one wins"), nesting deeper than kMaxJsonDepth (no stack exhaustion further on) and
// numbers beyond the double range; errors name the origin, the line and column or the key path.
#include <string>

#include <nlohmann/json.hpp>

namespace infraplan {

using Json = nlohmann::json;

/// Deepest nesting of objects and arrays accepted in any JSON input.
inline constexpr int kMaxJsonDepth = 64;

/// Parses JSON text strictly; throws infraplan::Error naming `origin` (a file name, "inline
/// JSON", "trace.jsonl:12") on any violation.
Json parse_json_text(const std::string& text, const std::string& origin);
/// Reads (a regular file of at most kMaxJsonFileBytes) and parses `path` strictly; a gzip'd file
/// (recognised by its first bytes, whatever its name) is inflated first, to at most kMaxJsonFileBytes.
Json read_json_file(const std::string& path);
/// Reads a whole text file (a regular file of at most kMaxJsonFileBytes).
std::string read_text_file(const std::string& path);

}  // namespace infraplan
