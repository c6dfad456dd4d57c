#include "simulator/block_manager.hpp"

#include <cassert>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace infraplan::sim::serve {

BlockManager::BlockManager(std::int32_t num_blocks, int block_size, bool prefix_caching, double watermark,
                           std::int64_t host_blocks)
    : block_size_(block_size),
      caching_(prefix_caching),
      watermark_blocks_(std::int32_t(watermark * double(num_blocks))),
      host_blocks_(host_blocks),
      ref_(std::size_t(num_blocks), 0),
      hash_(std::size_t(num_blocks), 0),
      in_free_(std::size_t(num_blocks), 1),
      cache_(num_blocks) {
  free_.reserve(std::size_t(num_blocks));
  for (std::int32_t b = num_blocks - 1; b >= 0; --b) free_.push_back(b);  // block 0 handed out first
}

PrefixMatch BlockManager::match_prefix(const Sequence& s) const {
  PrefixMatch m;
  if (!caching_) return m;
  const std::int64_t full = s.len() / block_size_;
  for (std::int64_t i = 0; i < full; ++i) {
    const std::int32_t b = cache_.find(s.block_hash(i));
    if (b < 0) break;
    m.blocks.push_back(b);
  }
  m.tokens = std::min<std::int64_t>(std::int64_t(m.blocks.size()) * block_size_, s.len() - 1);
  return m;
}

bool BlockManager::can_allocate(const Sequence& s, const PrefixMatch& m, std::int64_t tokens,
                                std::int64_t reserved_blocks) const {
  std::int64_t need = s.blocks_for(tokens) - std::int64_t(m.blocks.size());
  if (need < 0) need = 0;
  for (auto b : m.blocks)
    if (ref_[std::size_t(b)] == 0) ++need;  // an evictable hit leaves the free pool
  // The last hit block is written (its last token is recomputed) and someone else holds it.
  if (!m.blocks.empty() && m.tokens < std::int64_t(m.blocks.size()) * block_size_ &&
      ref_[std::size_t(m.blocks.back())] > 0)
    ++need;
  return std::int64_t(num_free_blocks()) - reserved_blocks - need >= watermark_blocks_;
}

bool BlockManager::needs_cow(const Sequence& s) const {
  // Only blocks taken from the cache can be shared; the rest belong to this sequence alone.
  const std::int64_t i = s.num_computed / block_size_;
  return i < s.shared_blocks && i < std::int64_t(s.block_table.size()) &&
         ref_[std::size_t(s.block_table[std::size_t(i)])] > 1;
}

bool BlockManager::can_append(const Sequence& s, std::int64_t new_tokens) const {
  std::int64_t need = s.blocks_for(s.num_computed + new_tokens) - std::int64_t(s.block_table.size());
  if (need < 0) need = 0;
  if (needs_cow(s)) ++need;
  return need <= num_free_blocks();
}

bool BlockManager::can_swap_in(const Sequence& s) const {
  return s.swapped_blocks + 1 <= std::int64_t(num_free_blocks()) - watermark_blocks_;
}

std::int32_t BlockManager::take_block() {
  std::int32_t b;
  if (!free_.empty()) {
    b = free_.back();
    free_.pop_back();
    in_free_[std::size_t(b)] = 0;
  } else {
    b = cache_.front_evictable();
    if (b < 0)
      throw std::logic_error("BlockManager: out of blocks (a caller skipped can_allocate/can_append)");
    cache_.remove_evictable(b);
    cache_.erase(hash_[std::size_t(b)]);
    hash_[std::size_t(b)] = 0;
    ++cache_.stats.evictions;
  }
  assert(ref_[std::size_t(b)] == 0);
  ref_[std::size_t(b)] = 1;
  return b;
}

void BlockManager::release_block(std::int32_t b) {
  auto& r = ref_[std::size_t(b)];
  if (r <= 0) throw std::logic_error("BlockManager: double free of block " + std::to_string(b));
  if (--r > 0) return;
  if (caching_ && hash_[std::size_t(b)] != 0) {
    cache_.push_evictable(b);
  } else {
    in_free_[std::size_t(b)] = 1;
    free_.push_back(b);
  }
}

void BlockManager::allocate(Sequence& s, const PrefixMatch& m, std::int64_t tokens) {
  assert(s.block_table.empty());
  for (auto b : m.blocks) {
    if (ref_[std::size_t(b)] == 0) cache_.remove_evictable(b);
    ++ref_[std::size_t(b)];
    s.block_table.push_back(b);
  }
  s.num_computed = m.tokens;
  s.num_hashed_blocks = std::int64_t(m.blocks.size());
  s.shared_blocks = std::int64_t(m.blocks.size());
  if (!s.kv_remote) {  // a PD decode instance receives its KV; that is not a cache hit
    s.cached_tokens = std::min(m.tokens, s.prompt_tokens());
    cache_.stats.queried_tokens += s.prompt_tokens();
    cache_.stats.hit_tokens += s.cached_tokens;
  }
  append(s, tokens - s.num_computed);
}

void BlockManager::append(Sequence& s, std::int64_t new_tokens) {
  if (needs_cow(s)) {
    const std::size_t i = std::size_t(s.num_computed / block_size_);
    const std::int32_t old = s.block_table[i];
    s.block_table[i] = take_block();
    copies_.push_back({old, s.block_table[i]});
    release_block(old);
    ++stats_.cow_copies;
    s.shared_blocks = std::int64_t(i);
    if (std::int64_t(i) < s.num_hashed_blocks) s.num_hashed_blocks = std::int64_t(i);
  }
  const std::int64_t want = s.blocks_for(s.num_computed + new_tokens);
  while (std::int64_t(s.block_table.size()) < want) s.block_table.push_back(take_block());
}

std::vector<BlockCopy> BlockManager::take_block_copies() {
  std::vector<BlockCopy> out;
  out.swap(copies_);
  return out;
}

void BlockManager::free(Sequence& s) {
  for (auto it = s.block_table.rbegin(); it != s.block_table.rend(); ++it)
    release_block(*it);  // tail evicted first
  s.block_table.clear();
  s.num_hashed_blocks = 0;
  s.shared_blocks = 0;
}

void BlockManager::register_computed(Sequence& s, bool all) {
  if (!caching_) return;
  std::int64_t full =
      std::min<std::int64_t>(s.num_computed / block_size_, std::int64_t(s.block_table.size()));
  if (!all) {
    const Request& r = s.request();
    const std::int64_t shareable =
        std::max(r.content_key != 0 ? r.shared_tokens : 0, r.session_key != 0 ? r.session_tokens : 0);
    full = std::min<std::int64_t>(full, shareable / block_size_);
  }
  for (std::int64_t i = s.num_hashed_blocks; i < full; ++i) {
    const std::int32_t b = s.block_table[std::size_t(i)];
    if (hash_[std::size_t(b)] != 0) continue;
    const std::uint64_t h = s.block_hash(i);
    if (cache_.insert(h, b)) hash_[std::size_t(b)] = h;
  }
  if (full > s.num_hashed_blocks) s.num_hashed_blocks = full;
}

std::int64_t BlockManager::swap_out(Sequence& s) {
  const std::int64_t n = std::int64_t(s.block_table.size());
  assert(n <= host_free_blocks());
  host_used_ += n;
  free(s);
  s.swapped_blocks = n;
  stats_.swapped_out_blocks += n;
  return n;
}

std::int64_t BlockManager::swap_in(Sequence& s) {
  const std::int64_t n = s.swapped_blocks;
  assert(s.block_table.empty() && n <= num_free_blocks());
  for (std::int64_t i = 0; i < n; ++i) s.block_table.push_back(take_block());
  host_used_ -= n;
  s.swapped_blocks = 0;
  stats_.swapped_in_blocks += n;
  return n;
}

void BlockManager::check_invariants(const std::vector<const Sequence*>& live) const {
  auto fail = [](const std::string& m) { throw std::logic_error("BlockManager invariant: " + m); };
  std::vector<std::int32_t> uses(ref_.size(), 0);
  for (const Sequence* s : live)
    for (auto b : s->block_table) {
      if (b < 0 || std::size_t(b) >= ref_.size()) fail("block id out of range");
      ++uses[std::size_t(b)];
    }
  std::int32_t free_count = 0, lru_count = 0;
  for (std::size_t b = 0; b < ref_.size(); ++b) {
    if (ref_[b] != uses[b])
      fail("block " + std::to_string(b) + " ref " + std::to_string(ref_[b]) + " != uses " +
           std::to_string(uses[b]));
    const bool lru = cache_.is_evictable(std::int32_t(b));
    const bool fr = in_free_[b] != 0;
    if (ref_[b] > 0 && (lru || fr)) fail("block " + std::to_string(b) + " in use and free");
    if (ref_[b] == 0 && lru == fr)
      fail("block " + std::to_string(b) + " unused but not in exactly one free list");
    if (lru && hash_[b] == 0) fail("evictable block without hash");
    if (hash_[b] != 0 && cache_.find(hash_[b]) != std::int32_t(b))
      fail("hash map does not point back to block");
    free_count += fr;
    lru_count += lru;
  }
  if (free_count != std::int32_t(free_.size())) fail("free list size mismatch");
  if (lru_count != cache_.evictable_count()) fail("LRU size mismatch");
  if (host_used_ < 0 || host_used_ > host_blocks_) fail("host pool out of range");
}

void BlockManager::check_live_blocks(const std::vector<const Sequence*>& live) const {
  auto fail = [](const std::string& m) { throw std::logic_error("BlockManager invariant: " + m); };
  live_uses_.resize(ref_.size(), 0);
  std::vector<std::int32_t> held;  // distinct blocks, in first-seen order
  for (const Sequence* s : live)
    for (auto b : s->block_table) {
      if (b < 0 || std::size_t(b) >= ref_.size()) {
        for (auto h : held) live_uses_[std::size_t(h)] = 0;
        fail("block id out of range");
      }
      if (live_uses_[std::size_t(b)]++ == 0) held.push_back(b);
    }
  std::string problem;
  for (auto b : held) {
    const std::size_t i = std::size_t(b);
    if (problem.empty()) {
      if (ref_[i] != live_uses_[i])
        problem = "block " + std::to_string(b) + " ref " + std::to_string(ref_[i]) + " != uses " +
                  std::to_string(live_uses_[i]);
      else if (in_free_[i] != 0 || cache_.is_evictable(b))
        problem = "block " + std::to_string(b) + " in use and free";
    }
    live_uses_[i] = 0;
  }
  if (!problem.empty()) fail(problem);
  if (std::int64_t(held.size()) != std::int64_t(num_used_blocks()))
    fail(std::to_string(num_used_blocks()) + " blocks in use but the live sequences hold " +
         std::to_string(held.size()));
  if (host_used_ < 0 || host_used_ > host_blocks_) fail("host pool out of range");
}

}  // namespace infraplan::sim::serve
