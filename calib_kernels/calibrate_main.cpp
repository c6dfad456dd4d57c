// infraplan-calibrate: measures this GPU and writes a profile (docs/calibration.md).
//   infraplan-calibrate --out FILE.json [--quick] [--gpu NAME] [--comm] [--verbose]
//   infraplan-calibrate comm --out FILE.json [--quick]   (adds/replaces the "comm" section)
//   infraplan-calibrate --check                            (correctness checks only)
//   infraplan-calibrate gemm-probe --out FILE.json         (GEMM paths a framework may get)
//   infraplan-calibrate --gemm                             (own GEMMs vs cuBLASLt, gemm_wgmma tiles)
//   infraplan-calibrate --only transpose|gemm_mma|gemm_wgmma|attention (for a profiler: one launch each)
//   infraplan-calibrate --only kernels                     (the own kernels' tables, printed)
//   infraplan-calibrate --only rmsnorm                     (RMSNorm configurations, wide rows)
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>

#include "calib_kernels/calibrator.hpp"
#include "calib_kernels/gemm_probe.hpp"
#ifdef INFRAPLAN_HAVE_NCCL
#include "calib_kernels/comm.hpp"
#endif

namespace {

void usage() {
  std::fprintf(stderr,
               "usage: infraplan-calibrate --out FILE.json [--quick] [--gpu NAME] [--comm] [--verbose]\n"
               "       infraplan-calibrate comm --out FILE.json [--quick]\n"
               "       infraplan-calibrate --check\n"
               "       infraplan-calibrate gemm-probe --out FILE.json\n"
               "       infraplan-calibrate --gemm\n"
               "       infraplan-calibrate --only transpose|gemm_mma|gemm_wgmma|attention|kernels|rmsnorm\n");
}

bool write_json(const std::string& path, const nlohmann::ordered_json& j) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp);
    if (!f) return false;
    f << j.dump(1) << "\n";
    if (!f) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace infraplan::calib;
  CalibrateOptions opt;
  std::string out, only;
  bool comm_mode = false, with_comm = false, check_only = false, gemm_only = false, probe_mode = false;
  opt.command = "infraplan-calibrate";
  for (int i = 1; i < argc; ++i) {
    opt.command += ' ';
    opt.command += argv[i];
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
    else if (a == "--gpu")
      opt.gpu_name = value("--gpu");
    else if (a == "--comm")
      with_comm = true;
    else if (a == "comm")
      comm_mode = true;
    else if (a == "gemm-probe")
      probe_mode = true;
    else if (a == "--check")
      check_only = true;
    else if (a == "--gemm")
      gemm_only = true;
    else if (a == "--only")
      only = value("--only");
    else if (a == "--verbose")
      opt.verbose = true;
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
    if (!gpu_available()) {
      std::fprintf(stderr, "infraplan-calibrate: no CUDA device found\n");
      return 3;
    }
    if (!only.empty()) {
      if (Calibrator(opt).run_only(only)) return 0;
      std::fprintf(stderr,
                   "infraplan-calibrate: --only knows transpose, gemm_mma, gemm_wgmma, attention, kernels, "
                   "rmsnorm; not '%s'\n",
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
    if (probe_mode) {
      if (!write_json(out, run_gemm_probe())) {
        std::fprintf(stderr, "infraplan-calibrate: cannot write %s\n", out.c_str());
        return 1;
      }
      return 0;
    }
    if (comm_mode) {
      nlohmann::ordered_json prof = nlohmann::ordered_json::object();
      std::ifstream f(out);
      if (f) prof = nlohmann::ordered_json::parse(f);
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
