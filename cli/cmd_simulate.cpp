// infraplan simulate train|serve ...: dispatches to the training and serving simulators.
#include <cstdio>

#include "cli/commands.hpp"
#include "common/error.hpp"

namespace infraplan::cli {

int cmd_simulate(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::printf(
        "Usage: infraplan simulate train --scenario F [--json] [--trace out.json] [--mode auto|exact|symmetric]\n"
        "       infraplan simulate serve --scenario F [--json] [--trace out.json] [--requests out.csv]\n");
    return args.empty() ? 2 : 0;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "train") return cmd_simulate_train(rest);
  if (args[0] == "serve") return cmd_simulate_serve(rest);
  throw Error(unknown_name_message("simulate mode", args[0], {"train", "serve"}));
}

}  // namespace infraplan::cli
