#include "engine/device_weights.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

#include "engine/safetensors.hpp"
#include "common/error.hpp"
#include "common/json_util.hpp"

namespace infraplan::engine {

DeviceWeights::DeviceWeights(const LlamaConfig& c) : layout_(c), buf_(std::size_t(layout_.total_elems())) {}

DeviceWeights DeviceWeights::random(const LlamaConfig& c, std::uint64_t seed) {
  DeviceWeights w(c);
  for (const TensorSlot& t : w.layout_.tensors())
    init_weights(w.buf_.get() + t.offset, t.elems(), t.init, seed, t.id, nullptr);
  CALIB_CUDA(cudaDeviceSynchronize());
  return w;
}

DeviceWeights DeviceWeights::from_safetensors(const LlamaConfig& c, const std::vector<std::string>& files) {
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
  return w;
}

std::vector<std::uint16_t> DeviceWeights::to_host() const {
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
