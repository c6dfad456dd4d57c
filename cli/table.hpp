#pragma once
// Plain-text tables for terminal output: aligned columns, right-aligned numbers.
#include <string>
#include <vector>

namespace infraplan::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string str() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

/// Number formatting helpers.
std::string fmt(double v, int precision = 2);
std::string fmt_gib(double bytes);          ///< "12.34 GiB"
std::string fmt_count(double n);            ///< "6.74B", "124.4M", "3.2K"
std::string fmt_seconds(double s);          ///< "1.23 ms", "4.5 s"
std::string fmt_flops(double flops_per_s);  ///< "989.4 TFLOP/s"

}  // namespace infraplan::cli
