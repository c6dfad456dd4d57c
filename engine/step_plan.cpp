#include "engine/step_plan.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "simulator/sequence.hpp"

namespace infraplan::engine {

using sim::serve::BatchItem;
using sim::serve::Sequence;

int StepPlan::max_decode_context() const {
  int m = 0;
  for (auto c : decode_context) m = std::max(m, int(c));
  return m;
}

namespace {
void add_table(std::vector<std::int32_t>& dst, const Sequence& s, int width, std::int64_t context, int bs) {
  const std::int64_t need = (context + bs - 1) / bs;
  if (need > width || need > std::int64_t(s.block_table.size()))
    throw std::logic_error("step plan: sequence " + std::to_string(s.id()) + " needs " +
                           std::to_string(need) + " blocks; table holds " +
                           std::to_string(s.block_table.size()) + ", width " + std::to_string(width));
  const std::size_t at = dst.size();
  dst.resize(at + std::size_t(width), 0);
  std::copy(s.block_table.begin(), s.block_table.begin() + need, dst.begin() + std::ptrdiff_t(at));
}

void add_rows(StepPlan& p, const Sequence& s, const TokenStore& store, std::int64_t start, std::int64_t q) {
  for (std::int64_t i = 0; i < q; ++i) {
    const std::int64_t pos = start + i;
    p.tokens.push_back(store.token(s, pos));
    p.positions.push_back(std::int32_t(pos));
    const std::int32_t blk = s.block_table[std::size_t(pos / p.block_size)];
    p.slots.push_back(blk * p.block_size + std::int32_t(pos % p.block_size));
  }
}
}  // namespace

StepPlan build_step_plan(const sim::serve::BatchShape& b, const TokenStore& store, int block_size,
                         int max_blocks_per_seq) {
  StepPlan p;
  p.block_size = block_size;
  p.max_blocks_per_seq = max_blocks_per_seq;
  p.copies = b.block_copies;
  auto is_decode = [](const BatchItem& it) { return !it.prefill && it.q_tokens == 1; };
  for (const BatchItem& it : b.items) {
    if (!it.seq) throw std::logic_error("step plan: a batch item without its sequence");
    if (!it.prefill && it.q_tokens != 1)
      throw std::logic_error("step plan: speculative verify rows are not supported by the CUDA backend");
  }
  std::vector<int> sample_item;  // index of the item of each sample row
  for (const BatchItem& it : b.items) {
    if (!is_decode(it)) continue;
    const Sequence& s = *it.seq;
    add_rows(p, s, store, it.context - 1, 1);
    p.decode_context.push_back(std::int32_t(it.context));
    add_table(p.decode_tables, s, max_blocks_per_seq, it.context, block_size);
    if (it.samples) {
      p.sample_rows.push_back(p.num_decode);
      p.sampled.push_back(&s);
    }
    ++p.num_decode;
  }
  p.prefill_cu.push_back(0);
  for (const BatchItem& it : b.items) {
    if (is_decode(it)) continue;
    const Sequence& s = *it.seq;
    const std::int64_t start = it.context - it.q_tokens;
    add_rows(p, s, store, start, it.q_tokens);
    p.prefill_start.push_back(std::int32_t(start));
    p.prefill_kv.push_back(std::int32_t(it.context));
    p.prefill_cu.push_back(p.prefill_cu.back() + std::int32_t(it.q_tokens));
    add_table(p.prefill_tables, s, max_blocks_per_seq, it.context, block_size);
    p.max_prefill_q = std::max(p.max_prefill_q, int(it.q_tokens));
    if (it.samples) {
      p.sample_rows.push_back(p.num_decode + p.prefill_cu.back() - 1);
      p.sampled.push_back(&s);
    }
  }
  return p;
}

void pad_decode_plan(StepPlan& p, int rows, std::int32_t scratch_block) {
  if (p.num_prefill() != 0 || p.num_decode > rows)
    throw std::logic_error("pad_decode_plan: not a decode-only plan of at most " + std::to_string(rows) +
                           " rows");
  for (int r = p.num_decode; r < rows; ++r) {
    p.tokens.push_back(0);
    p.positions.push_back(0);
    p.slots.push_back(-1);
    p.decode_context.push_back(1);
    p.decode_tables.insert(p.decode_tables.end(), std::size_t(p.max_blocks_per_seq), scratch_block);
    p.sample_rows.push_back(r);
  }
  p.num_decode = rows;
}

}  // namespace infraplan::engine
