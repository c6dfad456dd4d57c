#include "collectives/collective.hpp"

#include <algorithm>
#include <cctype>

#include "common/error.hpp"

namespace infraplan::coll {

const char* op_name(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::AllReduce:
      return "all_reduce";
    case CollectiveOp::AllGather:
      return "all_gather";
    case CollectiveOp::ReduceScatter:
      return "reduce_scatter";
    case CollectiveOp::Broadcast:
      return "broadcast";
    case CollectiveOp::Reduce:
      return "reduce";
    case CollectiveOp::AllToAll:
      return "alltoall";
    case CollectiveOp::SendRecv:
      return "sendrecv";
  }
  return "?";
}

const char* algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::Ring:
      return "ring";
    case Algorithm::Tree:
      return "tree";
    case Algorithm::NVLS:
      return "nvls";
    case Algorithm::Hierarchical:
      return "hierarchical";
    case Algorithm::Direct:
      return "direct";
    case Algorithm::Fit:
      return "fit";
  }
  return "?";
}

const char* protocol_name(Protocol p) {
  switch (p) {
    case Protocol::LL:
      return "LL";
    case Protocol::LL128:
      return "LL128";
    case Protocol::Simple:
      return "Simple";
  }
  return "?";
}

const std::vector<CollectiveOp>& all_ops() {
  static const std::vector<CollectiveOp> ops = {
      CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter, CollectiveOp::Broadcast,
      CollectiveOp::Reduce,    CollectiveOp::AllToAll,  CollectiveOp::SendRecv};
  return ops;
}

std::vector<std::string> op_names() {
  std::vector<std::string> n;
  for (auto op : all_ops()) n.emplace_back(op_name(op));
  return n;
}

namespace {
std::string normalize(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != '_' && c != '-' && c != ' ') out += char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
}  // namespace

CollectiveOp parse_op(std::string_view s, std::string_view field) {
  std::string n = normalize(s);
  if (n == "a2a" || n == "alltoallv") n = "alltoall";
  if (n == "p2p" || n == "sendrecv" || n == "send") return CollectiveOp::SendRecv;
  for (auto op : all_ops())
    if (normalize(op_name(op)) == n) return op;
  throw Error(std::string(field) + ": " + unknown_name_message("collective", s, op_names()));
}

Algorithm parse_algorithm(std::string_view s, std::string_view field) {
  std::string n = normalize(s);
  for (auto a : {Algorithm::Ring, Algorithm::Tree, Algorithm::NVLS, Algorithm::Hierarchical,
                 Algorithm::Direct, Algorithm::Fit})
    if (n == algorithm_name(a)) return a;
  throw Error(
      std::string(field) + ": " +
      unknown_name_message("algorithm", s, {"ring", "tree", "nvls", "hierarchical", "direct", "fit"}));
}

Protocol parse_protocol(std::string_view s, std::string_view field) {
  std::string n = normalize(s);
  if (n == "ll") return Protocol::LL;
  if (n == "ll128") return Protocol::LL128;
  if (n == "simple") return Protocol::Simple;
  throw Error(std::string(field) + ": " + unknown_name_message("protocol", s, {"LL", "LL128", "Simple"}));
}

double busbw_factor(CollectiveOp op, int n) {
  if (n <= 1)
    return op == CollectiveOp::AllReduce || op == CollectiveOp::AllGather ||
                   op == CollectiveOp::ReduceScatter || op == CollectiveOp::AllToAll
               ? 0.0
               : 1.0;
  switch (op) {
    case CollectiveOp::AllReduce:
      return 2.0 * (n - 1) / n;
    case CollectiveOp::AllGather:
    case CollectiveOp::ReduceScatter:
    case CollectiveOp::AllToAll:
      return double(n - 1) / n;
    default:
      return 1.0;
  }
}

double bytes_per_rank(CollectiveOp op, int n, double bytes) {
  if (n <= 1) return 0;
  return busbw_factor(op, n) * bytes;
}

}  // namespace infraplan::coll
