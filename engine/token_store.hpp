#pragma once
// TokenStore: the token ids a real backend feeds its model. Workload requests carry no text,
// only which leading tokens equal other requests' tokens (simulator/sequence.hpp); the store
// turns that into ids consistent with the prefix cache's block hashes: a shared system prompt is
// the same ids for every request of its group, a conversation's tokens are the same ids in every
// turn (the previous turns' outputs included, as the model generated them), the rest is unique
// to the request. Generated tokens are kept per sequence until it is forgotten, so a sequence
// preempted by recompute recomputes exactly what it had. CUDA-free.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "simulator/sequence.hpp"

namespace infraplan::engine {

class TokenStore {
 public:
  /// Ids are drawn from [1, vocab).
  explicit TokenStore(int vocab);
  int vocab() const { return vocab_; }
  /// Id of token `pos` (0-based) of `s`; pos < s.len().
  std::int32_t token(const sim::serve::Sequence& s, std::int64_t pos) const;
  /// Records `tok`, sampled for `s` as its next output token (position s.len()).
  void record(const sim::serve::Sequence& s, std::int32_t tok);
  /// Output tokens of sequence `id` so far (empty when unknown).
  const std::vector<std::int32_t>& generated(std::int64_t id) const;
  /// Drops the generated tokens of `id` (its conversation's tokens stay for the next turn).
  void forget(std::int64_t id) { gen_.erase(id); }

 private:
  std::int32_t synth(std::uint64_t key, std::int64_t pos) const;

  int vocab_;
  std::unordered_map<std::int64_t, std::vector<std::int32_t>> gen_;
  std::unordered_map<std::uint64_t, std::vector<std::int32_t>>
      session_;  // session key → ids by position (−1 unknown)
  std::vector<std::int32_t> empty_;
};

}  // namespace infraplan::engine
