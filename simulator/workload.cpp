#include "simulator/workload.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>

#include "common/input_file.hpp"
#include "common/limits.hpp"
#include "common/error.hpp"

namespace infraplan::sim::serve {

namespace L = limits;

std::int64_t LengthDist::sample(Rng& rng) const {
  double v = mean;
  switch (kind) {
    case Kind::Fixed:
      v = mean;
      break;
    case Kind::Uniform:
      return rng.uniform_int(min, max);
    case Kind::LogNormal:
      v = std::exp(std::log(mean) - 0.5 * sigma * sigma + sigma * rng.normal());
      break;
    case Kind::Zipf:
      v = double(zipf.sample(rng));
      break;
  }
  // Clamp as a double first: exp() may overflow to inf, and rounding that to an integer is undefined.
  const double lo = double(std::max<std::int64_t>(min, 1)), hi = double(max);
  if (!(v >= lo)) v = lo;
  if (!(v <= hi)) v = hi;
  return std::int64_t(std::llround(v));
}

namespace {

const char* length_kind_name(LengthDist::Kind k) {
  switch (k) {
    case LengthDist::Kind::Fixed:
      return "fixed";
    case LengthDist::Kind::Uniform:
      return "uniform";
    case LengthDist::Kind::LogNormal:
      return "lognormal";
    case LengthDist::Kind::Zipf:
      return "zipf";
  }
  return "?";
}

LengthDist parse_length(const Json& j, const std::string& path, double fallback) {
  LengthDist d;
  d.mean = fallback;
  d.max = L::kMaxSeqTokens;
  if (j.is_number()) {
    d.mean = check_real(j.get<double>(), path, 1, double(L::kMaxSeqTokens));
    return d;
  }
  JsonObject o(j, path);
  o.reject_unknown({"dist", "mean", "min", "max", "sigma", "alpha"});
  const std::string k = o.get_choice("dist", "fixed", {"fixed", "uniform", "lognormal", "zipf"});
  d.min = o.get_int_min("min", 1, 1, L::kMaxSeqTokens);
  d.max = o.get_int_min("max", k == "zipf" ? L::kMaxZipfRanks : L::kMaxSeqTokens, d.min,
                        k == "zipf" ? L::kMaxZipfRanks : L::kMaxSeqTokens);
  d.mean = o.get_number_min("mean", k == "uniform" ? 0.5 * double(d.min + d.max) : fallback, 1,
                            double(L::kMaxSeqTokens));
  d.sigma = o.get_number_min("sigma", 0.5, 0, 10);
  d.alpha = o.get_number_min("alpha", 1.1, 0, 100);
  if (k == "fixed") d.kind = LengthDist::Kind::Fixed;
  if (k == "uniform") {
    d.kind = LengthDist::Kind::Uniform;
    if (!o.has("min") || !o.has("max")) throw Error(path + ": dist 'uniform' needs min and max (tokens)");
  }
  if (k == "lognormal") d.kind = LengthDist::Kind::LogNormal;
  if (k == "zipf") {
    d.kind = LengthDist::Kind::Zipf;
    if (!o.has("max")) throw Error(path + ": dist 'zipf' needs max (the largest length, tokens)");
    d.zipf = ZipfTable(d.max, d.alpha);
  }
  return d;
}

Json length_json(const LengthDist& d) {
  return {{"dist", length_kind_name(d.kind)},
          {"mean", d.mean},
          {"min", d.min},
          {"max", d.max},
          {"sigma", d.sigma},
          {"alpha", d.alpha}};
}

const std::vector<std::string> kClassKeys = {"name",          "requests",      "arrival",
                                             "prompt_tokens", "output_tokens", "prefix",
                                             "sessions",      "priority",      "acceptance"};

WorkloadClass parse_class(const JsonObject& o, const std::string& default_name) {
  WorkloadClass c;
  c.name = o.get_string("name", default_name);
  c.requests = o.get_int_min("requests", 100, 1, L::kMaxRequests);
  if (auto a = o.opt_object("arrival")) {
    a->reject_unknown({"type", "rate_per_s", "cv", "start_s", "burst", "concurrency", "think_time_s"});
    const std::string t = a->get_choice("type", "poisson", {"poisson", "gamma", "fixed", "closed"});
    c.arrival.kind = t == "poisson" ? ArrivalSpec::Kind::Poisson
                     : t == "gamma" ? ArrivalSpec::Kind::Gamma
                     : t == "fixed" ? ArrivalSpec::Kind::Fixed
                                    : ArrivalSpec::Kind::Closed;
    c.arrival.start_s = a->get_number_min("start_s", 0, 0, L::kMaxArrivalSeconds);
    if (c.arrival.closed()) {
      for (const char* open_only : {"rate_per_s", "cv", "burst"})
        if (a->has(open_only))
          throw Error(a->field(open_only) +
                      " does not apply to a closed loop (type 'closed' sends the next request when one "
                      "finishes); set concurrency (requests in flight) and optionally think_time_s");
      if (!a->has("concurrency"))
        throw Error(a->field("concurrency") +
                    " is required for type 'closed' (requests in flight, an integer >= 1)");
      c.arrival.concurrency = int(a->get_int_min("concurrency", 1, 1, L::kMaxRequests));
      c.arrival.think_time_s = a->get_number_min("think_time_s", 0, 0, L::kMaxArrivalSeconds);
    } else {
      for (const char* closed_only : {"concurrency", "think_time_s"})
        if (a->has(closed_only))
          throw Error(a->field(closed_only) + " applies only to arrival type 'closed' (this class is '" + t +
                      "'); use rate_per_s for an open loop");
      c.arrival.burst = int(a->get_int_min("burst", 1, 1, L::kMaxBurst));
      c.arrival.rate_per_s = a->get_number_min("rate_per_s", 0, 0, L::kMaxRatePerSecond);
      c.arrival.cv = a->get_number_min("cv", 1, 0.01, 100);
    }
  }
  c.prompt = parse_length(o.raw().value("prompt_tokens", Json(512)), o.field("prompt_tokens"), 512);
  c.output = parse_length(o.raw().value("output_tokens", Json(128)), o.field("output_tokens"), 128);
  if (auto p = o.opt_object("prefix")) {
    p->reject_unknown({"groups", "shared_tokens", "zipf"});
    c.prefix_groups = p->get_int_min("groups", 1, 0, L::kMaxPrefixGroups);
    c.prefix_shared_tokens = p->get_int_min("shared_tokens", 0, 0, L::kMaxSeqTokens);
    c.prefix_zipf = p->get_number_min("zipf", 0, 0, 100);
    if (c.prefix_zipf > 0 && c.prefix_groups > L::kMaxZipfRanks)
      throw Error(p->field("groups") + "=" + std::to_string(c.prefix_groups) +
                  " is invalid with zipf: must be an integer in " + range_text(0, L::kMaxZipfRanks));
  }
  if (auto s = o.opt_object("sessions")) {
    s->reject_unknown({"turns", "think_time_s"});
    c.session_turns = int(s->get_int_min("turns", 1, 1, L::kMaxSessionTurns));
    c.think_time_s = s->get_number_min("think_time_s", 0, 0, L::kMaxArrivalSeconds);
  }
  if (o.has("priority")) {
    if (o.raw().at("priority").is_object()) {
      JsonObject p(o.raw().at("priority"), o.field("priority"));
      p.reject_unknown({"levels"});
      c.priority_levels = int(p.get_int_min("levels", 1, 1, L::kMaxPriorityLevels));
    } else {
      c.priority = int(o.get_int_min("priority", 0, -L::kMaxPriority, L::kMaxPriority));
    }
  }
  c.acceptance = o.has("acceptance") ? o.get_number_min("acceptance", -1, 0, 1) : -1;
  return c;
}

}  // namespace

WorkloadSpec workload_from_json(const Json& j, std::uint64_t default_seed, const std::string& base_dir) {
  WorkloadSpec w;
  w.seed = default_seed;
  if (j.is_null()) {
    w.classes.push_back(WorkloadClass{});
    return w;
  }
  JsonObject o(j, "workload");
  std::vector<std::string> known = kClassKeys;
  known.insert(known.end(), {"classes", "trace", "seed", "slo"});
  o.reject_unknown(known);
  w.seed = std::uint64_t(o.get_int_min("seed", std::int64_t(default_seed), 0, kInt64Max));
  if (auto s = o.opt_object("slo")) {
    s->reject_unknown({"ttft_ms", "tpot_ms"});
    w.slo.ttft_ms = s->get_number_min("ttft_ms", 0, 0, L::kMaxSloMs);
    w.slo.tpot_ms = s->get_number_min("tpot_ms", 0, 0, L::kMaxSloMs);
  }
  if (auto t = o.opt_string("trace")) {
    // A trace replaces the synthetic workload: keys that describe one would be silently ignored.
    for (const auto& k : known)
      if (k != "trace" && k != "seed" && k != "slo" && o.has(k))
        throw Error(o.field(k) + " cannot be combined with workload.trace (a trace gives every request); "
                    "remove one of them");
    std::filesystem::path p(*t);
    if (p.is_relative() && !base_dir.empty() && std::filesystem::exists(std::filesystem::path(base_dir) / p))
      p = std::filesystem::path(base_dir) / p;
    w.trace_path = p.string();
    return w;
  }
  if (o.has("classes")) {
    for (const auto& k : kClassKeys)
      if (o.has(k))
        throw Error(o.field(k) + " cannot be combined with workload.classes (each class gives its own); move it "
                    "into the classes");
    const Json& cs = j.at("classes");
    if (!cs.is_array() || cs.empty())
      throw Error("workload.classes: expected a non-empty array of class objects");
    for (std::size_t i = 0; i < cs.size(); ++i) {
      JsonObject c(cs[i], "workload.classes[" + std::to_string(i) + "]");
      c.reject_unknown(kClassKeys);
      w.classes.push_back(parse_class(c, "class" + std::to_string(i)));
    }
  } else {
    w.classes.push_back(parse_class(o, "default"));
  }
  std::int64_t total = 0;
  for (const auto& c : w.classes) total += c.requests;
  if (total > L::kMaxRequests)
    throw Error("workload: " + std::to_string(total) + " requests over all classes is beyond the limit of " +
                std::to_string(L::kMaxRequests));
  return w;
}

Json WorkloadSpec::to_json() const {
  Json j = {{"seed", seed}, {"slo", {{"ttft_ms", slo.ttft_ms}, {"tpot_ms", slo.tpot_ms}}}};
  if (!trace_path.empty()) {
    j["trace"] = trace_path;
    return j;
  }
  Json cs = Json::array();
  for (const auto& c : classes) {
    const char* at = c.arrival.kind == ArrivalSpec::Kind::Poisson ? "poisson"
                     : c.arrival.kind == ArrivalSpec::Kind::Gamma ? "gamma"
                     : c.arrival.kind == ArrivalSpec::Kind::Fixed ? "fixed"
                                                                  : "closed";
    Json arrival = {{"type", at}, {"start_s", c.arrival.start_s}};
    if (c.arrival.closed()) {
      arrival["concurrency"] = c.arrival.concurrency;
      arrival["think_time_s"] = c.arrival.think_time_s;
    } else {
      arrival["rate_per_s"] = c.arrival.rate_per_s;
      arrival["cv"] = c.arrival.cv;
      arrival["burst"] = c.arrival.burst;
    }
    cs.push_back(
        {{"name", c.name},
         {"requests", c.requests},
         {"arrival", arrival},
         {"prompt_tokens", length_json(c.prompt)},
         {"output_tokens", length_json(c.output)},
         {"prefix",
          {{"groups", c.prefix_groups}, {"shared_tokens", c.prefix_shared_tokens}, {"zipf", c.prefix_zipf}}},
         {"sessions", {{"turns", c.session_turns}, {"think_time_s", c.think_time_s}}},
         {"priority", c.priority},
         {"acceptance", c.acceptance}});
  }
  j["classes"] = cs;
  return j;
}

std::vector<Request> make_requests(const WorkloadSpec& w) {
  if (!w.trace_path.empty()) return load_trace(w.trace_path);
  std::vector<Request> out;
  for (std::size_t ci = 0; ci < w.classes.size(); ++ci) {
    const WorkloadClass& c = w.classes[ci];
    Rng arr = Rng::derive(w.seed, 3 * ci + 1), len = Rng::derive(w.seed, 3 * ci + 2),
        grp = Rng::derive(w.seed, 3 * ci + 3);
    ZipfTable gz;
    if (c.prefix_zipf > 0 && c.prefix_groups > 0) gz = ZipfTable(c.prefix_groups, c.prefix_zipf);
    const std::int64_t turns = c.session_turns;
    const std::int64_t sessions = (c.requests + turns - 1) / turns;
    double t = c.arrival.start_s;
    std::int64_t made = 0;
    for (std::int64_t s = 0; s < sessions && made < c.requests; ++s) {
      if (s > 0 && s % c.arrival.burst == 0 && c.arrival.rate_per_s > 0 && !c.arrival.closed()) {
        const double mean = double(c.arrival.burst) / c.arrival.rate_per_s;  // gap between arrival instants
        switch (c.arrival.kind) {
          case ArrivalSpec::Kind::Poisson:
            t += arr.exponential(mean);
            break;
          case ArrivalSpec::Kind::Fixed:
            t += mean;
            break;
          case ArrivalSpec::Kind::Closed:  // sent by RequestRelease, not at a time drawn here
            break;
          case ArrivalSpec::Kind::Gamma: {
            const double shape = 1.0 / (c.arrival.cv * c.arrival.cv);
            t += arr.gamma(shape, mean / shape);
            break;
          }
        }
      }
      if (!(t <= L::kMaxArrivalSeconds))
        throw Error("workload" + (w.classes.size() > 1 ? ".classes[" + std::to_string(ci) + "]" : std::string()) +
                    ": request " + std::to_string(made) + " would arrive at " + number_text(t) +
                    " s, beyond the limit of " + number_text(L::kMaxArrivalSeconds) +
                    " s; raise arrival.rate_per_s or lower start_s or requests");
      std::uint64_t key = 0;
      std::int64_t shared = 0;
      if (c.prefix_groups > 0) {
        const std::int64_t g =
            c.prefix_zipf > 0 ? gz.sample(grp) - 1 : grp.uniform_int(0, c.prefix_groups - 1);
        key = mix64((std::uint64_t(ci) << 40) ^ std::uint64_t(g + 1) ^ 0x5157ULL);
        shared = c.prefix_shared_tokens;
      }
      const int prio = c.priority_levels > 1 ? int(grp.uniform_int(0, c.priority_levels - 1)) : c.priority;
      std::int64_t history = 0;
      for (std::int64_t turn = 0; turn < turns && made < c.requests; ++turn, ++made) {
        Request r;
        r.arrival_s = t;  // closed loop: a placeholder, RequestRelease sends it
        r.klass = int(ci);
        r.closed_loop = c.arrival.closed() ? int(ci) : -1;
        r.priority = prio;
        r.acceptance = c.acceptance;
        const std::int64_t own = c.prompt.sample(len);
        r.output_tokens = c.output.sample(len);
        if (turns > 1) {
          r.session_id = std::int64_t(ci) * 1000000000LL + s;
          r.prompt_tokens = (turn == 0 ? shared : history) + own;
          r.content_key = key;  // every turn starts with the session's system prompt (if any)
          r.shared_tokens = shared;
          r.session_key = mix64(0xC0FFEEULL ^ (std::uint64_t(r.session_id) + 1));
          r.session_tokens = r.prompt_tokens + r.output_tokens;  // the next turn starts with all of this turn
          if (turn > 0) {
            r.after_request =
                -2 - std::int64_t(out.size() - 1);  // placeholder: previous request, fixed below
            r.think_time_s = c.think_time_s;
          }
          history = r.prompt_tokens + r.output_tokens;
        } else {
          r.prompt_tokens = shared + own;
          r.content_key = key;
          r.shared_tokens = shared;
        }
        out.push_back(r);
      }
    }
  }
  // Sort by arrival (stable: generation order breaks ties), then fix ids and turn links.
  std::vector<std::size_t> order(out.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return out[a].arrival_s < out[b].arrival_s; });
  std::vector<std::int64_t> new_id(out.size());
  for (std::size_t i = 0; i < order.size(); ++i) new_id[order[i]] = std::int64_t(i);
  std::vector<Request> sorted;
  sorted.reserve(out.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    Request r = out[order[i]];
    r.id = std::int64_t(i);
    if (r.after_request <= -2) r.after_request = new_id[std::size_t(-(r.after_request + 2))];
    sorted.push_back(r);
  }
  return sorted;
}

std::vector<Request> load_trace(const std::string& path) {
  const std::string text = read_input_file(path, kMaxTraceFileBytes, "trace");
  const bool jsonl = path.size() >= 6 &&
                     (path.substr(path.size() - 6) == ".jsonl" || path.substr(path.size() - 5) == ".json");
  return parse_trace(text, path, jsonl);
}

namespace {

/// The columns a trace may have, with their ranges; anything else is refused (a misspelt
/// "promt_group" must not silently become a request without a prefix group).
struct TraceColumn {
  const char* name;
  bool integer;
  double min, max;
};
const TraceColumn kTraceColumns[] = {
    {"arrival_time_s", false, 0, L::kMaxArrivalSeconds},
    {"prompt_tokens", true, 1, double(L::kMaxSeqTokens)},
    {"output_tokens", true, 1, double(L::kMaxSeqTokens)},
    {"prefix_group", true, 0, 1e15},
    {"shared_tokens", true, 0, double(L::kMaxSeqTokens)},
    {"session_id", true, 0, 1e15},
    {"priority", true, double(-L::kMaxPriority), double(L::kMaxPriority)},
};

std::vector<std::string> trace_column_names() {
  std::vector<std::string> v;
  for (const auto& c : kTraceColumns) v.emplace_back(c.name);
  return v;
}

const TraceColumn* find_column(const std::string& name) {
  for (const auto& c : kTraceColumns)
    if (name == c.name) return &c;
  return nullptr;
}

}  // namespace

std::vector<Request> parse_trace(const std::string& text, const std::string& origin, bool jsonl) {
  std::vector<Request> out;
  std::size_t pos = 0;
  std::string line;
  std::vector<std::string> header;
  std::vector<const TraceColumn*> header_cols;
  std::int64_t lineno = 0;
  auto bad = [&](const std::string& why) { throw Error(origin + ":" + std::to_string(lineno) + ": " + why); };
  auto column = [&](const std::string& name) {
    const TraceColumn* c = find_column(name);
    if (!c) bad(unknown_name_message("trace column", name.substr(0, 64), trace_column_names()));
    return c;
  };
  // A cell's value, checked against its column's range (integers must be whole numbers).
  auto checked = [&](const TraceColumn& c, double v) {
    try {
      if (c.integer) return double(integer_from_real(v, c.name, std::int64_t(c.min), std::int64_t(c.max)));
      return check_real(v, c.name, c.min, c.max);
    } catch (const Error& e) {
      bad(e.what());
    }
    return 0.0;
  };
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos || line[0] == '#') continue;
    std::map<std::string, double> f;
    if (jsonl) {
      const Json j = parse_json_text(line, origin + ":" + std::to_string(lineno));
      if (!j.is_object()) bad("expected a JSON object");
      for (auto& [k, v] : j.items()) {
        const TraceColumn* c = column(k);
        if (!v.is_number()) bad(k + " must be a number");
        f[k] = checked(*c, v.get<double>());
      }
    } else {
      std::vector<std::string> cells;
      std::size_t start = 0;
      for (;;) {
        const std::size_t comma = line.find(',', start);
        std::string cell = line.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        const auto a = cell.find_first_not_of(" \t"), b = cell.find_last_not_of(" \t");
        cells.push_back(a == std::string::npos ? "" : cell.substr(a, b - a + 1));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
      if (header.empty()) {
        header = cells;
        for (const auto& h : header) {
          const TraceColumn* c = column(h);
          if (std::find(header_cols.begin(), header_cols.end(), c) != header_cols.end())
            bad("column '" + h + "' appears twice");
          header_cols.push_back(c);
        }
        for (const char* need : {"arrival_time_s", "prompt_tokens", "output_tokens"})
          if (std::find(header.begin(), header.end(), need) == header.end())
            bad(std::string("header lacks column '") + need +
                "' (need arrival_time_s, prompt_tokens, output_tokens)");
        continue;
      }
      if (cells.size() != header.size())
        bad("has " + std::to_string(cells.size()) + " fields, the header has " +
            std::to_string(header.size()));
      for (std::size_t i = 0; i < cells.size(); ++i) {
        if (cells[i].empty()) continue;
        const TraceColumn& c = *header_cols[i];
        try {
          // A decimal number (integer columns: a whole one, "512" or "512.0" as pandas writes it).
          const double v = parse_real(cells[i], c.name, c.integer ? -1e300 : c.min, c.integer ? 1e300 : c.max);
          f[header[i]] = c.integer ? double(integer_from_real(v, c.name, std::int64_t(c.min), std::int64_t(c.max))) : v;
        } catch (const Error& e) {
          bad(e.what());
        }
      }
    }
    for (const char* need : {"arrival_time_s", "prompt_tokens", "output_tokens"})
      if (!f.count(need)) bad(std::string("missing ") + need);
    if (std::int64_t(out.size()) >= L::kMaxRequests)
      bad("more than " + std::to_string(L::kMaxRequests) + " requests; the limit of a trace is " +
          std::to_string(L::kMaxRequests));
    Request r;
    r.arrival_s = f["arrival_time_s"];
    r.prompt_tokens = std::int64_t(f["prompt_tokens"]);
    r.output_tokens = std::int64_t(f["output_tokens"]);
    if (f.count("session_id")) {
      r.session_id = std::int64_t(f["session_id"]);
      r.session_key = mix64(0x5E55ULL ^ std::uint64_t(r.session_id + 1));
      r.session_tokens = r.prompt_tokens + r.output_tokens;
    }
    if (f.count("shared_tokens") && !f.count("prefix_group"))
      bad("shared_tokens needs a prefix_group (the shared prompt it measures)");
    if (f.count("prefix_group")) {
      r.content_key = mix64(0x6A09ULL ^ std::uint64_t(std::int64_t(f["prefix_group"]) + 1));
      r.shared_tokens = f.count("shared_tokens") ? std::int64_t(f["shared_tokens"]) : r.prompt_tokens / 2;
      if (r.shared_tokens > r.prompt_tokens)
        bad("shared_tokens=" + std::to_string(r.shared_tokens) + " exceeds prompt_tokens=" +
            std::to_string(r.prompt_tokens));
    }
    if (f.count("priority")) r.priority = int(f["priority"]);
    out.push_back(r);
  }
  if (out.empty()) throw Error(origin + ": the trace has no requests");
  std::stable_sort(out.begin(), out.end(),
                   [](const Request& a, const Request& b) { return a.arrival_s < b.arrival_s; });
  for (std::size_t i = 0; i < out.size(); ++i) out[i].id = std::int64_t(i);
  return out;
}

}  // namespace infraplan::sim::serve
