#include "calib_cluster/rank_facts.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/error.hpp"

namespace infraplan::ccal {

namespace fs = std::filesystem;

namespace {

std::string read_line(const fs::path& p) {
  std::ifstream f(p);
  std::string s;
  if (f) std::getline(f, s);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

bool on_path(const std::string& tool) {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::stringstream ss(path);
  std::string dir;
  std::error_code ec;
  while (std::getline(ss, dir, ':'))
    if (!dir.empty() && fs::exists(fs::path(dir) / tool, ec)) return true;
  return false;
}

std::string run_capture(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

}  // namespace

Json NicFacts::to_json() const {
  return {
      {"name", name}, {"port", port}, {"link_layer", link_layer}, {"rate_Gbps", rate_Gbps}, {"state", state}};
}

Json NodeFacts::to_json() const {
  Json n = Json::array();
  for (const auto& x : nics) n.push_back(x.to_json());
  return {{"host", host}, {"nics", n}, {"gpu_topology", gpu_topology}, {"notes", notes}};
}

NodeFacts NodeFacts::from_json(const Json& j) {
  NodeFacts f;
  f.host = j.value("host", std::string());
  for (const auto& n : j.value("nics", Json::array()))
    f.nics.push_back({n.value("name", std::string()), n.value("port", 1),
                      n.value("link_layer", std::string()), n.value("rate_Gbps", 0.0),
                      n.value("state", std::string())});
  f.gpu_topology = j.value("gpu_topology", std::string());
  for (const auto& s : j.value("notes", Json::array())) f.notes.push_back(s.get<std::string>());
  return f;
}

NodeFacts probe_node(bool gpu_topology) {
  NodeFacts f;
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) == 0) f.host = host;
  std::error_code ec;
  const fs::path ib = "/sys/class/infiniband";
  if (fs::is_directory(ib, ec)) {
    std::vector<fs::path> devs;
    for (const auto& d : fs::directory_iterator(ib, ec)) devs.push_back(d.path());
    std::sort(devs.begin(), devs.end());
    for (const auto& d : devs) {
      std::vector<fs::path> ports;
      for (const auto& p : fs::directory_iterator(d / "ports", ec)) ports.push_back(p.path());
      std::sort(ports.begin(), ports.end());
      for (const auto& p : ports) {
        NicFacts n;
        n.name = d.filename().string();
        n.port = std::atoi(p.filename().string().c_str());
        n.link_layer = read_line(p / "link_layer");
        n.state = read_line(p / "state");
        n.rate_Gbps = std::atof(read_line(p / "rate").c_str());  // "400 Gb/sec (4X NDR)"
        f.nics.push_back(n);
      }
    }
    if (f.nics.empty()) f.notes.push_back("/sys/class/infiniband lists no ports");
  } else {
    f.notes.push_back(
        "no /sys/class/infiniband: no RDMA NICs seen (inter-node links keep the cluster's "
        "description)");
  }
  if (gpu_topology) {
    if (on_path("nvidia-smi"))
      f.gpu_topology = run_capture("nvidia-smi topo -m 2>&1");
    else
      f.notes.push_back("nvidia-smi not on PATH: no GPU/NIC topology matrix");
  }
  return f;
}

Json RankFacts::to_json() const {
  return {{"rank", rank},
          {"host", host},
          {"local_rank", local_rank},
          {"device", device},
          {"device_name", device_name},
          {"device_bus_id", device_bus_id},
          {"device_memory_bytes", device_memory_bytes},
          {"transport", transport},
          {"versions", versions}};
}

RankFacts RankFacts::from_json(const Json& j) {
  RankFacts f;
  f.rank = j.at("rank").get<int>();
  f.host = j.at("host").get<std::string>();
  f.local_rank = j.at("local_rank").get<int>();
  f.device = j.value("device", -1);
  f.device_name = j.value("device_name", std::string());
  f.device_bus_id = j.value("device_bus_id", std::string());
  f.device_memory_bytes = j.value("device_memory_bytes", 0.0);
  f.transport = j.value("transport", std::string());
  f.versions = j.value("versions", std::string());
  return f;
}

std::string rank_ranges(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += std::to_string(ranks[i]);
    if (j > i) out += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return out;
}

int ClusterLayout::node_of(int rank) const {
  for (std::size_t n = 0; n < node_ranks.size(); ++n)
    for (int r : node_ranks[n])
      if (r == rank) return int(n);
  return -1;
}

int ClusterLayout::local_of(int rank) const {
  for (const auto& nr : node_ranks)
    for (std::size_t i = 0; i < nr.size(); ++i)
      if (nr[i] == rank) return int(i);
  return -1;
}

Json ClusterLayout::to_json() const {
  return {{"nodes", nodes()},         {"ranks_per_node", ranks_per_node}, {"hosts", hosts},
          {"node_ranks", node_ranks}, {"device_name", device_name},       {"emulated_nodes", emulated_nodes}};
}

ClusterLayout check_layout(const std::vector<RankFacts>& facts, int emulate_nodes) {
  if (facts.empty()) throw Error("no ranks reported");
  for (std::size_t i = 0; i < facts.size(); ++i)
    if (facts[i].rank != int(i))
      throw Error("rank " + std::to_string(i) + " reported itself as rank " + std::to_string(facts[i].rank));
  // One GPU model.
  std::map<std::string, std::vector<int>> by_model;
  for (const auto& f : facts) by_model[f.device_name].push_back(f.rank);
  if (by_model.size() > 1) {
    std::string list;
    for (const auto& [model, ranks] : by_model) {
      std::set<std::string> hosts;
      for (int r : ranks) hosts.insert(facts[std::size_t(r)].host);
      list += std::string(list.empty() ? "" : "; ") + "rank" + (ranks.size() > 1 ? "s " : " ") +
              rank_ranges(ranks) + " (" + join(std::vector<std::string>(hosts.begin(), hosts.end())) +
              "): " + model;
    }
    throw Error("GPU models differ across ranks: " + list +
                ". One calibration measures one GPU model: run it once per partition or node type "
                "(srun --partition / a host list of one model). No profile written");
  }
  // Local ranks and GPUs unique per host.
  std::map<std::pair<std::string, int>, int> local_seen;
  std::map<std::pair<std::string, std::string>, int> gpu_seen;
  for (const auto& f : facts) {
    auto [it, fresh] = local_seen.insert({{f.host, f.local_rank}, f.rank});
    if (!fresh)
      throw Error("ranks " + std::to_string(it->second) + " and " + std::to_string(f.rank) + " on host " +
                  f.host + " both have local rank " + std::to_string(f.local_rank) +
                  ": the launcher's local ranks are inconsistent. No profile written");
    if (!f.device_bus_id.empty()) {
      auto [g, fresh_gpu] = gpu_seen.insert({{f.host, f.device_bus_id}, f.rank});
      if (!fresh_gpu)
        throw Error("ranks " + std::to_string(g->second) + " and " + std::to_string(f.rank) + " on host " +
                    f.host + " drive the same GPU (" + f.device_bus_id +
                    "): start one process per GPU (srun --gpus-per-task=1 or CUDA_VISIBLE_DEVICES per "
                    "rank). No profile written");
    }
  }
  ClusterLayout L;
  L.device_name = facts.front().device_name;
  if (emulate_nodes > 0) {
    if (int(facts.size()) % emulate_nodes != 0)
      throw Error("emulated nodes of " + std::to_string(emulate_nodes) + " ranks do not divide " +
                  std::to_string(facts.size()) + " ranks");
    L.emulated_nodes = true;
    for (int n = 0; n < int(facts.size()) / emulate_nodes; ++n) {
      L.hosts.push_back(facts.front().host + "#" + std::to_string(n));
      std::vector<int> r;
      for (int k = 0; k < emulate_nodes; ++k) r.push_back(n * emulate_nodes + k);
      L.node_ranks.push_back(r);
    }
    L.ranks_per_node = emulate_nodes;
    return L;
  }
  std::map<std::string, std::vector<const RankFacts*>> by_host;
  for (const auto& f : facts) {
    if (!by_host.count(f.host)) L.hosts.push_back(f.host);
    by_host[f.host].push_back(&f);
  }
  for (const auto& h : L.hosts) {
    auto v = by_host[h];
    std::sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->local_rank < b->local_rank; });
    std::vector<int> r;
    for (auto* f : v) r.push_back(f->rank);
    L.node_ranks.push_back(r);
  }
  L.ranks_per_node = int(L.node_ranks.front().size());
  for (std::size_t n = 1; n < L.node_ranks.size(); ++n)
    if (int(L.node_ranks[n].size()) != L.ranks_per_node)
      throw Error("hosts run different numbers of ranks: " + L.hosts.front() + " runs " +
                  std::to_string(L.ranks_per_node) + " (ranks " + rank_ranges(L.node_ranks.front()) + "), " +
                  L.hosts[n] + " runs " + std::to_string(L.node_ranks[n].size()) + " (ranks " +
                  rank_ranges(L.node_ranks[n]) +
                  "): start the same number on every node (srun --ntasks-per-node=G, mpirun --map-by "
                  "ppr:G:node). No profile written");
  return L;
}

}  // namespace infraplan::ccal
