#pragma once
// The widths a dense layer's saved tensors are counted in, on one rank: tokens of a micro-batch
// (÷ cp), the hidden width h, the query heads, the query / key-value widths and the FFN width (÷ tp),
// and the bytes of a residual-stream element (fp32 under autocast, else 16-bit). Shared by the
// eager and compiled activation counts (eager_memory.hpp, compiled_memory.hpp).
#include <algorithm>

#include "model/model_spec.hpp"
#include "strategies/training_config.hpp"

namespace infraplan::strat {

struct LayerWidths {
  bool amp = false;
  double tokens = 0, h = 0, heads = 0, q = 0, kv = 0, f = 0;
  double resid = 2;  ///< bytes of a residual-stream element
};

inline LayerWidths layer_widths(const model::ModelSpec& m, const TrainingConfig& t) {
  LayerWidths w;
  w.amp = t.precision == Precision::AmpBF16;
  w.tokens = double(t.micro_batch) * double(t.seq_len) / std::max(1, t.cp);
  const double tp = std::max(1, t.tp);
  w.h = double(m.hidden);
  w.heads = double(m.heads) / tp;
  w.q = w.heads * double(m.head_dim);
  w.kv = std::max(1.0, double(m.kv_heads) / tp) * double(m.head_dim);
  w.f = double(m.ffn_hidden) / tp;
  w.resid = w.amp ? 4 : 2;
  return w;
}

}  // namespace infraplan::strat
