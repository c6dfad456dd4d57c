#pragma once
// Safetensors files (the Hugging Face weight format), read and written without any library:
// an 8-byte little-endian header length N, N bytes of JSON {name: {"dtype", "shape",
// "data_offsets": [begin, end]}, "__metadata__": {...}}, then the raw little-endian tensor bytes
// (offsets relative to the end of the header). CUDA-free.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace infraplan::engine {

/// One tensor's entry in a file's header.
struct SafetensorInfo {
  std::string dtype;                ///< "BF16", "F16", "F32", ...
  std::vector<std::int64_t> shape;  ///< dimensions, outermost first
  std::int64_t begin = 0, end = 0;  ///< byte range in the data section
  std::int64_t elems() const;
};

class SafetensorsFile {
 public:
  /// Reads and checks the header (sizes, offsets inside the file, dtypes' element sizes).
  /// Throws infraplan::Error naming the file and what is wrong.
  explicit SafetensorsFile(std::string path);
  const std::string& path() const { return path_; }
  const std::map<std::string, SafetensorInfo>& tensors() const { return t_; }
  bool has(const std::string& name) const { return t_.count(name) != 0; }
  const SafetensorInfo& info(const std::string& name) const;
  /// The tensor as bf16 bits (BF16 as stored; F16 and F32 converted, rounding to nearest even).
  std::vector<std::uint16_t> read_bf16(const std::string& name) const;

 private:
  std::string path_;
  std::int64_t data_start_ = 0;
  std::map<std::string, SafetensorInfo> t_;
};

/// A tensor to write: bf16 bits and a shape.
struct BF16Tensor {
  std::vector<std::int64_t> shape;
  std::vector<std::uint16_t> data;
};
/// Writes a BF16 safetensors file (tests and tools).
void write_safetensors_bf16(const std::string& path, const std::map<std::string, BF16Tensor>& tensors);

}  // namespace infraplan::engine
