#pragma once
// PrefixCache: the hash → block map of full KV blocks whose content is known, plus the LRU list
// of cached blocks that no sequence uses (ref count 0) and may be evicted. Hashes chain over all
// earlier blocks (Sequence::block_hash), so a lookup walks a sequence's blocks from the start and
// stops at the first miss — vLLM's automatic prefix caching.
#include <cstdint>
#include <vector>

namespace infraplan::sim::serve {

/// Hit statistics, in tokens.
struct PrefixCacheStats {
  std::int64_t queried_tokens = 0;  ///< prompt tokens looked up at admission
  std::int64_t hit_tokens = 0;      ///< of which served from the cache
  std::int64_t evictions = 0;       ///< cached blocks reused for new content
  double hit_rate() const { return queried_tokens > 0 ? double(hit_tokens) / double(queried_tokens) : 0; }
};

class PrefixCache {
 public:
  explicit PrefixCache(std::int32_t num_blocks);

  /// Block holding `hash`, or -1.
  std::int32_t find(std::uint64_t hash) const;
  /// Maps `hash` to `block` (the block must not be mapped yet). Returns false, changing nothing,
  /// when the hash already names another block.
  bool insert(std::uint64_t hash, std::int32_t block);
  /// Forgets `hash` (the block is being reused for other content).
  void erase(std::uint64_t hash);
  std::size_t size() const { return size_; }

  // LRU of evictable blocks (cached, ref count 0): least recently freed at the front.
  void push_evictable(std::int32_t block);
  void remove_evictable(std::int32_t block);
  /// Least recently used evictable block, or -1.
  std::int32_t front_evictable() const { return head_; }
  bool is_evictable(std::int32_t block) const { return in_lru_[std::size_t(block)] != 0; }
  std::int32_t evictable_count() const { return lru_size_; }

  PrefixCacheStats stats;

 private:
  // Open addressing with linear probing (key 0 = empty slot), at most half full: the map sees
  // one insert per filled block and one erase per eviction, so it must be cheap.
  std::size_t slot(std::uint64_t hash) const { return std::size_t((hash ^ (hash >> 29)) & mask_); }
  struct Slot {
    std::uint64_t key = 0;
    std::int32_t block = -1;
  };
  std::vector<Slot> slots_;
  std::uint64_t mask_ = 0;
  std::size_t size_ = 0;
  std::vector<std::int32_t> prev_, next_;
  std::vector<char> in_lru_;
  std::int32_t head_ = -1, tail_ = -1, lru_size_ = 0;
};

}  // namespace infraplan::sim::serve
