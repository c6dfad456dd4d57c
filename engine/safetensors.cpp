#include "engine/safetensors.hpp"

#include <cstring>
#include <fstream>

#include "common/input_file.hpp"
#include "engine/weight_init.hpp"
#include "common/error.hpp"
#include "common/json_util.hpp"

namespace infraplan::engine {

namespace {

int dtype_bytes(const std::string& d) {
  if (d == "BF16" || d == "F16" || d == "I16" || d == "U16") return 2;
  if (d == "F32" || d == "I32" || d == "U32") return 4;
  if (d == "F64" || d == "I64" || d == "U64") return 8;
  if (d == "I8" || d == "U8" || d == "BOOL" || d == "F8_E4M3" || d == "F8_E5M2") return 1;
  return 0;
}

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t(h & 0x8000) << 16;
  std::uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff, u;
  if (exp == 0) {
    if (man == 0) {
      u = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        man <<= 1;
      } while ((man & 0x400) == 0);
      u = sign | (std::uint32_t(127 - 15 - e) << 23) | ((man & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    u = sign | 0x7f800000u | (man << 13);
  } else {
    u = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

}  // namespace

std::int64_t SafetensorInfo::elems() const {
  // Shapes are checked when the header is read (at most 2^40 elements): no overflow here.
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

SafetensorsFile::SafetensorsFile(std::string path) : path_(std::move(path)) {
  // A FIFO, a directory or a device would block or misread: only regular files.
  if (!is_regular_file_path(path_)) throw Error("safetensors file '" + path_ + "' is not a regular file");
  std::ifstream in(path_, std::ios::binary);
  if (!in) throw Error("cannot open safetensors file '" + path_ + "'");
  in.seekg(0, std::ios::end);
  const std::int64_t size = std::int64_t(in.tellg());
  in.seekg(0);
  unsigned char len8[8];
  if (size < 8 || !in.read(reinterpret_cast<char*>(len8), 8))
    throw Error(path_ + ": too short for a safetensors file");
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | len8[i];
  if (n == 0 || std::int64_t(n) > size - 8 || n > (std::uint64_t(100) << 20))
    throw Error(path_ + ": header length " + std::to_string(n) + " does not fit the file (" +
                std::to_string(size) + " bytes)");
  std::string header(std::size_t(n), '\0');
  if (!in.read(header.data(), std::streamsize(n))) throw Error(path_ + ": cannot read the header");
  data_start_ = 8 + std::int64_t(n);
  const Json j = parse_json_text(header, path_ + " (header)");
  if (!j.is_object()) throw Error(path_ + ": the header is not a JSON object");
  const std::int64_t data_bytes = size - data_start_;
  for (const auto& [name, v] : j.items()) {
    if (name == "__metadata__") continue;
    const std::string where = path_ + ": tensor '" + name + "'";
    if (!v.is_object() || !v.contains("dtype") || !v.contains("shape") || !v.contains("data_offsets"))
      throw Error(where + ": needs dtype, shape and data_offsets");
    SafetensorInfo t;
    if (!v["dtype"].is_string()) throw Error(where + ": dtype must be a string");
    t.dtype = v["dtype"].get<std::string>();
    if (!v["shape"].is_array() || v["shape"].size() > 8) throw Error(where + ": shape must be an array of at most 8 sizes");
    constexpr std::int64_t kMaxElems = std::int64_t(1) << 40;
    std::int64_t elems = 1;
    for (const auto& d : v["shape"]) {
      if (!d.is_number_integer() || d.get<std::int64_t>() < 0) throw Error(where + ": bad shape");
      const std::int64_t x = d.get<std::int64_t>();
      if (x > 0 && elems > kMaxElems / x) throw Error(where + ": more than 2^40 elements");
      elems *= x;
      t.shape.push_back(x);
    }
    const auto& off = v["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_integer() || !off[1].is_number_integer())
      throw Error(where + ": data_offsets must be [begin, end] (integers)");
    t.begin = off[0].get<std::int64_t>();
    t.end = off[1].get<std::int64_t>();
    const int eb = dtype_bytes(t.dtype);
    if (eb == 0) throw Error(where + ": unknown dtype '" + t.dtype + "'");
    if (t.begin < 0 || t.end < t.begin || t.end > data_bytes)
      throw Error(where + ": data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) +
                  "] outside the data section (" + std::to_string(data_bytes) + " bytes)");
    if (t.end - t.begin != t.elems() * eb)
      throw Error(where + ": " + std::to_string(t.end - t.begin) + " bytes for " + std::to_string(t.elems()) +
                  " elements of " + t.dtype);
    t_.emplace(name, std::move(t));
  }
}

const SafetensorInfo& SafetensorsFile::info(const std::string& name) const {
  auto it = t_.find(name);
  if (it == t_.end()) throw Error(path_ + ": no tensor '" + name + "'");
  return it->second;
}

std::vector<std::uint16_t> SafetensorsFile::read_bf16(const std::string& name) const {
  const SafetensorInfo& t = info(name);
  std::ifstream in(path_, std::ios::binary);
  if (!in) throw Error("cannot open safetensors file '" + path_ + "'");
  in.seekg(data_start_ + t.begin);
  std::vector<char> raw(std::size_t(t.end - t.begin));
  if (!in.read(raw.data(), std::streamsize(raw.size())))
    throw Error(path_ + ": cannot read tensor '" + name + "'");
  std::vector<std::uint16_t> out(std::size_t(t.elems()));
  if (t.dtype == "BF16") {
    std::memcpy(out.data(), raw.data(), raw.size());
  } else if (t.dtype == "F16") {
    for (std::size_t i = 0; i < out.size(); ++i) {
      std::uint16_t h;
      std::memcpy(&h, raw.data() + 2 * i, 2);
      out[i] = bf16_bits(half_to_float(h));
    }
  } else if (t.dtype == "F32") {
    for (std::size_t i = 0; i < out.size(); ++i) {
      float f;
      std::memcpy(&f, raw.data() + 4 * i, 4);
      out[i] = bf16_bits(f);
    }
  } else {
    throw Error(path_ + ": tensor '" + name + "' is " + t.dtype +
                "; the engine reads BF16, F16 or F32 weights");
  }
  return out;
}

void write_safetensors_bf16(const std::string& path, const std::map<std::string, BF16Tensor>& tensors) {
  Json h = Json::object();
  std::int64_t off = 0;
  for (const auto& [name, t] : tensors) {
    std::int64_t n = 1;
    for (auto d : t.shape) n *= d;
    if (n != std::int64_t(t.data.size()))
      throw Error("write_safetensors_bf16: tensor '" + name + "' shape does not match its data");
    h[name] = {{"dtype", "BF16"}, {"shape", t.shape}, {"data_offsets", {off, off + 2 * n}}};
    off += 2 * n;
  }
  std::string hs = h.dump();
  while (hs.size() % 8 != 0) hs += ' ';  // the format pads the header to 8 bytes
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error("cannot write '" + path + "'");
  std::uint64_t n = hs.size();
  for (int i = 0; i < 8; ++i) out.put(char((n >> (8 * i)) & 0xff));
  out.write(hs.data(), std::streamsize(hs.size()));
  for (const auto& [name, t] : tensors)
    out.write(reinterpret_cast<const char*>(t.data.data()), std::streamsize(2 * t.data.size()));
  if (!out) throw Error("failed writing '" + path + "'");
}

}  // namespace infraplan::engine
