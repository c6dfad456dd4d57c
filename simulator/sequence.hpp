#pragma once
// Request (what a client sends) and Sequence (the engine's state for one request): token counts,
// the paged-KV block table and the hash chain that identifies the content of each full block.
//
// Token accounting (the same as vLLM's): a sequence has len() = prompt + generated tokens; the KV
// of the first num_computed of them is in the cache. A prefill step computes up to len() −
// num_computed tokens; when num_computed reaches len() the step samples a token (generated + 1),
// so a decoding sequence always has exactly one token (the last sampled) left to compute.
#include <cstdint>
#include <string>
#include <vector>

namespace infraplan::sim::serve {

/// One request of a workload. Token contents are not simulated; what matters for the prefix
/// cache is which leading tokens equal other requests' tokens. Tokens [0, shared_tokens) are
/// the content named `content_key` (a shared system prompt); tokens [shared_tokens,
/// session_tokens) are the conversation named `session_key` (the next turn's prompt starts with
/// this turn's prompt and output); the rest is unique to the request.
struct Request {
  std::int64_t id = 0;              ///< index in arrival order, 0-based
  double arrival_s = 0;             ///< arrival time, seconds from the start
  std::int64_t prompt_tokens = 1;   ///< input length, tokens (≥ 1)
  std::int64_t output_tokens = 1;   ///< tokens to generate (≥ 1); the first comes with the prefill
  std::uint64_t content_key = 0;    ///< shared system prompt, 0 = none
  std::int64_t shared_tokens = 0;   ///< its length, tokens
  std::uint64_t session_key = 0;    ///< conversation, 0 = none
  std::int64_t session_tokens = 0;  ///< end of the conversation content (prompt + output for a turn), tokens
  int priority = 0;                 ///< smaller = more urgent (priority scheduling)
  int klass = 0;                    ///< workload class index (workload.classes), for per-class metrics
  std::int64_t session_id = -1;     ///< multi-turn conversation, -1 = none
  std::int64_t after_request = -1;  ///< this turn is sent `think_time_s` after that request finishes
  double think_time_s = 0;          ///< user think time before this turn, seconds
  double acceptance = -1;           ///< speculative acceptance rate for this request (< 0: engine default)
  /// Closed-loop pool (the workload class whose arrival type is "closed") this request's
  /// conversation occupies; -1 = open loop (sent at arrival_s, or after its previous turn).
  /// A closed-loop request's arrival_s is a placeholder until RequestRelease sends it.
  int closed_loop = -1;
};

enum class SeqStatus { Waiting, Running, Swapped, Finished };

class Sequence {
 public:
  Sequence(const Request& r, int block_size);

  const Request& request() const { return req_; }
  std::int64_t id() const { return req_.id; }
  std::int64_t prompt_tokens() const { return req_.prompt_tokens; }
  /// Tokens that exist: prompt + generated.
  std::int64_t len() const { return req_.prompt_tokens + num_generated; }
  /// Tokens whose KV still has to be computed before the next sample.
  std::int64_t tokens_to_compute() const { return len() - num_computed; }
  bool in_prefill() const { return num_computed < req_.prompt_tokens || tokens_to_compute() > 1; }
  bool done() const { return num_generated >= req_.output_tokens; }
  std::int64_t remaining_output() const { return req_.output_tokens - num_generated; }

  /// Blocks needed to hold `tokens` tokens.
  std::int64_t blocks_for(std::int64_t tokens) const { return (tokens + block_size_ - 1) / block_size_; }
  int block_size() const { return block_size_; }
  /// Hash of full block `i` (tokens [i·bs, (i+1)·bs)), chained over all earlier blocks.
  std::uint64_t block_hash(std::int64_t i) const;

  SeqStatus status = SeqStatus::Waiting;
  std::int64_t num_computed = 0;          ///< tokens with KV in cache (or on the host when swapped)
  std::int64_t num_generated = 0;         ///< output tokens sampled so far
  std::vector<std::int32_t> block_table;  ///< physical GPU block ids, in token order
  std::int64_t num_hashed_blocks = 0;     ///< leading blocks registered in the prefix cache
  std::int64_t shared_blocks = 0;         ///< leading blocks taken from the prefix cache (may be shared)
  std::int64_t swapped_blocks = 0;        ///< blocks held on the host while swapped out
  std::int64_t cached_tokens = 0;         ///< prompt tokens served from the prefix cache at admission
  int num_preemptions = 0;
  bool prefill_only = false;      ///< PD prefill instance: finish after the first token
  bool kv_remote = false;         ///< PD decode instance: KV arrives computed from a prefill instance
  double first_scheduled_s = -1;  ///< time of the first step that computed its tokens, seconds
  double first_token_s = -1;      ///< time the first output token was produced, seconds
  double last_token_s = -1;       ///< time of the latest output token, seconds
  double max_itl_s = 0;           ///< largest gap between consecutive output tokens, seconds

 private:
  Request req_;
  int block_size_;
  mutable std::vector<std::uint64_t> hashes_;  // memoised hash chain
};

}  // namespace infraplan::sim::serve
