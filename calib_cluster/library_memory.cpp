#include "calib_cluster/library_memory.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "common/error.hpp"

namespace infraplan::ccal {

Json memory_records_to_json(const std::vector<LibraryMemoryRecord>& recs) {
  Json a = Json::array();
  for (const auto& r : recs) a.push_back({r.phase, r.rank, r.bytes});
  return a;
}

std::vector<LibraryMemoryRecord> memory_records_from_json(const Json& j) {
  std::vector<LibraryMemoryRecord> out;
  if (!j.is_array()) throw Error("library memory records: expected an array");
  for (const auto& e : j) {
    if (!e.is_array() || e.size() != 3 || !e[0].is_number_integer() || !e[1].is_number_integer() ||
        !e[2].is_number())
      throw Error("library memory records: malformed record " + e.dump());
    out.push_back({e[0].get<int>(), e[1].get<int>(), e[2].get<double>()});
  }
  return out;
}

namespace {

std::map<int, std::vector<double>> by_phase(const std::vector<LibraryMemoryRecord>& recs,
                                            const std::vector<SweepPhase>& phases) {
  std::map<int, std::vector<double>> out;
  for (const auto& r : recs) {
    if (r.phase < 0 || std::size_t(r.phase) >= phases.size())
      throw Error("rank " + std::to_string(r.rank) + " reported library memory for phase " +
                  std::to_string(r.phase) + " of " + std::to_string(phases.size()));
    out[r.phase].push_back(r.bytes);
  }
  for (auto& [p, v] : out) std::sort(v.begin(), v.end());
  return out;
}

}  // namespace

Json library_memory_json(const std::vector<LibraryMemoryRecord>& recs, const std::vector<SweepPhase>& phases) {
  Json a = Json::array();
  for (const auto& [p, v] : by_phase(recs, phases)) {
    const std::size_t n = v.size();
    const double median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    a.push_back({{"phase", phases[std::size_t(p)].name},
                 {"ranks", phases[std::size_t(p)].group_size},
                 {"ranks_measured", n},
                 {"bytes_min", v.front()},
                 {"bytes_median", median},
                 {"bytes_max", v.back()}});
  }
  return a;
}

double nccl_buffer_bytes(const std::vector<LibraryMemoryRecord>& recs, const std::vector<SweepPhase>& phases) {
  double most = 0;
  for (const auto& [p, v] : by_phase(recs, phases))
    if (phases[std::size_t(p)].group_size >= 2) most = std::max(most, v.back());
  return most;
}

}  // namespace infraplan::ccal
