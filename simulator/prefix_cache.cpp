#include "simulator/prefix_cache.hpp"

#include <cassert>

namespace infraplan::sim::serve {

PrefixCache::PrefixCache(std::int32_t num_blocks)
    : prev_(std::size_t(num_blocks), -1),
      next_(std::size_t(num_blocks), -1),
      in_lru_(std::size_t(num_blocks), 0) {
  std::size_t cap = 16;
  while (cap < 2 * std::size_t(num_blocks) + 2) cap <<= 1;
  slots_.assign(cap, Slot{});
  mask_ = cap - 1;
}

std::int32_t PrefixCache::find(std::uint64_t hash) const {
  for (std::size_t i = slot(hash);; i = (i + 1) & mask_) {
    if (slots_[i].key == hash) return slots_[i].block;
    if (slots_[i].key == 0) return -1;
  }
}

bool PrefixCache::insert(std::uint64_t hash, std::int32_t block) {
  assert(hash != 0);
  std::size_t i = slot(hash);
  for (; slots_[i].key != 0; i = (i + 1) & mask_)
    if (slots_[i].key == hash) return false;
  slots_[i] = Slot{hash, block};
  ++size_;
  assert(2 * size_ <= slots_.size());
  return true;
}

void PrefixCache::erase(std::uint64_t hash) {
  std::size_t i = slot(hash);
  while (slots_[i].key != hash) {
    if (slots_[i].key == 0) return;
    i = (i + 1) & mask_;
  }
  // Backward-shift deletion keeps every probe chain unbroken without tombstones.
  std::size_t j = i;
  for (;;) {
    j = (j + 1) & mask_;
    if (slots_[j].key == 0) break;
    const std::size_t home = slot(slots_[j].key);
    // Move slots_[j].key into the hole at i unless its home lies cyclically in (i, j].
    const bool stays = (i <= j) ? (i < home && home <= j) : (i < home || home <= j);
    if (stays) continue;
    slots_[i] = slots_[j];
    i = j;
  }
  slots_[i] = Slot{};
  --size_;
}

void PrefixCache::push_evictable(std::int32_t b) {
  assert(!in_lru_[std::size_t(b)]);
  in_lru_[std::size_t(b)] = 1;
  prev_[std::size_t(b)] = tail_;
  next_[std::size_t(b)] = -1;
  if (tail_ >= 0)
    next_[std::size_t(tail_)] = b;
  else
    head_ = b;
  tail_ = b;
  ++lru_size_;
}

void PrefixCache::remove_evictable(std::int32_t b) {
  assert(in_lru_[std::size_t(b)]);
  const std::int32_t p = prev_[std::size_t(b)], n = next_[std::size_t(b)];
  if (p >= 0)
    next_[std::size_t(p)] = n;
  else
    head_ = n;
  if (n >= 0)
    prev_[std::size_t(n)] = p;
  else
    tail_ = p;
  in_lru_[std::size_t(b)] = 0;
  prev_[std::size_t(b)] = next_[std::size_t(b)] = -1;
  --lru_size_;
}

}  // namespace infraplan::sim::serve
