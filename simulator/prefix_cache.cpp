#include "simulator/prefix_cache.hpp"

#include <cassert>

namespace infraplan::sim::serve {

PrefixCache::PrefixCache(std::int32_t num_blocks)
    : prev_(std::size_t(num_blocks), -1), next_(std::size_t(num_blocks), -1), in_lru_(std::size_t(num_blocks), 0) {}

std::int32_t PrefixCache::find(std::uint64_t hash) const {
  auto it = map_.find(hash);
  return it == map_.end() ? -1 : it->second;
}

bool PrefixCache::insert(std::uint64_t hash, std::int32_t block) { return map_.emplace(hash, block).second; }

void PrefixCache::erase(std::uint64_t hash) { map_.erase(hash); }

void PrefixCache::push_evictable(std::int32_t b) {
  assert(!in_lru_[std::size_t(b)]);
  in_lru_[std::size_t(b)] = 1;
  prev_[std::size_t(b)] = tail_;
  next_[std::size_t(b)] = -1;
  if (tail_ >= 0) next_[std::size_t(tail_)] = b;
  else head_ = b;
  tail_ = b;
  ++lru_size_;
}

void PrefixCache::remove_evictable(std::int32_t b) {
  assert(in_lru_[std::size_t(b)]);
  const std::int32_t p = prev_[std::size_t(b)], n = next_[std::size_t(b)];
  if (p >= 0) next_[std::size_t(p)] = n;
  else head_ = n;
  if (n >= 0) prev_[std::size_t(n)] = p;
  else tail_ = p;
  in_lru_[std::size_t(b)] = 0;
  prev_[std::size_t(b)] = next_[std::size_t(b)] = -1;
  --lru_size_;
}

}  // namespace infraplan::sim::serve
