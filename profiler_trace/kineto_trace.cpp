#include "profiler_trace/kineto_trace.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "common/error.hpp"
#include "common/file_kind.hpp"
#include "common/gzip_text.hpp"
#include "common/input_file.hpp"

namespace infraplan::ptrace {

double OpInput::elements() const {
  double total = 0;
  for (const auto& s : shapes) {
    double n = 1;
    for (auto d : s) n *= double(d);
    if (!s.empty()) total += n;
  }
  return total;
}

std::string short_dtype(const std::string& t) {
  static const std::map<std::string, std::string> names = {{"float", "f32"},
                                                           {"c10::BFloat16", "bf16"},
                                                           {"c10::Half", "f16"},
                                                           {"double", "f64"},
                                                           {"long int", "i64"},
                                                           {"long", "i64"},
                                                           {"int", "i32"},
                                                           {"unsigned char", "u8"},
                                                           {"signed char", "i8"},
                                                           {"bool", "bool"},
                                                           {"short int", "i16"},
                                                           {"c10::Float8_e4m3fn", "fp8e4m3"},
                                                           {"c10::Float8_e5m2", "fp8e5m2"}};
  auto it = names.find(t);
  return it == names.end() ? "" : it->second;
}

std::string read_maybe_gzip(const std::string& path, std::size_t max_bytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw Error("--from-trace: cannot open trace '" + path + "' (no such file)");
  if (!S_ISREG(st.st_mode))
    throw Error("--from-trace: '" + path + "' is " + file_kind_of(st.st_mode) +
                ", not a regular file; give the JSON (or .json.gz) that torch.profiler exported");
  // The bytes as stored, then inflated when they are gzip'd (common/gzip_text.hpp); either way at
  // most max_bytes of trace text.
  const std::string raw = read_input_file(path, max_bytes, "trace");
  return is_gzip(raw) ? gunzip(raw, max_bytes, "--from-trace: '" + path + "'") : raw;
}

namespace {

/// A JSON number as an int64 when it holds one exactly representable (no float-to-integer cast
/// of a huge or non-finite value); nullopt otherwise.
std::optional<std::int64_t> exact_int(const Json& v) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > std::uint64_t(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
    return std::int64_t(u);
  }
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && std::fabs(d) < 9.0e18) return std::int64_t(d);
  }
  return std::nullopt;
}

/// Interns string pids/tids ("Spans", "Traces") as negative ids, in order of first appearance.
struct IdInterner {
  std::map<std::string, std::int64_t> ids;
  std::int64_t of(const Json& v) {
    if (const auto n = exact_int(v)) return *n;
    std::string s = v.is_string() ? v.get<std::string>() : v.dump();
    auto it = ids.find(s);
    if (it != ids.end()) return it->second;
    std::int64_t id = -std::int64_t(ids.size()) - 1;
    ids.emplace(s, id);
    return id;
  }
};

bool kind_of(const Json& e, EventKind* k) {
  auto cat = e.find("cat");
  if (cat == e.end() || !cat->is_string()) return false;
  const std::string& c = cat->get_ref<const std::string&>();
  if (c == "cpu_op")
    *k = EventKind::CpuOp;
  else if (c == "user_annotation")
    *k = EventKind::UserAnnotation;
  else if (c == "gpu_user_annotation")
    *k = EventKind::GpuAnnotation;
  else if (c == "kernel" || c == "Kernel")
    *k = EventKind::Kernel;
  else if (c == "gpu_memcpy")
    *k = EventKind::Memcpy;
  else if (c == "gpu_memset")
    *k = EventKind::Memset;
  else if (c == "cuda_runtime" || c == "cuda_driver")
    *k = EventKind::Runtime;
  else if (c == "ac2g") {
    auto ph = e.find("ph");
    if (ph == e.end() || !ph->is_string()) return false;
    if (*ph == "s")
      *k = EventKind::FlowStart;
    else if (*ph == "f")
      *k = EventKind::FlowEnd;
    else
      return false;
  } else {
    return false;
  }
  return true;
}

double number_of(const Json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    try {
      return std::stod(v.get<std::string>());
    } catch (...) {
    }
  }
  return NAN;
}

std::int64_t int_arg(const Json& args, const char* key) {
  auto it = args.find(key);
  if (it == args.end()) return -1;
  double x = number_of(*it);
  return std::isfinite(x) ? std::int64_t(x) : -1;
}

/// A shape entry: [] (none), [a, b, ...] (one tensor) or [[...], [...]] (a tensor list).
std::vector<std::vector<std::int64_t>> shapes_of(const Json& v) {
  std::vector<std::vector<std::int64_t>> out;
  if (!v.is_array() || v.empty()) return out;
  if (v[0].is_array()) {
    for (const auto& t : v) {
      std::vector<std::int64_t> s;
      if (t.is_array())
        for (const auto& d : t)
          if (const auto n = exact_int(d)) s.push_back(*n);
      out.push_back(std::move(s));
    }
    return out;
  }
  std::vector<std::int64_t> s;
  for (const auto& d : v)
    if (const auto n = exact_int(d)) s.push_back(*n);
  out.push_back(std::move(s));
  return out;
}

std::vector<OpInput> inputs_of(const Json& args) {
  std::vector<OpInput> in;
  auto dims = args.find("Input Dims");
  if (dims == args.end() || !dims->is_array()) return in;
  auto types = args.find("Input type");
  auto strides = args.find("Input Strides");
  auto concrete = args.find("Concrete Inputs");
  in.resize(dims->size());
  for (std::size_t i = 0; i < dims->size(); ++i) {
    in[i].shapes = shapes_of((*dims)[i]);
    if (types != args.end() && types->is_array() && i < types->size() && (*types)[i].is_string())
      in[i].type = (*types)[i].get<std::string>();
    if (strides != args.end() && strides->is_array() && i < strides->size())
      in[i].strides = shapes_of((*strides)[i]);
    if (concrete != args.end() && concrete->is_array() && i < concrete->size() && (*concrete)[i].is_string())
      in[i].concrete = (*concrete)[i].get<std::string>();
  }
  return in;
}

DeviceProperties device_of(const Json& d) {
  DeviceProperties p;
  if (!d.is_object()) return p;
  auto num = [&](const char* k) {
    auto it = d.find(k);
    return it == d.end() ? 0.0 : number_of(*it);
  };
  p.id = int(num("id"));
  if (auto it = d.find("name"); it != d.end() && it->is_string()) p.name = it->get<std::string>();
  p.total_memory_bytes = num("totalGlobalMem");
  p.compute_major = int(num("computeMajor"));
  p.compute_minor = int(num("computeMinor"));
  p.sms = int(num("numSms"));
  return p;
}

}  // namespace

KinetoTrace parse_kineto_trace(const std::string& text, const std::string& origin) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos)
    throw Error("--from-trace: '" + origin + "' is empty; expected a torch.profiler Chrome trace (JSON)");
  if (text[first] != '{' && text[first] != '[')
    throw Error("--from-trace: '" + origin +
                "' is not a torch.profiler trace (expected JSON starting with '{' or '[', or gzip'd JSON)");
  // Events sit at depth 2 in {"traceEvents": [...]}, at depth 1 in a bare array. Events of other
  // categories (python_function, Trace spans, metadata) are dropped while parsing.
  const int event_depth = text[first] == '{' ? 2 : 1;
  std::size_t seen = 0;
  Json j;
  try {
    j = Json::parse(text, [&](int depth, Json::parse_event_t ev, Json& parsed) {
      if (ev != Json::parse_event_t::object_end || depth != event_depth) return true;
      if (!parsed.contains("ph") && !parsed.contains("cat")) return true;  // deviceProperties entries
      ++seen;
      EventKind k;
      return kind_of(parsed, &k);
    });
  } catch (const Json::exception& e) {
    throw Error("--from-trace: '" + origin + "' is malformed JSON (" + e.what() +
                "); a trace cut short while writing? export it again");
  }
  const Json* events = &j;
  KinetoTrace t;
  t.origin = origin;
  t.events_read = seen;
  if (j.is_object()) {
    auto it = j.find("traceEvents");
    if (it == j.end() || !it->is_array())
      throw Error("--from-trace: '" + origin +
                  "' has no \"traceEvents\" array; expected the JSON torch.profiler exports "
                  "(prof.export_chrome_trace or tensorboard_trace_handler)");
    events = &*it;
    if (auto d = j.find("deviceProperties"); d != j.end() && d->is_array())
      for (const auto& dev : *d) t.devices.push_back(device_of(dev));
    for (auto m = j.begin(); m != j.end(); ++m)
      if (m.value().is_primitive())
        t.metadata[m.key()] = m.value().is_string() ? m.value().get<std::string>() : m.value().dump();
  } else if (!j.is_array()) {
    throw Error("--from-trace: '" + origin + "' is not a trace (expected an object with \"traceEvents\")");
  }
  IdInterner ids;
  t.events.reserve(events->size());
  for (const auto& e : *events) {
    if (!e.is_object()) continue;
    TraceEvent x;
    if (!kind_of(e, &x.kind)) continue;
    if (auto n = e.find("name"); n != e.end() && n->is_string()) x.name = n->get<std::string>();
    x.pid = e.contains("pid") ? ids.of(e["pid"]) : 0;
    x.tid = e.contains("tid") ? ids.of(e["tid"]) : 0;
    x.ts_us = e.contains("ts") ? number_of(e["ts"]) : NAN;
    x.dur_us = e.contains("dur") ? number_of(e["dur"]) : 0;
    if (!std::isfinite(x.ts_us) || !std::isfinite(x.dur_us) || x.dur_us < 0)
      throw Error("--from-trace: '" + origin + "': event '" + x.name +
                  "' has no valid \"ts\"/\"dur\" (microseconds); the trace is malformed");
    if (x.kind == EventKind::FlowStart || x.kind == EventKind::FlowEnd) {
      if (auto id = e.find("id"); id != e.end()) {
        double v = number_of(*id);
        x.flow_id = std::isfinite(v) ? std::int64_t(v) : -1;
      }
    }
    if (auto a = e.find("args"); a != e.end() && a->is_object()) {
      x.external_id = int_arg(*a, "External id");
      x.correlation = int_arg(*a, "correlation");
      x.sequence = int_arg(*a, "Sequence number");
      if (x.kind == EventKind::CpuOp) x.inputs = inputs_of(*a);
    }
    t.events.push_back(std::move(x));
  }
  std::stable_sort(t.events.begin(), t.events.end(), [](const TraceEvent& a, const TraceEvent& b) {
    return a.ts_us != b.ts_us ? a.ts_us < b.ts_us : a.dur_us > b.dur_us;
  });
  return t;
}

KinetoTrace read_kineto_trace(const std::string& path, std::size_t max_bytes) {
  return parse_kineto_trace(read_maybe_gzip(path, max_bytes), path);
}

}  // namespace infraplan::ptrace
