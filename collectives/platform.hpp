#pragma once
// A SimGrid 3.32 platform built from a net::Fabric: one host per GPU ("gpu<i>", 1e9 flop/s,
// many cores so that concurrent streams on a GPU do not slow each other: durations come from
// the caller), one "timer" host for pure delays, one SimGrid link per fabric link with the same
// bandwidth (B/s) and latency (s), and explicit routes for the GPU pairs that will talk.
// Uses SimGrid's global engine: call only where a SimGrid simulation may run (see flow_sim.hpp).
#include <utility>
#include <vector>

#include "collectives/fabric.hpp"

namespace simgrid::s4u {
class Host;
class Engine;
}  // namespace simgrid::s4u

namespace infraplan::net {

/// Host speed of every platform host, flop/s: a delay of t seconds is an Exec of t x this.
inline constexpr double kHostFlops = 1e9;

struct SimPlatform {
  std::vector<simgrid::s4u::Host*> gpus;  ///< host of GPU rank i
  simgrid::s4u::Host* timer = nullptr;    ///< host for software delays
  std::size_t links = 0;                  ///< SimGrid links created
  std::size_t routes = 0;                 ///< routes declared
};

/// SimGrid configuration for GPU fabrics: CM02 (no latency factor, no bandwidth cap, no
/// reverse ACK traffic) with crosstraffic off, logs at warning. Must run before the platform is
/// built; returns the argv-style options applied.
std::vector<std::string> configure_engine(simgrid::s4u::Engine& e);

/// Builds the platform under a fresh full zone. `pairs` are (src GPU, dst GPU) routes to declare;
/// only links on those routes are created.
SimPlatform build_platform(const Fabric& fabric, const std::vector<std::pair<int, int>>& pairs);

}  // namespace infraplan::net
