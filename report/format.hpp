#pragma once
// Numbers with units for people, and text escaping for HTML and Markdown. Every formatter keeps
// four significant digits (three for percentages), so a value read back from the text is within
// 0.05% of the number it came from; the report tests rely on that bound.
#include <string>
#include <string_view>

namespace infraplan::report {

/// `v` with `sig` significant digits, no exponent for |v| in [1e-4, 1e15), thousands separated
/// by a thin space for |v| ≥ 10,000: "1 234 567", "12.35", "0.001235".
std::string fmt_sig(double v, int sig = 4);
/// Seconds with the largest unit that keeps the value ≥ 1: "1.234 h", "12.35 s", "456.7 ms",
/// "12.34 µs", "5.000 ns"; days from 48 h on ("3.125 d").
std::string fmt_seconds(double s);
/// Milliseconds as given ("123.4 ms"); for latencies that the JSON reports in ms.
std::string fmt_ms(double ms);
/// Bytes in binary units: "12.34 GiB", "512.0 MiB", "3.000 KiB", "12 B".
std::string fmt_bytes(double bytes);
/// A fraction (0..1) as a percentage with `decimals` decimals: 0.4567 → "45.67%".
std::string fmt_percent(double fraction, int decimals = 2);
/// A count or rate with a unit word: fmt_rate(12345.6, "tokens/s") → "12 350 tokens/s".
std::string fmt_rate(double v, std::string_view unit);
/// FLOP/s with SI prefix: "989.4 TFLOP/s".
std::string fmt_flops(double flops_per_s);
/// An integer with thin-space thousands separators: "100 000".
std::string fmt_int(long long v);

/// Escapes &, <, >, " and ' for HTML text and attribute values.
std::string html_escape(std::string_view s);
/// Escapes characters Markdown would interpret in a table cell or paragraph (|, *, _, `, [, ], <).
std::string md_escape(std::string_view s);
/// A double printed exactly enough to read back the same value (shortest round-trip form).
std::string exact_number(double v);

}  // namespace infraplan::report
