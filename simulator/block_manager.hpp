#pragma once
// BlockManager: paged KV cache of one replica. Fixed-size blocks (`block_size` tokens) with
// reference counts, a free list, the prefix cache (hash-chained full blocks, LRU eviction),
// copy-on-write when a shared block is about to be written, a watermark that keeps admissions
// from using the last free blocks, and a host swap pool.
//
// Asking is split from doing: can_allocate()/can_append()/match_prefix() only answer;
// allocate()/append()/free() mutate and assert their preconditions.
#include <cstdint>
#include <vector>

#include "simulator/block_copy.hpp"
#include "simulator/prefix_cache.hpp"
#include "simulator/sequence.hpp"

namespace infraplan::sim::serve {

/// Leading blocks of a sequence found in the prefix cache.
struct PrefixMatch {
  std::vector<std::int32_t> blocks;  ///< physical blocks, in order
  std::int64_t tokens = 0;           ///< tokens they let the sequence skip (≤ len − 1)
};

struct BlockManagerStats {
  std::int64_t cow_copies = 0;  ///< blocks copied because a shared block was about to be written
  std::int64_t swapped_out_blocks = 0;
  std::int64_t swapped_in_blocks = 0;
};

class BlockManager {
 public:
  /// `num_blocks` GPU blocks of `block_size` tokens; `watermark` is the fraction of blocks kept
  /// free at admission; `host_blocks` the swap space in blocks.
  BlockManager(std::int32_t num_blocks, int block_size, bool prefix_caching, double watermark = 0.01,
               std::int64_t host_blocks = 0);

  int block_size() const { return block_size_; }
  std::int32_t num_blocks() const { return std::int32_t(ref_.size()); }
  /// Blocks not referenced by any sequence (never-used or evictable cached ones).
  std::int32_t num_free_blocks() const { return std::int32_t(free_.size()) + cache_.evictable_count(); }
  std::int32_t num_used_blocks() const { return num_blocks() - num_free_blocks(); }
  double usage() const { return num_blocks() ? double(num_used_blocks()) / double(num_blocks()) : 0; }
  std::int64_t host_free_blocks() const { return host_blocks_ - host_used_; }
  bool prefix_caching() const { return caching_; }
  const PrefixCache& cache() const { return cache_; }
  const BlockManagerStats& stats() const { return stats_; }

  // ---- asking ----
  /// Cached leading full blocks of `s` (empty when caching is off). Leaves at least one token
  /// to compute so that the step can sample.
  PrefixMatch match_prefix(const Sequence& s) const;
  /// Could a waiting sequence be admitted holding `tokens` slots, reusing `m`, and still leave
  /// the watermark free, besides `reserved_blocks` blocks promised to running sequences?
  bool can_allocate(const Sequence& s, const PrefixMatch& m, std::int64_t tokens,
                    std::int64_t reserved_blocks = 0) const;
  /// Could a running sequence grow by `new_tokens` slots (copy-on-write included)?
  bool can_append(const Sequence& s, std::int64_t new_tokens) const;
  bool can_swap_out(const Sequence& s) const {
    return std::int64_t(s.block_table.size()) <= host_free_blocks();
  }
  bool can_swap_in(const Sequence& s) const;

  // ---- doing ----
  /// Admits `s`: shares `m`'s blocks, sets num_computed = m.tokens, allocates up to `tokens`
  /// slots, records prefix-hit statistics.
  void allocate(Sequence& s, const PrefixMatch& m, std::int64_t tokens);
  /// Grows `s` to hold num_computed + `new_tokens` slots; copies the block about to be written
  /// when another sequence shares it.
  void append(Sequence& s, std::int64_t new_tokens);
  /// Copy-on-write copies made by append()/allocate() since the last call, in order; a real
  /// backend must copy the KV of each `src` block into `dst` before the step runs.
  std::vector<BlockCopy> take_block_copies();
  /// Releases every block of `s`; cached blocks become evictable, the rest free.
  void free(Sequence& s);
  /// Registers the full computed blocks of `s` in the prefix cache. Blocks whose content is
  /// unique to `s` (past its shared part) can only ever be hit by `s` itself after a recompute
  /// preemption, so they are registered only when `all` is set (the scheduler does so before
  /// preempting). Hits are the same as registering everything; the unique blocks simply go to
  /// the free list instead of the LRU when freed, which is what LRU would evict first anyway
  /// once nothing can hit them.
  void register_computed(Sequence& s, bool all = false);
  /// Moves `s`'s KV to host memory; returns the blocks moved.
  std::int64_t swap_out(Sequence& s);
  /// Brings a swapped sequence back; returns the blocks moved.
  std::int64_t swap_in(Sequence& s);

  /// Checks every invariant against the live sequences (those holding blocks): reference
  /// counts equal table occurrences, every block is in exactly one state, the cache map is
  /// consistent. Throws std::logic_error on the first violation.
  void check_invariants(const std::vector<const Sequence*>& live) const;
  /// The part of check_invariants that concerns the live sequences' blocks, in O(their blocks)
  /// instead of O(num_blocks): ids in range, each block's reference count equal to its table
  /// occurrences, none of them free or evictable, and as many distinct blocks held as blocks in
  /// use — so no block is in use without a sequence holding it. Throws std::logic_error.
  void check_live_blocks(const std::vector<const Sequence*>& live) const;

 private:
  std::int32_t take_block();
  void release_block(std::int32_t b);
  bool needs_cow(const Sequence& s) const;

  int block_size_;
  bool caching_;
  std::int32_t watermark_blocks_;
  std::int64_t host_blocks_, host_used_ = 0;
  std::vector<std::int32_t> ref_;    // per block
  std::vector<std::uint64_t> hash_;  // per block, 0 = not cached
  std::vector<char> in_free_;        // per block: on the free list
  std::vector<std::int32_t> free_;   // never-cached free blocks (stack)
  PrefixCache cache_;
  BlockManagerStats stats_;
  std::vector<BlockCopy> copies_;  // copy-on-write copies not yet taken
  mutable std::vector<std::int32_t> live_uses_;  // check_live_blocks' per-block counts, all 0 between calls
};

}  // namespace infraplan::sim::serve
