#include "calib_cluster/comm_driver.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>

#include "calib_cluster/cluster_profile_build.hpp"
#include "calib_cluster/fault_injection.hpp"
#include "calib_cluster/launch_env.hpp"
#include "calib_cluster/library_memory.hpp"
#include "calib_cluster/rank_facts.hpp"
#include "calib_cluster/sweep_results.hpp"
#include "common/error.hpp"

namespace infraplan::ccal {

using coll::CollectiveOp;

namespace {

/// Thrown on every rank when some rank failed a stage; the message names the rank(s).
struct RunFailure : Error {
  using Error::Error;
};

/// Every rank says whether its stage failed (`failure` non-empty, already naming the rank).
/// When any did, every rank throws RunFailure with all failures: the ones that did not time out
/// first (a rank waiting on a failed peer times out; the peer's failure is the cause).
void agree(const MpiWorld& w, const std::string& stage, const std::string& failure) {
  if (w.allreduce_max(failure.empty() ? 0 : 1) == 0) return;
  const auto all = w.allgather(failure);
  std::string causes, waits;
  std::vector<std::string> seen;
  for (const auto& f : all) {
    if (f.empty() || std::find(seen.begin(), seen.end(), f) != seen.end()) continue;
    seen.push_back(f);
    std::string& dst = f.find("did not finish") != std::string::npos ? waits : causes;
    dst += (dst.empty() ? "" : "; ") + f;
  }
  std::string msg = stage + ": " + (causes.empty() ? waits : causes);
  if (!causes.empty() && !waits.empty()) msg += " (then: " + waits + ")";
  throw RunFailure(msg + ". No profile written");
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%MZ", std::gmtime(&t));
  return buf;
}

std::string host_name() {
  char h[256] = {0};
  gethostname(h, sizeof h - 1);
  return h;
}

int emulated_nodes() {
  const char* v = std::getenv("INFRAPLAN_CALIB_EMULATE_NODES");
  if (!v || !*v) return 0;
  char* end = nullptr;
  long k = std::strtol(v, &end, 10);
  if (*end != '\0' || k < 1)
    throw Error(std::string("INFRAPLAN_CALIB_EMULATE_NODES='") + v + "' is not a whole number >= 1");
  return int(k);
}

std::size_t bytes_flag(const std::string& flag, const std::string& v) {
  const double b = parse_bytes_string(v, flag);
  if (!(b >= 1) || b > 64.0 * (1ull << 30))
    throw Error(flag + "=" + v + " is invalid: must be 1 B ... 64 GiB");
  return std::size_t(b);
}

void write_atomically(const std::string& path, const Json& j) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp);
    if (!f) throw Error("cannot write " + tmp);
    f << j.dump(1) << "\n";
    if (!f) throw Error("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw Error("cannot rename " + tmp + " to " + path);
  }
}

/// The new profile merged with what `path` already holds (its GPU profiles stay; its own comm
/// section is replaced by this run).
Json with_existing(const std::string& path, const Json& fresh, const std::string& command) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return fresh;
  Json old = read_json_file(path);
  if (old.is_object() && old.contains("tables")) {
    old.erase("comm");
    return merge_cluster_profiles({{path, old}, {"this run", fresh}}, command);
  }
  if (old.is_object() && old.contains("gpu_profiles")) {
    Json kept = {{"schema", old.value("schema", std::string())}, {"gpu_profiles", old["gpu_profiles"]}};
    return merge_cluster_profiles({{path, kept}, {"this run", fresh}}, command);
  }
  throw Error(path + " exists and is neither a GPU profile nor a cluster profile: choose another --out");
}

}  // namespace

std::string comm_usage() {
  return "infraplan-calibrate comm --out FILE.json [--quick] [--transport nccl|host] [--ops a,b,...]\n"
         "          [--min-bytes B] [--max-bytes B] [--size-factor F] [--max-nodes N] [--point-timeout S]\n"
         "          [--single-process]\n"
         "  one machine: one process drives every local GPU; under mpirun or srun (one process per GPU):\n"
         "  the multi-process sweeps across nodes, written as a cluster profile\n";
}

ClusterCommOptions parse_comm_args(const std::vector<std::string>& args) {
  ClusterCommOptions o;
  bool quick = false, max_given = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw Error(a + " needs a value");
      return args[++i];
    };
    if (a == "--out") {
      o.out = value();
    } else if (a == "--quick") {
      quick = true;
    } else if (a == "--transport") {
      o.transport = value();
      if (o.transport != "nccl" && o.transport != "host")
        throw Error("--transport=" + o.transport +
                    " is invalid; valid: nccl (GPUs), host (MPI on host memory)");
    } else if (a == "--ops") {
      o.sweep.ops.clear();
      std::string v = value();
      std::size_t s = 0;
      while (s <= v.size()) {
        std::size_t e = v.find(',', s);
        if (e == std::string::npos) e = v.size();
        o.sweep.ops.push_back(coll::parse_op(v.substr(s, e - s), "--ops"));
        s = e + 1;
      }
    } else if (a == "--min-bytes") {
      o.sweep.min_bytes = bytes_flag(a, value());
    } else if (a == "--max-bytes") {
      o.sweep.max_bytes = bytes_flag(a, value());
      max_given = true;
    } else if (a == "--size-factor") {
      const std::string v = value();
      o.sweep.size_factor = std::atoi(v.c_str());
      if (o.sweep.size_factor < 2 || std::to_string(o.sweep.size_factor) != v)
        throw Error("--size-factor=" + v + " is invalid: a whole number >= 2");
    } else if (a == "--max-nodes") {
      const std::string v = value();
      o.sweep.max_nodes = std::atoi(v.c_str());
      if (o.sweep.max_nodes < 1 || std::to_string(o.sweep.max_nodes) != v)
        throw Error("--max-nodes=" + v + " is invalid: a whole number >= 1");
    } else if (a == "--point-timeout") {
      const std::string v = value();
      o.point_timeout_s = std::atof(v.c_str());
      if (!(o.point_timeout_s > 0)) throw Error("--point-timeout=" + v + " is invalid: seconds > 0");
    } else if (a == "--single-process") {
      o.single_process = true;
    } else {
      throw Error("comm: unknown argument '" + a + "'\nusage: " + comm_usage());
    }
  }
  if (o.out.empty()) throw Error("comm: --out FILE.json is required\nusage: " + comm_usage());
  if (quick) {
    o.sweep.size_factor = std::max(o.sweep.size_factor, 8);
    if (!max_given) o.sweep.max_bytes = std::size_t(1) << 30;
  }
  if (o.transport == "host" && !max_given)
    o.sweep.max_bytes = std::min(o.sweep.max_bytes, std::size_t(64) << 20);
  if (o.sweep.min_bytes > o.sweep.max_bytes) throw Error("--min-bytes must not exceed --max-bytes");
  return o;
}

int run_cluster_comm(MpiWorld& world, SweepTransport& t, const ClusterCommOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  const bool root = world.rank() == 0;
  std::string who = "rank " + std::to_string(world.rank());
  try {
    // 1. Launcher and MPI agree on the ranks.
    LaunchEnv env;
    std::optional<Fault> fault;
    int emulate = 0;
    std::string err;
    try {
      env = read_launch_env();
      check_launch_against_mpi(env, world.rank(), world.size());
      fault = read_fault();
      emulate = emulated_nodes();
    } catch (const std::exception& e) {
      err = who + ": " + e.what();
    }
    agree(world, "launch", err);
    const int mpi_local = world.node_local_rank();  // collective
    RankFacts me;
    me.rank = world.rank();
    me.host = host_name();
    me.local_rank = env.local_rank >= 0 ? env.local_rank : mpi_local;
    me.transport = t.name();
    who = "rank " + std::to_string(me.rank) + " (host " + me.host + ", local rank " +
          std::to_string(me.local_rank) + ")";
    // 2. This rank's device.
    try {
      TransportDevice d = t.open_device(me.local_rank);
      me.device = d.index;
      me.device_name = d.name;
      me.device_bus_id = d.bus_id;
      me.device_memory_bytes = d.memory_bytes;
      me.versions = d.versions;
      if (fault && fault->rank == me.rank && !fault->device.empty()) me.device_name = fault->device;
    } catch (const std::exception& e) {
      err = who + ": " + e.what();
    }
    agree(world, "opening the GPUs", err);
    // 3. Gather and check the facts.
    std::vector<RankFacts> facts;
    for (const auto& s : world.allgather(me.to_json().dump()))
      facts.push_back(RankFacts::from_json(Json::parse(s)));
    ClusterLayout layout;
    try {
      layout = check_layout(facts, emulate);
    } catch (const std::exception& e) {
      err = e.what();  // the same on every rank: rank 0 prints it
    }
    agree(world, "checking the ranks", err);
    const int node = layout.node_of(me.rank);
    const bool leader = layout.node_ranks[std::size_t(node)].front() == me.rank;
    std::string node_json;
    if (leader) node_json = probe_node(t.name() == "nccl").to_json().dump();
    const auto node_facts_raw = world.gather(node_json, 0);
    // 4. The world.
    const std::vector<SweepPhase> phases = plan_sweeps(layout, opt.sweep);
    const std::vector<std::size_t> sizes = sweep_sizes(opt.sweep);
    try {
      t.init_world(world, sizes.back());
    } catch (const std::exception& e) {
      err = who + ": " + e.what();
    }
    agree(world, "setting up " + t.name(), err);
    if (root) {
      std::printf("# infraplan-calibrate comm: %d ranks on %d node(s) x %d, %s, transport %s (%s)\n",
                  world.size(), layout.nodes(), layout.ranks_per_node, layout.device_name.c_str(),
                  t.name().c_str(), t.library().c_str());
      std::printf("# launcher %s; %zu phases, sizes %zu B ... %zu B\n", launcher_name(env.launcher),
                  phases.size(), sizes.front(), sizes.back());
      std::fflush(stdout);
    }
    // 5. The phases.
    std::vector<PointRecord> records;
    std::vector<LibraryMemoryRecord> library_memory;
    for (std::size_t pi = 0; pi < phases.size(); ++pi) {
      const SweepPhase& ph = phases[pi];
      int color = -1, key = 0;
      for (std::size_t g = 0; g < ph.groups.size(); ++g)
        for (std::size_t k = 0; k < ph.groups[g].size(); ++k)
          if (ph.groups[g][k] == me.rank) color = int(g), key = int(k);
      auto group = world.split(color, key);
      try {
        t.begin_phase(group.get(), color, key);
      } catch (const std::exception& e) {
        err = who + ": " + e.what();
      }
      agree(world, "phase " + ph.name + " (setting up its groups)", err);
      for (CollectiveOp op : ph.ops) {
        if (root)
          std::printf(
              "#\n# %s: %s, %zu group(s) of %d rank(s) (rank 0's group shown, nccl-tests definitions)\n"
              "# %14s %12s %10s %10s\n",
              ph.name.c_str(), coll::op_name(op), ph.groups.size(), ph.group_size, "size(B)", "time(us)",
              "algbw", "busbw");
        std::size_t last = 0;
        for (std::size_t size : sizes) {
          const std::size_t b = point_bytes(size, ph.group_size);
          if (b == 0 || b == last) continue;
          last = b;
          // Each size is entered together: a rank that cannot take part says so before its peers
          // block in the calls (a rank failing inside a call is caught by the transport's timeout).
          if (color >= 0 && fault && fault->fires(me.rank, op, b)) {
            if (fault->exit) std::raise(SIGKILL);  // as a node lost: no message, no clean-up
            err = who + ": injected failure (INFRAPLAN_CALIB_FAULT) (" + coll::op_name(op) + " of " +
                  std::to_string(b) + " B)";
          }
          agree(world, "phase " + ph.name, err);
          if (color >= 0) {
            try {
              const double s = t.time_op(op, b, point_warmup(b), point_iterations(b), opt.point_timeout_s);
              records.push_back({int(pi), color, me.rank, op, b, s});
              if (root) {
                const double algbw = coll::algbw_GBps(double(b), s);
                std::printf("  %14zu %12.2f %10.2f %10.2f\n", b, s * 1e6, algbw,
                            algbw * coll::busbw_factor(op, ph.group_size));
              }
            } catch (const std::exception& e) {
              err = who + ": " + e.what() + " (" + coll::op_name(op) + " of " + std::to_string(b) + " B)";
            }
          }
          agree(world, "phase " + ph.name, err);
        }
        if (root) std::fflush(stdout);
      }
      // What the library holds once the phase's calls have opened their connections.
      if (color >= 0) {
        const double held = t.library_device_bytes();
        if (held >= 0) library_memory.push_back({int(pi), me.rank, held});
      }
      try {
        t.end_phase();
      } catch (const std::exception& e) {
        err = who + ": " + e.what();
      }
      agree(world, "phase " + ph.name + " (closing)", err);
    }
    // 6. Rank 0 builds and writes the profile.
    const auto gathered = world.gather(records_to_json(records).dump(), 0);
    const auto gathered_memory = world.gather(memory_records_to_json(library_memory).dump(), 0);
    if (root) {
      try {
        CommRun run;
        run.layout = layout;
        run.ranks = facts;
        for (const auto& s : node_facts_raw)
          if (!s.empty()) run.nodes.push_back(NodeFacts::from_json(Json::parse(s)));
        run.phases = phases;
        run.sizes = sizes;
        std::vector<PointRecord> all;
        for (const auto& s : gathered) {
          auto r = records_from_json(Json::parse(s));
          all.insert(all.end(), r.begin(), r.end());
        }
        run.rows = aggregate_records(all, phases);
        for (const auto& s : gathered_memory) {
          auto m = memory_records_from_json(Json::parse(s));
          run.library_memory.insert(run.library_memory.end(), m.begin(), m.end());
        }
        run.transport = t.name();
        run.library = t.library();
        run.launcher = launcher_name(env.launcher);
        run.command = opt.command;
        run.date = utc_now();
        run.run_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        Json prof = with_existing(opt.out, build_cluster_profile(run), opt.command);
        write_atomically(opt.out, prof);
        std::printf("#\n# cluster profile written to %s (%zu rows, %.0f s)\n", opt.out.c_str(),
                    run.rows.size(), run.run_seconds);
      } catch (const std::exception& e) {
        err = who + ": " + e.what();
      }
    }
    agree(world, "writing the profile", err);
    return 0;
  } catch (const RunFailure& e) {
    t.abort();
    if (root) std::fprintf(stderr, "infraplan-calibrate comm: %s\n", e.what());
    return 1;
  }
}

}  // namespace infraplan::ccal
