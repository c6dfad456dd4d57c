#pragma once
// The CUDA tools infraplan runs but does not link (infraplan-calibrate, infraplan-bench): built
// only when nvcc is found, looked up beside the infraplan binary, then on PATH. This keeps the
// infraplan executable and the core libraries free of CUDA.
#include <string>
#include <vector>

namespace infraplan::cli {

/// Exit code of `bench` / `validate` (and of infraplan-bench) when no CUDA GPU or no CUDA build
/// is available.
constexpr int kExitNoGpu = 4;

/// Full path of tool `name`, or "" when it is neither beside this binary nor on PATH.
std::string find_tool(const std::string& name);
/// Replaces this process with `tool args...` (never returns; throws when exec fails).
[[noreturn]] void exec_tool(const std::string& tool, const std::vector<std::string>& args);
/// Runs `tool args...` as a child process, its output going to ours; returns its exit code
/// (128 + signal when killed).
int run_tool(const std::string& tool, const std::vector<std::string>& args);

}  // namespace infraplan::cli
