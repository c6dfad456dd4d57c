#pragma once
// Workloads: synthetic request streams (arrival process × length distributions × shared
// prefixes × multi-turn sessions, one or more classes) and trace replay from CSV or JSONL.
// Seeded with the simulator's own RNG, so the same seed gives the same requests everywhere.
// Scenario keys: docs/serving.md.
#include <cstdint>
#include <string>
#include <vector>

#include "common/json_util.hpp"
#include "simulator/sequence.hpp"
#include "simulator/serving_random.hpp"

namespace infraplan::sim::serve {

/// A distribution of token counts.
struct LengthDist {
  enum class Kind { Fixed, Uniform, LogNormal, Zipf };
  Kind kind = Kind::Fixed;
  double mean = 128;           ///< fixed value or mean, tokens
  std::int64_t min = 1;        ///< lower clamp (uniform: lower bound), tokens
  std::int64_t max = 1 << 20;  ///< upper clamp (uniform: upper bound; zipf: largest value), tokens
  double sigma = 0.5;          ///< log-normal: σ of the underlying normal
  double alpha = 1.1;          ///< zipf exponent
  ZipfTable zipf;              ///< built by the parser for Kind::Zipf
  std::int64_t sample(Rng& rng) const;
};

/// How requests of a class are sent. Open loop (poisson, gamma, fixed): at times drawn in
/// advance, whatever the server does. Closed loop: `concurrency` clients each send a request
/// (a conversation, with sessions), wait for it to finish, think `think_time_s`, send the next —
/// as benchmark tools with a concurrency limit do (genai-perf, vLLM's benchmark_serving
/// --max-concurrency); see RequestRelease.
struct ArrivalSpec {
  enum class Kind { Poisson, Gamma, Fixed, Closed };
  Kind kind = Kind::Poisson;
  double rate_per_s = 0;    ///< mean arrival rate; 0 = every request at start_s (open loop)
  double cv = 1;            ///< gamma: coefficient of variation of the gaps (> 1 bursty)
  double start_s = 0;       ///< first arrival time, seconds
  int burst = 1;            ///< requests arriving together at each arrival instant (open loop)
  int concurrency = 1;      ///< closed loop: requests (conversations) in flight
  double think_time_s = 0;  ///< closed loop: a client's pause between a finish and its next request, seconds
  bool closed() const { return kind == Kind::Closed; }
};

/// One stream of similar requests.
struct WorkloadClass {
  std::string name = "default";
  std::int64_t requests = 100;
  ArrivalSpec arrival;
  LengthDist prompt, output;
  std::int64_t prefix_groups = 0;         ///< shared system prompts (0 = none)
  std::int64_t prefix_shared_tokens = 0;  ///< tokens of each shared prompt (added to the prompt)
  double prefix_zipf = 0;                 ///< > 0: groups drawn Zipf(alpha) instead of uniformly
  int session_turns = 1;                  ///< turns per conversation (> 1: multi-turn)
  double think_time_s = 0;                ///< between a turn's end and the next turn, seconds
  int priority = 0;                       ///< smaller = more urgent
  int priority_levels = 1;                ///< > 1: priority drawn uniformly in [0, levels)
  double acceptance = -1;                 ///< speculative acceptance for this class (< 0: engine's)
};

struct Slo {
  double ttft_ms = 0;  ///< 0 = no TTFT target
  double tpot_ms = 0;  ///< 0 = no TPOT target
};

struct WorkloadSpec {
  std::vector<WorkloadClass> classes;
  std::string trace_path;  ///< replay this file instead of generating
  std::uint64_t seed = 1;
  Slo slo;
  Json to_json() const;
};

/// Parses the scenario's "workload" object. `default_seed` is the scenario's seed; relative
/// trace paths resolve against `base_dir`.
WorkloadSpec workload_from_json(const Json& j, std::uint64_t default_seed, const std::string& base_dir = "");
/// The requests of a synthetic workload (or the trace), sorted by arrival, ids 0..n−1.
std::vector<Request> make_requests(const WorkloadSpec& w);
/// Reads a trace: CSV with a header row or JSONL, fields arrival_time_s, prompt_tokens,
/// output_tokens and optional prefix_group, shared_tokens, session_id, priority. Bad rows throw
/// infraplan::Error naming the file and line.
std::vector<Request> load_trace(const std::string& path);
std::vector<Request> parse_trace(const std::string& text, const std::string& origin, bool jsonl);

}  // namespace infraplan::sim::serve
