#include "cli/find_tool.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "common/error.hpp"

namespace infraplan::cli {

std::string find_tool(const std::string& name) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path beside = self.parent_path() / name;
    if (fs::exists(beside, ec)) return beside.string();
  }
  if (const char* path = std::getenv("PATH")) {
    std::string p = path;
    std::size_t start = 0;
    while (start <= p.size()) {
      std::size_t end = p.find(':', start);
      if (end == std::string::npos) end = p.size();
      const std::string dir = p.substr(start, end - start);
      if (!dir.empty()) {
        fs::path cand = fs::path(dir) / name;
        if (fs::exists(cand, ec)) return cand.string();
      }
      start = end + 1;
    }
  }
  return "";
}

namespace {
std::vector<char*> make_argv(const std::string& tool, const std::vector<std::string>& args) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(tool.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  return argv;
}
}  // namespace

void exec_tool(const std::string& tool, const std::vector<std::string>& args) {
  std::vector<char*> argv = make_argv(tool, args);
  std::fflush(stdout);
  std::fflush(stderr);
  execv(tool.c_str(), argv.data());
  throw Error("cannot run " + tool);
}

int run_tool(const std::string& tool, const std::vector<std::string>& args) {
  std::vector<char*> argv = make_argv(tool, args);
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) throw Error("cannot start " + tool + " (fork failed)");
  if (pid == 0) {
    execv(tool.c_str(), argv.data());
    std::fprintf(stderr, "cannot run %s\n", tool.c_str());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace infraplan::cli
