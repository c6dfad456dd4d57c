// infraplan-calibrate: measures this GPU and writes a profile (docs/calibration.md).
//   infraplan-calibrate --out FILE.json [--quick] [--gpu NAME] [--comm] [--verbose]
//     (--no-power: without stage 9, the sustained-clock probe, ~6 minutes; `--only power` prints it;
//      --fill uniform|normal: the operands of its GEMMs, and of `layouts`)
//   infraplan-calibrate comm --out FILE.json [--quick]   (adds/replaces the "comm" section)
//   mpirun|srun ... infraplan-calibrate comm --out CLUSTER.json [...]
//                                       (one process per GPU: handed over to infraplan-calibrate-mpi)
//   infraplan-calibrate --out FILE.json --shapes SHAPES.json [--add-to PROFILE.json]
//                                                          (exact GEMM shapes of a workload)
//   infraplan-calibrate layouts --out RUN.json [--shapes SHAPES.json] [--api cublaslt|cublas|both]
//                          [--passes N] [--order shuffled|listed] [--no-grid] [--legacy-too] [--quick]
//                          [--fill uniform|normal] [--hold-ms MS] [--seed N]
//                                                          (GEMMs in the tn / nn / nt layouts: one run
//                                                           file per machine start, docs/calibration.md)
//   infraplan-calibrate --check                            (correctness checks only)
//   infraplan-calibrate gemm-probe --out FILE.json         (GEMM paths a framework may get)
//   infraplan-calibrate --gemm                             (own GEMMs vs cuBLASLt, gemm_wgmma tiles)
//   infraplan-calibrate --only transpose|gemm_mma|gemm_wgmma|attention (for a profiler: one launch each)
//   infraplan-calibrate --only kernels                     (the own kernels' tables, printed)
//   infraplan-calibrate --only rmsnorm                     (RMSNorm configurations, wide rows)
//   infraplan-calibrate --only launch                      (launch and kernel-gap ceilings, printed)
//   infraplan-calibrate --only power [--fill uniform|normal] (sustained clock and power per workload, JSON)
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>

#include "calib_kernels/calibrator.hpp"
#include "calib_kernels/gemm_layouts.hpp"
#include "common/error.hpp"
#include "common/input_file.hpp"
#include "common/output_files.hpp"
#include "calib_kernels/gemm_probe.hpp"
#ifdef INFRAPLAN_HAVE_NCCL
#include "calib_kernels/comm.hpp"
#endif

namespace {

void usage() {
  std::fprintf(
      stderr,
      "usage: infraplan-calibrate --out FILE.json [--quick] [--no-power] [--gpu NAME] [--comm] [--verbose]\n"
      "                 [--fill uniform|normal]\n"
      "       infraplan-calibrate comm --out FILE.json [--quick]\n"
      "       mpirun|srun ... infraplan-calibrate comm --out CLUSTER.json [--quick]\n"
      "                 [--transport nccl|host] [--ops a,b] [--min-bytes B] [--max-bytes B]\n"
      "                 [--max-nodes N] (infraplan-calibrate-mpi --help)\n"
      "       infraplan-calibrate --out FILE.json --shapes SHAPES.json [--add-to PROFILE.json]\n"
      "       infraplan-calibrate layouts --out RUN.json [--shapes SHAPES.json]\n"
      "                 [--api cublaslt|cublas|both] [--passes N] [--order shuffled|listed] [--no-grid]\n"
      "                 [--legacy-too] [--quick] [--fill uniform|normal] [--hold-ms MS] [--seed N]\n"
      "       infraplan-calibrate --check\n"
      "       infraplan-calibrate gemm-probe --out FILE.json\n"
      "       infraplan-calibrate --gemm\n"
      "       infraplan-calibrate --only\n"
      "                 transpose|gemm_mma|gemm_wgmma|attention|kernels|rmsnorm|launch|power\n"
      "       (--fill: the GEMM operands of `layouts` and of the power probe, uniform in +-1 or normal)\n");
}

/// Writes the profile safely (common/output_files.hpp: mkstemp beside the target, never through a
/// symlink, not onto a device or a directory, renamed into place).
bool write_json(const std::string& path, const nlohmann::ordered_json& j) {
  try {
    infraplan::write_output_file(path, j.dump(1) + "\n");
    return true;
  } catch (const infraplan::Error& e) {
    std::fprintf(stderr, "infraplan-calibrate: %s\n", e.what());
    return false;
  }
}

/// A JSON input (shapes, a profile to add to): a regular file of bounded size, then parsed.
nlohmann::ordered_json read_json_input(const std::string& path, const std::string& what) {
  const std::string text = infraplan::read_input_file(path, infraplan::kMaxJsonFileBytes, what);
  return nlohmann::ordered_json::parse(text);
}

/// The shapes file `infraplan simulate ... --gemm-shapes-out` writes: {"gemm_shapes": [{dtype, m, n,
/// k, layout?, ...}]} (or the bare array; layout "tn" when absent). Throws naming the entry and field
/// on bad input.
std::vector<infraplan::calib::GemmShapeRequest> read_shapes(const std::string& path) {
  using infraplan::calib::GemmDtype;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(infraplan::read_input_file(path, infraplan::kMaxJsonFileBytes, "shapes file"));
  } catch (const infraplan::Error& e) {
    throw std::runtime_error(e.what());
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": not valid JSON (" + e.what() + ")");
  }
  const nlohmann::json& arr = j.is_object() && j.contains("gemm_shapes") ? j["gemm_shapes"] : j;
  if (!arr.is_array()) throw std::runtime_error(path + ": expected {\"gemm_shapes\": [...]} or an array");
  std::vector<infraplan::calib::GemmShapeRequest> out;
  std::map<std::string, int> skipped;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const auto& e = arr[i];
    std::string where = path + ": gemm_shapes[" + std::to_string(i) + "]";
    if (!e.is_object()) throw std::runtime_error(where + ": expected an object {dtype, m, n, k}");
    infraplan::calib::GemmShapeRequest r;
    std::string dn = e.value("dtype", std::string());
    bool known = false;
    for (GemmDtype d : {GemmDtype::BF16, GemmDtype::FP16, GemmDtype::TF32, GemmDtype::FP8, GemmDtype::INT8})
      if (dn == infraplan::calib::gemm_dtype_name(d)) r.dtype = d, known = true;
    if (!known) {
      // Formats a workload may ask for that have no cuBLASLt path here: counted and left out.
      // Anything else is a mistake in the file.
      if (dn == "fp64" || dn == "fp32" || dn == "int4" || dn == "fp4") {
        ++skipped[dn];
        continue;
      }
      throw std::runtime_error(where + ".dtype: '" + dn +
                               "' is not a GEMM format; one of bf16, fp16, tf32, fp8, int8 (fp64, fp32, "
                               "int4 and fp4 shapes are left out: cuBLASLt is not timed for them here)");
    }
    for (auto [key, dst] : {std::pair<const char*, std::int64_t*>{"m", &r.m}, {"n", &r.n}, {"k", &r.k}}) {
      if (!e.contains(key) || !e[key].is_number_integer() || e[key].get<std::int64_t>() <= 0 ||
          e[key].get<std::int64_t>() > (1 << 20))
        throw std::runtime_error(where + "." + key + ": expected an integer in 1 … 1048576");
      *dst = e[key].get<std::int64_t>();
    }
    if (e.contains("layout")) {
      std::string ln = e["layout"].is_string() ? e["layout"].get<std::string>() : std::string("?");
      const auto parsed = infraplan::parse_gemm_layout(ln);
      if (!parsed)
        throw std::runtime_error(where + ".layout: '" + ln +
                                 "' is not a GEMM layout; one of tn (forward), nn (input gradient), nt "
                                 "(weight gradient)");
      r.layout = *parsed;
    }
    bool dup = false;
    for (const auto& o : out)
      dup |= o.dtype == r.dtype && o.m == r.m && o.n == r.n && o.k == r.k && o.layout == r.layout;
    if (!dup) out.push_back(r);
  }
  for (const auto& [name, count] : skipped)
    std::fprintf(stderr, "infraplan-calibrate: %s: %d %s shape%s left out (no cuBLASLt timing for %s here)\n",
                 path.c_str(), count, name.c_str(), count == 1 ? "" : "s", name.c_str());
  if (out.empty())
    throw std::runtime_error(path + ": no GEMM shapes in a timed format (bf16, fp16, tf32, fp8, int8)");
  return out;
}

/// True when mpirun, srun or a PMI launcher started this process as one rank of several.
bool started_by_launcher() {
  auto set = [](const char* v) { return std::getenv(v) != nullptr; };
  return set("OMPI_COMM_WORLD_SIZE") || (set("SLURM_PROCID") && (set("SLURM_STEP_ID") || set("SLURM_STEPID"))) ||
         (set("PMI_RANK") && set("PMI_SIZE"));
}

/// `comm` under a launcher (or with --transport host) is the multi-process calibration:
/// replaces this process by infraplan-calibrate-mpi beside it (same arguments, same
/// environment, same process id, so the launcher keeps track of it). Returns only on failure.
int hand_over_to_mpi(char** argv) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path tool = fs::read_symlink("/proc/self/exe", ec).parent_path() / "infraplan-calibrate-mpi";
  if (ec || !fs::exists(tool, ec)) {
    std::fprintf(stderr,
                 "infraplan-calibrate: started as one rank of several (mpirun/srun), but infraplan-calibrate-mpi "
                 "is not beside this program (%s): build with MPI (apt install openmpi-bin libopenmpi-dev, "
                 "reconfigure), or use --single-process for one machine\n",
                 tool.string().c_str());
    return 2;
  }
  std::fflush(stdout);
  execv(tool.c_str(), argv);
  std::fprintf(stderr, "infraplan-calibrate: cannot run %s\n", tool.string().c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace infraplan::calib;
  CalibrateOptions opt;
  std::string out, only, shapes_path, add_to;
  bool comm_mode = false, with_comm = false, check_only = false, gemm_only = false, probe_mode = false,
       layouts_mode = false;
  LayoutRunOptions lopt;
  opt.command = "infraplan-calibrate";
  for (int i = 1; i < argc; ++i) {
    opt.command += ' ';
    opt.command += argv[i];
  }
  {
    bool comm = false, single = false, host = false;
    for (int i = 1; i < argc; ++i) {
      comm |= std::strcmp(argv[i], "comm") == 0;
      single |= std::strcmp(argv[i], "--single-process") == 0;
      host |= std::strcmp(argv[i], "--transport") == 0 && i + 1 < argc && std::strcmp(argv[i + 1], "host") == 0;
    }
    if (comm && !single && (host || started_by_launcher())) return hand_over_to_mpi(argv);
  }
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* name) -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "infraplan-calibrate: %s needs a value\n", name);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--out")
      out = value("--out");
    else if (a == "--quick")
      opt.quick = true;
    else if (a == "--no-power")
      opt.power = false;
    else if (a == "--gpu")
      opt.gpu_name = value("--gpu");
    else if (a == "--comm")
      with_comm = true;
    else if (a == "comm")
      comm_mode = true;
    else if (a == "gemm-probe")
      probe_mode = true;
    else if (a == "layouts")
      layouts_mode = true;
    else if (a == "--no-grid")
      lopt.grid = false;
    else if (a == "--legacy-too")
      lopt.legacy_too = true;
    else if (a == "--passes") {
      std::string v = value("--passes");
      lopt.passes = std::atoi(v.c_str());
      if (lopt.passes < 1 || lopt.passes > 9) {
        std::fprintf(stderr, "infraplan-calibrate: --passes %s: expected 1 … 9\n", v.c_str());
        return 2;
      }
    } else if (a == "--hold-ms") {
      std::string v = value("--hold-ms");
      char* end = nullptr;
      lopt.hold_ms = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || *end != '\0' || !(lopt.hold_ms >= 0 && lopt.hold_ms <= 1000)) {
        std::fprintf(stderr,
                     "infraplan-calibrate: --hold-ms %s: expected 0 … 1000 (ms of replays per shape)\n",
                     v.c_str());
        return 2;
      }
    } else if (a == "--seed") {
      std::string v = value("--seed");
      char* end = nullptr;
      const unsigned long long seed = std::strtoull(v.c_str(), &end, 10);
      if (end == v.c_str() || *end != '\0' || v[0] == '-') {
        std::fprintf(stderr, "infraplan-calibrate: --seed %s: expected a non-negative integer\n", v.c_str());
        return 2;
      }
      lopt.seed = seed;
    } else if (a == "--order") {
      std::string v = value("--order");
      if (v != "shuffled" && v != "listed") {
        std::fprintf(stderr, "infraplan-calibrate: --order %s: expected shuffled or listed\n", v.c_str());
        return 2;
      }
      lopt.listed_order = v == "listed";
    } else if (a == "--fill") {
      std::string v = value("--fill");
      if (v != "uniform" && v != "normal") {
        std::fprintf(stderr, "infraplan-calibrate: --fill %s: expected uniform or normal\n", v.c_str());
        return 2;
      }
      lopt.fill = opt.power_fill = v == "normal" ? FillDistribution::Normal : FillDistribution::Uniform;
    } else if (a == "--api") {
      std::string v = value("--api");
      if (v == "cublaslt")
        lopt.apis = {GemmApi::Lt};
      else if (v == "cublas")
        lopt.apis = {GemmApi::Cublas};
      else if (v == "both")
        lopt.apis = {GemmApi::Lt, GemmApi::Cublas};
      else {
        std::fprintf(stderr, "infraplan-calibrate: --api %s: expected cublaslt, cublas or both\n", v.c_str());
        return 2;
      }
    } else if (a == "--check")
      check_only = true;
    else if (a == "--gemm")
      gemm_only = true;
    else if (a == "--only")
      only = value("--only");
    else if (a == "--shapes")
      shapes_path = value("--shapes");
    else if (a == "--add-to")
      add_to = value("--add-to");
    else if (a == "--verbose")
      opt.verbose = true;
    else if (a == "--single-process" && comm_mode)
      ;  // comm on this machine's GPUs from one process (the default without a launcher)
    else if (a == "--transport" && comm_mode && i + 1 < argc && std::strcmp(argv[i + 1], "nccl") == 0)
      ++i;
    else if (a == "--help" || a == "-h") {
      usage();
      return 0;
    } else {
      std::fprintf(stderr, "infraplan-calibrate: unknown argument '%s'\n", a.c_str());
      usage();
      return 2;
    }
  }
  try {
    if (!add_to.empty() && shapes_path.empty()) {
      std::fprintf(stderr, "infraplan-calibrate: --add-to needs --shapes\n");
      return 2;
    }
    if (!shapes_path.empty()) opt.shapes = read_shapes(shapes_path);
    if (!gpu_available()) {
      std::fprintf(stderr, "infraplan-calibrate: no CUDA device found\n");
      return 3;
    }
    if (!only.empty()) {
      if (Calibrator(opt).run_only(only)) return 0;
      std::fprintf(stderr,
                   "infraplan-calibrate: --only knows transpose, gemm_mma, gemm_wgmma, attention, kernels, "
                   "rmsnorm, launch, power; not '%s'\n",
                   only.c_str());
      return 2;
    }
    if (check_only) return Calibrator(opt).run_checks(nullptr) ? 0 : 1;
    if (gemm_only) {
      Calibrator cal(opt);
      cal.run_gemm();
      std::printf("%s", cal.summary().c_str());
      return 0;
    }
    if (out.empty()) {
      usage();
      return 2;
    }
    if (layouts_mode) {
      lopt.shapes = opt.shapes;
      lopt.quick = opt.quick;
      lopt.command = opt.command;
      if (!write_json(out, run_layouts(lopt))) {
        std::fprintf(stderr, "infraplan-calibrate: cannot write %s\n", out.c_str());
        return 1;
      }
      std::printf("layout run written to %s\n", out.c_str());
      return 0;
    }
    if (probe_mode) {
      if (!write_json(out, run_gemm_probe())) {
        std::fprintf(stderr, "infraplan-calibrate: cannot write %s\n", out.c_str());
        return 1;
      }
      return 0;
    }
    if (comm_mode) {
      nlohmann::ordered_json prof = nlohmann::ordered_json::object();
      if (infraplan::is_regular_file_path(out)) prof = read_json_input(out, "profile");
#ifdef INFRAPLAN_HAVE_NCCL
      CommOptions co;
      co.quick = opt.quick;
      prof["comm"] = run_comm_sweeps(co);
#else
      std::fprintf(stderr, "infraplan-calibrate: built without NCCL; comm is unavailable\n");
      return 2;
#endif
      if (!write_json(out, prof)) {
        std::fprintf(stderr, "infraplan-calibrate: cannot write %s\n", out.c_str());
        return 1;
      }
      return 0;
    }
    if (!add_to.empty()) {
      // Exact shapes and their rows only, into a copy of an existing profile of this GPU.
      nlohmann::ordered_json prof = read_json_input(add_to, "profile");
      if (!prof.contains("tables") || !prof["tables"].contains("gemm"))
        throw std::runtime_error(add_to + ": not a profile with GEMM tables (tables.gemm)");
      cudaDeviceProp prop{};
      if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess && prof.contains("device") &&
          prof["device"].value("name", std::string()) != prop.name)
        throw std::runtime_error(add_to + " was measured on " + prof["device"].value("name", std::string()) +
                                 ", this GPU is " + prop.name +
                                 ": exact shapes belong to the profile of this GPU");
      Calibrator cal(opt);
      auto fresh = cal.run_shapes();
      // Entries of the same format, layout and sizes (rows: the same fixed sizes) are replaced.
      auto merge = [&](const char* table) {
        nlohmann::ordered_json merged = nlohmann::ordered_json::array();
        auto same = [&](const nlohmann::ordered_json& a, const nlohmann::ordered_json& b) {
          if (a["dtype"] != b["dtype"] || a.value("layout", "tn") != b.value("layout", "tn")) return false;
          for (const char* key : {"m", "n", "k"})
            if (a.value(key, std::int64_t(-1)) != b.value(key, std::int64_t(-1))) return false;
          return true;
        };
        if (prof["tables"].contains(table))
          for (const auto& old_e : prof["tables"][table]) {
            bool replaced = false;
            for (const auto& e : fresh[table]) replaced |= same(old_e, e);
            if (!replaced) merged.push_back(old_e);
          }
        for (const auto& e : fresh[table]) merged.push_back(e);
        prof["tables"][table] = merged;
      };
      merge("gemm_shapes");
      merge("gemm_rows");
      if (!write_json(out, prof)) {
        std::fprintf(stderr, "infraplan-calibrate: cannot write %s\n", out.c_str());
        return 1;
      }
      std::printf("%zu exact GEMM shapes and %zu rows timed; profile written to %s\n",
                  fresh["gemm_shapes"].size(), fresh["gemm_rows"].size(), out.c_str());
      return 0;
    }
    Calibrator cal(opt);
    auto prof = cal.run();
    if (with_comm) {
#ifdef INFRAPLAN_HAVE_NCCL
      std::fprintf(stderr, "[calibrate] NCCL sweeps\n");
      CommOptions co;
      co.quick = opt.quick;
      prof["comm"] = run_comm_sweeps(co);
#else
      std::fprintf(stderr, "infraplan-calibrate: built without NCCL; --comm ignored\n");
#endif
    }
    if (!write_json(out, prof)) {
      std::fprintf(stderr, "infraplan-calibrate: cannot write %s\n", out.c_str());
      return 1;
    }
    std::printf("%s", cal.summary().c_str());
    std::printf("profile written to %s (%.0f s)\n", out.c_str(), prof.value("run_seconds", 0.0));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "infraplan-calibrate: %s\n", e.what());
    return 1;
  }
}
