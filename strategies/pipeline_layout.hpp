#pragma once
// Where a model's layers sit on a pipeline: its model chunks ("virtual stages", in the order a
// micro-batch visits them), the layers each holds, and the pipeline rank and chunk slot that runs
// it. One description for the work graph, the closed-form estimate and the memory ledger.
//
//  - GPipe, 1F1B, ZB-H1: pp chunks, chunk k on rank k.
//  - Interleaved 1F1B: pp·v chunks, chunk k on rank k mod pp in slot k / pp (Megatron-LM).
//  - DualPipe (DeepSeek-V3 report, 2024): pp model stages; rank r holds stage r (slot 0) and stage
//    pp−1−r (slot 1). Micro-batches of the first half enter at rank 0 and visit stage k on rank k;
//    those of the second half enter at rank pp−1 and visit stage k on rank pp−1−k. Every stage is
//    held twice, so parameters are doubled (the report: "2×" parameters).
//
// Layers per chunk: training.pp_layers, when given, lists them per pipeline stage (pp entries) or,
// for the interleaved schedule, per chunk (pp·v entries, chunk k at index k). A per-stage count
// is spread over the stage's v chunks as evenly as possible, the chunks that hold the embedding
// (chunk 0) or the LM head (the last chunk) taking the smaller share; so Llama 3's
// pp_layers = [7, 8, …, 8, 7] with v = 8 leaves the first chunk with only the embedding and the
// last with only the LM head and loss (Llama 3 paper, §3.3.2). Without pp_layers the layers
// split evenly (the first stages take one more when pp does not divide them; the interleaved
// schedule requires an exact split). A chunk may be empty only if it holds the embedding or the
// LM head.
#include <cstdint>
#include <vector>

#include "model/model_spec.hpp"
#include "strategies/training_config.hpp"

namespace infraplan::strat {

/// Global layer range [first, first + count).
struct LayerRange {
  std::int64_t first = 0, count = 0;
};

class PipelineLayout {
 public:
  int stages() const { return p_; }                   ///< pipeline ranks (pp)
  int slots() const { return slots_; }                ///< chunks held per rank
  int chunks() const { return int(ranges_.size()); }  ///< model chunks a micro-batch visits
  bool dualpipe() const { return dual_; }
  /// Layers of model chunk k (0 ≤ k < chunks()).
  const LayerRange& layers(int k) const { return ranges_[std::size_t(k)]; }
  /// The model chunk that slot `slot` of rank `stage` holds.
  int chunk_at(int stage, int slot) const;
  /// Rank and slot running model chunk k for micro-batch `mb` of `micro_batches`.
  struct Place {
    int stage = 0, slot = 0;
  };
  Place place(int k, std::int64_t mb, std::int64_t micro_batches) const;
  /// The micro-batches of the second half travel from rank pp−1 to rank 0 (DualPipe only).
  bool reversed(std::int64_t mb, std::int64_t micro_batches) const { return dual_ && 2 * mb >= micro_batches; }
  bool holds_embedding(int k) const { return k == 0; }
  bool holds_head(int k) const { return k == chunks() - 1; }
  /// Position of global layer `layer` inside the model chunk that holds it (0 = the chunk's first).
  std::int64_t position_in_chunk(std::int64_t layer) const;
  /// Transformer layers held by rank `stage` over all its slots.
  std::int64_t layers_on_stage(int stage) const;
  /// Transformer layers of slot `slot` on rank `stage`.
  const LayerRange& slot_layers(int stage, int slot) const { return layers(chunk_at(stage, slot)); }

 private:
  friend PipelineLayout pipeline_layout(const model::ModelSpec& m, const TrainingConfig& t);
  int p_ = 1, slots_ = 1;
  bool dual_ = false;
  std::vector<LayerRange> ranges_;
};

/// The layout of a config (pp, schedule, pp_virtual_stages, pp_layers); throws infraplan::Error
/// naming training.pp_layers when its entries do not fit the model or the schedule.
PipelineLayout pipeline_layout(const model::ModelSpec& m, const TrainingConfig& t);

}  // namespace infraplan::strat
