#include "simulator/sequence.hpp"

#include "simulator/serving_random.hpp"

namespace infraplan::sim::serve {

Sequence::Sequence(const Request& r, int block_size) : req_(r), block_size_(block_size) {}

std::uint64_t Sequence::block_hash(std::int64_t i) const {
  // Block content: shared content when the block lies inside the shared part, otherwise content
  // unique to this request. The chain makes a block's hash depend on all tokens before it.
  while (std::int64_t(hashes_.size()) <= i) {
    const std::int64_t b = std::int64_t(hashes_.size());
    const std::int64_t end = (b + 1) * block_size_;
    std::uint64_t content;
    if (req_.content_key != 0 && end <= req_.shared_tokens)
      content = req_.content_key;
    else if (req_.session_key != 0 && end <= req_.session_tokens)
      content = req_.session_key;
    else
      content = mix64(0xa5a5a5a5ULL ^ std::uint64_t(req_.id + 1)) | 1;
    const std::uint64_t prev = b == 0 ? 0x243f6a8885a308d3ULL : hashes_.back();
    std::uint64_t h = hash_combine(hash_combine(prev, content), std::uint64_t(b) + 1);
    if (h == 0) h = 1;  // 0 means "no hash" in the block manager
    hashes_.push_back(h);
  }
  return hashes_[std::size_t(i)];
}

}  // namespace infraplan::sim::serve
