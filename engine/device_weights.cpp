#include "engine/device_weights.hpp"

#include <algorithm>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "engine/safetensors.hpp"
#include "common/error.hpp"
#include "common/json_util.hpp"

namespace infraplan::engine {

DeviceWeights::DeviceWeights(const LlamaConfig& c) : layout_(c), buf_(std::size_t(layout_.total_elems())) {
  for (const TensorSlot& t : layout_.tensors()) bf16_offset_.push_back(t.offset);
  fp8_offset_.assign(layout_.tensors().size(), -1);
  scale_index_.assign(layout_.tensors().size(), -1);
}

DeviceWeights DeviceWeights::random(const LlamaConfig& c, std::uint64_t seed, WeightFormat f) {
  DeviceWeights w(c);
  for (const TensorSlot& t : w.layout_.tensors())
    init_weights(w.buf_.get() + t.offset, t.elems(), t.init, seed, t.id, nullptr);
  CALIB_CUDA(cudaDeviceSynchronize());
  if (f == WeightFormat::FP8) w.convert_to_fp8();
  return w;
}

void DeviceWeights::convert_to_fp8() {
  const LlamaConfig& c = config();
  if (c.hidden % 16 != 0 || c.ffn % 16 != 0)
    throw Error("engine model '" + c.name + "': fp8 weights need hidden and ffn to be multiples of 16 (got " +
                std::to_string(c.hidden) + ", " + std::to_string(c.ffn) + ")");
  const std::size_t n = layout_.tensors().size();
  std::vector<char> quantized(n, 0);
  for (int l = 0; l < c.layers; ++l)
    for (LayerTensor t : {LayerTensor::Qkv, LayerTensor::O, LayerTensor::GateUp, LayerTensor::Down})
      quantized[layout_.layer(l, t).id] = 1;
  // New places: E4M3 tensors 256-byte aligned, bf16 tensors 64 elements (128 bytes) aligned.
  std::vector<std::int64_t> b16(n, -1), f8(n, -1);
  std::vector<int> si(n, -1);
  std::int64_t b16_total = 0, f8_total = 0;
  int scales = 0;
  for (const TensorSlot& t : layout_.tensors()) {
    if (quantized[t.id]) {
      f8[t.id] = f8_total;
      f8_total += (t.elems() + 255) / 256 * 256;
      si[t.id] = scales++;
    } else {
      b16[t.id] = b16_total;
      b16_total += (t.elems() + 63) / 64 * 64;
    }
  }
  calib::DeviceBuffer<bf16> compact(static_cast<std::size_t>(b16_total));
  calib::DeviceBuffer<fp8> q(static_cast<std::size_t>(f8_total));
  calib::DeviceBuffer<float> s(static_cast<std::size_t>(scales) * kFp8ScaleStride),
      amax(static_cast<std::size_t>(scales));
  CALIB_CUDA(cudaMemset(amax.get(), 0, amax.bytes()));
  for (const TensorSlot& t : layout_.tensors()) {
    const bf16* src = buf_.get() + t.offset;
    if (quantized[t.id]) {
      float* a = amax.get() + si[t.id];
      amax_bf16(src, t.rows, t.cols, nullptr, a, nullptr);
      quantize_fp8(src, t.elems(), a, q.get() + f8[t.id], s.get() + std::size_t(si[t.id]) * kFp8ScaleStride,
                   nullptr);
    } else if (t.elems() > 0) {
      CALIB_CUDA(cudaMemcpy(compact.get() + b16[t.id], src, std::size_t(t.elems()) * sizeof(bf16),
                            cudaMemcpyDeviceToDevice));
    }
  }
  CALIB_CUDA(cudaDeviceSynchronize());
  buf_ = std::move(compact);  // the full bf16 buffer is freed with `compact`
  fp8_buf_ = std::move(q);
  scales_ = std::move(s);
  bf16_offset_ = std::move(b16);
  fp8_offset_ = std::move(f8);
  scale_index_ = std::move(si);
  format_ = WeightFormat::FP8;
}

const bf16* DeviceWeights::at(const TensorSlot& t) const {
  const std::int64_t o = bf16_offset_[t.id];
  if (o < 0) throw std::logic_error("DeviceWeights: tensor '" + t.name + "' is stored in E4M3, not bf16");
  return buf_.get() + o;
}

const fp8* DeviceWeights::fp8_at(const TensorSlot& t) const {
  const std::int64_t o = fp8_offset_[t.id];
  if (o < 0) throw std::logic_error("DeviceWeights: tensor '" + t.name + "' is not stored in E4M3");
  return fp8_buf_.get() + o;
}

const float* DeviceWeights::fp8_scale(const TensorSlot& t) const {
  const int i = scale_index_[t.id];
  if (i < 0) throw std::logic_error("DeviceWeights: tensor '" + t.name + "' has no fp8 scale");
  return scales_.get() + std::size_t(i) * kFp8ScaleStride;
}

std::vector<DeviceWeights::Fp8HostTensor> DeviceWeights::fp8_to_host() const {
  if (format_ != WeightFormat::FP8) throw std::logic_error("DeviceWeights::fp8_to_host: bf16 weights");
  std::vector<Fp8HostTensor> out(layout_.tensors().size());
  std::vector<float> s(scales_.size());
  CALIB_CUDA(cudaMemcpy(s.data(), scales_.get(), scales_.bytes(), cudaMemcpyDeviceToHost));
  for (const TensorSlot& t : layout_.tensors()) {
    if (fp8_offset_[t.id] < 0) continue;
    Fp8HostTensor& h = out[t.id];
    h.bits.resize(std::size_t(t.elems()));
    CALIB_CUDA(
        cudaMemcpy(h.bits.data(), fp8_buf_.get() + fp8_offset_[t.id], h.bits.size(), cudaMemcpyDeviceToHost));
    h.scale = s[std::size_t(scale_index_[t.id]) * kFp8ScaleStride];
  }
  return out;
}

DeviceWeights DeviceWeights::from_safetensors(const LlamaConfig& c, const std::vector<std::string>& files,
                                              WeightFormat format) {
  DeviceWeights w(c);
  std::set<std::string> loaded;
  for (const std::string& f : files) {
    SafetensorsFile st(f);
    for (const auto& [name, info] : st.tensors()) {
      auto p = w.layout_.hf_placement(name);
      if (!p) continue;
      if (info.elems() != p->rows * p->cols)
        throw Error(f + ": tensor '" + name + "' has " + std::to_string(info.elems()) +
                    " elements; the config needs " + std::to_string(p->rows) + " x " +
                    std::to_string(p->cols));
      const std::vector<std::uint16_t> data = st.read_bf16(name);
      CALIB_CUDA(cudaMemcpy(w.buf_.get() + p->slot->offset + p->row0 * p->cols, data.data(), data.size() * 2,
                            cudaMemcpyHostToDevice));
      loaded.insert(name);
    }
  }
  for (const std::string& n : w.layout_.hf_names())
    if (!loaded.count(n))
      throw Error("safetensors: tensor '" + n + "' is missing (files: " + join(files) + ")");
  if (format == WeightFormat::FP8) w.convert_to_fp8();
  return w;
}

std::vector<std::uint16_t> DeviceWeights::to_host() const {
  if (format_ != WeightFormat::BF16)
    throw std::logic_error("DeviceWeights::to_host: fp8 weights (fp8_to_host)");
  std::vector<std::uint16_t> h(buf_.size());
  CALIB_CUDA(cudaMemcpy(h.data(), buf_.get(), buf_.bytes(), cudaMemcpyDeviceToHost));
  return h;
}

HfModelDir read_hf_model_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path cfg = fs::path(dir) / "config.json";
  if (!fs::exists(cfg)) throw Error("weights folder '" + dir + "' has no config.json");
  HfModelDir d;
  d.config = llama_config_from_hf(read_json_file(cfg.string()), cfg.string());
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".safetensors") d.files.push_back(e.path().string());
  std::sort(d.files.begin(), d.files.end());
  if (d.files.empty()) throw Error("weights folder '" + dir + "' has no *.safetensors files");
  return d;
}

}  // namespace infraplan::engine
