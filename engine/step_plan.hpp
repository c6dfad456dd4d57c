#pragma once
// StepPlan: one engine step as the GPU model reads it, built on the host from the scheduler's
// batch. Token rows are ordered decodes first (one row each, for the paged decode kernel), then
// prefill chunks (consecutive rows each, for the paged prefill kernel); each row carries its
// token id, its position and the KV-cache slot it writes (block · block_size + offset). All
// arrays are int32, ready to be packed into one upload. CUDA-free.
#include <cstdint>
#include <vector>

#include "engine/token_store.hpp"
#include "simulator/execution_backend.hpp"

namespace infraplan::engine {

struct StepPlan {
  int block_size = 16;
  int max_blocks_per_seq = 0;                 ///< width of a block-table row
  std::vector<std::int32_t> tokens;           ///< [T] token ids
  std::vector<std::int32_t> positions;        ///< [T] positions in their sequences
  std::vector<std::int32_t> slots;            ///< [T] KV slots written (−1: none, padding)
  int num_decode = 0;                         ///< D: rows [0, D) are decodes
  std::vector<std::int32_t> decode_context;   ///< [D] KV length after the step, tokens
  std::vector<std::int32_t> decode_tables;    ///< [D × max_blocks_per_seq] physical blocks
  std::vector<std::int32_t> prefill_cu;       ///< [P + 1] chunk starts, relative to row D
  std::vector<std::int32_t> prefill_start;    ///< [P] position of each chunk's first token
  std::vector<std::int32_t> prefill_kv;       ///< [P] KV length after the step (start + chunk)
  std::vector<std::int32_t> prefill_tables;   ///< [P × max_blocks_per_seq]
  int max_prefill_q = 0;                      ///< longest chunk, tokens
  std::vector<std::int32_t> sample_rows;      ///< [S] rows whose logits are sampled
  std::vector<sim::serve::BlockCopy> copies;  ///< KV blocks to copy before the step
  /// The sequence of each sample row (same order), for recording the sampled tokens.
  std::vector<const sim::serve::Sequence*> sampled;

  int rows() const { return int(tokens.size()); }
  int num_prefill() const { return int(prefill_start.size()); }
  int max_decode_context() const;
};

/// Builds the plan of `b` (every item must carry its sequence). Throws std::logic_error on a
/// batch the model cannot run (speculative verify rows, a sequence longer than the table).
StepPlan build_step_plan(const sim::serve::BatchShape& b, const TokenStore& tokens, int block_size,
                         int max_blocks_per_seq);

/// Pads a decode-only plan to `rows` decodes (a captured CUDA-graph size): padding rows read
/// one token of block `scratch_block`, write nothing and are sampled (results ignored).
void pad_decode_plan(StepPlan& p, int rows, std::int32_t scratch_block);

}  // namespace infraplan::engine
