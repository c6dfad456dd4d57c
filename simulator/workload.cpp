#include "simulator/workload.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include "model/error.hpp"

namespace infraplan::sim::serve {

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
  return std::clamp<std::int64_t>(std::int64_t(std::llround(v)), std::max<std::int64_t>(min, 1), max);
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
  if (j.is_null()) return d;
  if (j.is_number()) {
    d.mean = j.get<double>();
    if (d.mean < 1) throw Error(path + "=" + j.dump() + " must be ≥ 1 token");
    return d;
  }
  JsonObject o(j, path);
  o.reject_unknown({"dist", "mean", "min", "max", "sigma", "alpha"});
  const std::string k = o.get_choice("dist", "fixed", {"fixed", "uniform", "lognormal", "zipf"});
  d.min = o.get_int_min("min", 1, 1);
  d.max = o.get_int_min("max", 1 << 20, d.min);
  d.mean = o.get_number_min("mean", k == "uniform" ? 0.5 * double(d.min + d.max) : fallback, 1);
  d.sigma = o.get_number_min("sigma", 0.5, 0);
  d.alpha = o.get_number_min("alpha", 1.1, 0);
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
  c.requests = o.get_int_min("requests", 100, 1);
  if (auto a = o.opt_object("arrival")) {
    a->reject_unknown({"type", "rate_per_s", "cv", "start_s", "burst", "concurrency", "think_time_s"});
    const std::string t = a->get_choice("type", "poisson", {"poisson", "gamma", "fixed", "closed"});
    c.arrival.kind = t == "poisson" ? ArrivalSpec::Kind::Poisson
                     : t == "gamma" ? ArrivalSpec::Kind::Gamma
                     : t == "fixed" ? ArrivalSpec::Kind::Fixed
                                    : ArrivalSpec::Kind::Closed;
    c.arrival.start_s = a->get_number_min("start_s", 0, 0);
    if (c.arrival.closed()) {
      for (const char* open_only : {"rate_per_s", "cv", "burst"})
        if (a->has(open_only))
          throw Error(a->field(open_only) +
                      " does not apply to a closed loop (type 'closed' sends the next request when one "
                      "finishes); set concurrency (requests in flight) and optionally think_time_s");
      if (!a->has("concurrency"))
        throw Error(a->field("concurrency") +
                    " is required for type 'closed' (requests in flight, an integer >= 1)");
      c.arrival.concurrency = int(a->get_int_min("concurrency", 1, 1));
      c.arrival.think_time_s = a->get_number_min("think_time_s", 0, 0);
    } else {
      for (const char* closed_only : {"concurrency", "think_time_s"})
        if (a->has(closed_only))
          throw Error(a->field(closed_only) + " applies only to arrival type 'closed' (this class is '" + t +
                      "'); use rate_per_s for an open loop");
      c.arrival.burst = int(a->get_int_min("burst", 1, 1));
      c.arrival.rate_per_s = a->get_number_min("rate_per_s", 0, 0);
      c.arrival.cv = a->get_number_min("cv", 1, 0.01);
    }
  }
  c.prompt = parse_length(o.raw().value("prompt_tokens", Json()), o.field("prompt_tokens"), 512);
  c.output = parse_length(o.raw().value("output_tokens", Json()), o.field("output_tokens"), 128);
  if (auto p = o.opt_object("prefix")) {
    p->reject_unknown({"groups", "shared_tokens", "zipf"});
    c.prefix_groups = p->get_int_min("groups", 1, 0);
    c.prefix_shared_tokens = p->get_int_min("shared_tokens", 0, 0);
    c.prefix_zipf = p->get_number_min("zipf", 0, 0);
  }
  if (auto s = o.opt_object("sessions")) {
    s->reject_unknown({"turns", "think_time_s"});
    c.session_turns = int(s->get_int_min("turns", 1, 1));
    c.think_time_s = s->get_number_min("think_time_s", 0, 0);
  }
  if (o.has("priority")) {
    if (o.raw().at("priority").is_object()) {
      JsonObject p(o.raw().at("priority"), o.field("priority"));
      p.reject_unknown({"levels"});
      c.priority_levels = int(p.get_int_min("levels", 1, 1));
    } else {
      c.priority = int(o.get_int("priority"));
    }
  }
  c.acceptance = o.get_number("acceptance", -1);
  if (o.has("acceptance") && (c.acceptance < 0 || c.acceptance > 1))
    throw Error(o.field("acceptance") + " must be in [0, 1] (per-token speculative acceptance)");
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
  w.seed = std::uint64_t(o.get_int_min("seed", std::int64_t(default_seed), 0));
  if (auto s = o.opt_object("slo")) {
    s->reject_unknown({"ttft_ms", "tpot_ms"});
    w.slo.ttft_ms = s->get_number_min("ttft_ms", 0, 0);
    w.slo.tpot_ms = s->get_number_min("tpot_ms", 0, 0);
  }
  if (auto t = o.opt_string("trace")) {
    std::filesystem::path p(*t);
    if (p.is_relative() && !base_dir.empty() && std::filesystem::exists(std::filesystem::path(base_dir) / p))
      p = std::filesystem::path(base_dir) / p;
    w.trace_path = p.string();
    return w;
  }
  if (o.has("classes")) {
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
  const std::string text = read_text_file(path);
  const bool jsonl = path.size() >= 6 &&
                     (path.substr(path.size() - 6) == ".jsonl" || path.substr(path.size() - 5) == ".json");
  return parse_trace(text, path, jsonl);
}

std::vector<Request> parse_trace(const std::string& text, const std::string& origin, bool jsonl) {
  std::vector<Request> out;
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> header;
  int lineno = 0;
  auto bad = [&](const std::string& why) { throw Error(origin + ":" + std::to_string(lineno) + ": " + why); };
  auto to_num = [&](const std::string& col, const std::string& v) {
    try {
      std::size_t used = 0;
      double d = std::stod(v, &used);
      while (used < v.size() && std::isspace(static_cast<unsigned char>(v[used]))) ++used;
      if (used != v.size()) throw std::invalid_argument(v);
      return d;
    } catch (const std::exception&) {
      bad(col + "='" + v + "' is not a number");
    }
    return 0.0;
  };
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos || line[0] == '#') continue;
    std::map<std::string, double> f;
    if (jsonl) {
      Json j;
      try {
        j = Json::parse(line);
      } catch (const std::exception& e) {
        bad(std::string("not a JSON object: ") + e.what());
      }
      if (!j.is_object()) bad("expected a JSON object");
      for (auto& [k, v] : j.items()) {
        if (!v.is_number()) bad(k + " must be a number");
        f[k] = v.get<double>();
      }
    } else {
      std::vector<std::string> cells;
      std::string cell;
      std::istringstream ls(line);
      while (std::getline(ls, cell, ',')) {
        const auto a = cell.find_first_not_of(" \t"), b = cell.find_last_not_of(" \t");
        cells.push_back(a == std::string::npos ? "" : cell.substr(a, b - a + 1));
      }
      if (!line.empty() && line.back() == ',') cells.emplace_back();  // a trailing empty field
      if (header.empty()) {
        header = cells;
        for (const char* need : {"arrival_time_s", "prompt_tokens", "output_tokens"})
          if (std::find(header.begin(), header.end(), need) == header.end())
            bad(std::string("header lacks column '") + need +
                "' (need arrival_time_s, prompt_tokens, output_tokens)");
        continue;
      }
      if (cells.size() != header.size())
        bad("has " + std::to_string(cells.size()) + " fields, the header has " +
            std::to_string(header.size()));
      for (std::size_t i = 0; i < cells.size(); ++i)
        if (!cells[i].empty()) f[header[i]] = to_num(header[i], cells[i]);
    }
    for (const char* need : {"arrival_time_s", "prompt_tokens", "output_tokens"})
      if (!f.count(need)) bad(std::string("missing ") + need);
    Request r;
    r.arrival_s = f["arrival_time_s"];
    if (r.arrival_s < 0) bad("arrival_time_s must be ≥ 0");
    r.prompt_tokens = std::int64_t(f["prompt_tokens"]);
    r.output_tokens = std::int64_t(f["output_tokens"]);
    if (r.prompt_tokens < 1 || double(r.prompt_tokens) != f["prompt_tokens"])
      bad("prompt_tokens must be an integer ≥ 1");
    if (r.output_tokens < 1 || double(r.output_tokens) != f["output_tokens"])
      bad("output_tokens must be an integer ≥ 1");
    if (f.count("session_id")) {
      r.session_id = std::int64_t(f["session_id"]);
      r.session_key = mix64(0x5E55ULL ^ std::uint64_t(r.session_id + 1));
      r.session_tokens = r.prompt_tokens + r.output_tokens;
    }
    if (f.count("prefix_group")) {
      r.content_key = mix64(0x6A09ULL ^ std::uint64_t(std::int64_t(f["prefix_group"]) + 1));
      r.shared_tokens = f.count("shared_tokens") ? std::int64_t(f["shared_tokens"]) : r.prompt_tokens / 2;
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
