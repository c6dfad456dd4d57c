#include "collectives/platform.hpp"

#include <simgrid/s4u.hpp>

#include "common/error.hpp"
#include "common/limits.hpp"

namespace sg4 = simgrid::s4u;

namespace infraplan::net {

std::vector<std::string> configure_engine(sg4::Engine& e) {
  std::vector<std::string> cfg = {"network/model:CM02", "network/crosstraffic:0", "network/TCP-gamma:0"};
  for (const auto& c : cfg) e.set_config(c);
  return cfg;
}

SimPlatform build_platform(const Fabric& fabric, const std::vector<std::pair<int, int>>& pairs) {
  SimPlatform p;
  const int G = fabric.gpus();
  // A SimGrid full zone keeps a route table of G × G entries: refuse before allocating it.
  if (G > limits::kMaxSimGridGpus)
    throw Error("the SimGrid network simulation models at most " + std::to_string(limits::kMaxSimGridGpus) +
                " GPUs (its route table grows with the square of the GPUs); this cluster has " +
                std::to_string(G) + ": leave out --simulate / --simgrid / kv_flows \"simgrid\" for the "
                "analytical model, which has no such limit");
  auto* zone = sg4::create_full_zone("infraplan");
  p.gpus.resize(std::size_t(G));
  for (int g = 0; g < G; ++g) {
    p.gpus[std::size_t(g)] = zone->create_host("gpu" + std::to_string(g), kHostFlops);
    p.gpus[std::size_t(g)]->set_core_count(1 << 16);
    p.gpus[std::size_t(g)]->seal();
  }
  p.timer = zone->create_host("timer", kHostFlops);
  p.timer->set_core_count(1 << 30);
  p.timer->seal();
  std::vector<sg4::Link*> made(fabric.links().size(), nullptr);
  std::vector<int> r;
  for (const auto& [s, d] : pairs) {
    if (s == d) continue;
    r.clear();
    fabric.route(s, d, r);
    std::vector<sg4::LinkInRoute> route;
    route.reserve(r.size());
    for (int id : r) {
      auto& l = made[std::size_t(id)];
      if (!l) {
        const Link& fl = fabric.link(id);
        l = zone->create_link("l" + std::to_string(id), fl.Bps)->set_latency(fl.latency_s);
        l->seal();
        ++p.links;
      }
      route.emplace_back(l);
    }
    zone->add_route(p.gpus[std::size_t(s)]->get_netpoint(), p.gpus[std::size_t(d)]->get_netpoint(), nullptr,
                    nullptr, route, false);
    ++p.routes;
  }
  zone->seal();
  return p;
}

}  // namespace infraplan::net
