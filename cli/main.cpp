// infraplan: capacity planning and simulation for LLM training and serving.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "infraplan_build_info.hpp"
#include "common/error.hpp"

namespace {

void usage() {
  std::printf(
      "infraplan — will it fit, how fast will it run, how should it be split, how many GPUs?\n\n"
      "Usage: infraplan COMMAND [OPTIONS]   (infraplan COMMAND --help for each)\n\nCommands:\n");
  for (const auto& c : infraplan::cli::commands()) std::printf("  %-12s %s\n", c.name, c.summary);
  std::printf("\nScenario files: docs/scenario.md. Examples: scenarios/.\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    usage();
    return args.empty() ? 1 : 0;
  }
  if (args[0] == "--version") {
    std::printf("infraplan %s (commit %s)\n", infraplan::build_info::kVersion,
                infraplan::build_info::kGitCommit);
    return 0;
  }
  std::vector<std::string> names;
  for (const auto& c : infraplan::cli::commands()) {
    names.emplace_back(c.name);
    if (args[0] == c.name) {
      try {
        return c.run(std::vector<std::string>(args.begin() + 1, args.end()));
      } catch (const infraplan::Error& e) {
        std::fprintf(stderr, "infraplan %s: error: %s\n", c.name, e.what());
        return 2;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "infraplan %s: internal error: %s\n", c.name, e.what());
        return 3;
      }
    }
  }
  std::fprintf(stderr, "infraplan: %s\n", infraplan::unknown_name_message("command", args[0], names).c_str());
  return 2;
}
