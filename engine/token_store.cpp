#include "engine/token_store.hpp"

#include <stdexcept>
#include <string>

#include "common/error.hpp"
#include "simulator/serving_random.hpp"

namespace infraplan::engine {

using sim::serve::Sequence;

TokenStore::TokenStore(int vocab) : vocab_(vocab) {
  if (vocab < 2) throw Error("TokenStore: vocab must be at least 2");
}

std::int32_t TokenStore::synth(std::uint64_t key, std::int64_t pos) const {
  const std::uint64_t h = sim::serve::mix64(key ^ (std::uint64_t(pos + 1) * 0x9E3779B97F4A7C15ULL));
  return std::int32_t(1 + h % std::uint64_t(vocab_ - 1));
}

std::int32_t TokenStore::token(const Sequence& s, std::int64_t pos) const {
  const sim::serve::Request& r = s.request();
  if (pos < 0 || pos >= s.len())
    throw std::logic_error("TokenStore: position " + std::to_string(pos) + " outside sequence " +
                           std::to_string(r.id) + " of length " + std::to_string(s.len()));
  if (r.content_key != 0 && pos < r.shared_tokens) return synth(r.content_key, pos);
  if (pos >= r.prompt_tokens) {
    auto it = gen_.find(r.id);
    const std::size_t i = std::size_t(pos - r.prompt_tokens);
    if (it == gen_.end() || i >= it->second.size())
      throw std::logic_error("TokenStore: output token " + std::to_string(i) + " of sequence " +
                             std::to_string(r.id) + " was never recorded");
    return it->second[i];
  }
  if (r.session_key != 0 && pos < r.session_tokens) {
    auto it = session_.find(r.session_key);
    if (it != session_.end() && std::size_t(pos) < it->second.size() && it->second[std::size_t(pos)] >= 0)
      return it->second[std::size_t(pos)];
    return synth(r.session_key, pos);
  }
  return synth(sim::serve::mix64(0xa5a5a5a5ULL ^ std::uint64_t(r.id + 1)) | 1, pos);
}

void TokenStore::record(const Sequence& s, std::int32_t tok) {
  const sim::serve::Request& r = s.request();
  auto& g = gen_[r.id];
  if (std::int64_t(g.size()) != s.num_generated)
    throw std::logic_error("TokenStore: sequence " + std::to_string(r.id) + " has " +
                           std::to_string(s.num_generated) + " outputs but " + std::to_string(g.size()) +
                           " recorded");
  g.push_back(tok);
  const std::int64_t pos = s.len();
  if (r.session_key != 0 && pos < r.session_tokens) {
    auto& v = session_[r.session_key];
    if (std::int64_t(v.size()) <= pos) v.resize(std::size_t(pos + 1), -1);
    v[std::size_t(pos)] = tok;
  }
}

const std::vector<std::int32_t>& TokenStore::generated(std::int64_t id) const {
  auto it = gen_.find(id);
  return it == gen_.end() ? empty_ : it->second;
}

}  // namespace infraplan::engine
