#include "simulator/cost_setup.hpp"

#include <cstdio>

#include "hardware/calibrated_cost_model.hpp"
#include "hardware/cluster_profile.hpp"
#include "hardware/roofline_cost_model.hpp"
#include "common/error.hpp"

namespace infraplan::sim {

namespace {

Json profile_provenance(const hw::Profile& p, const std::string& description) {
  return {{"kind", p.source},          {"gpu", p.gpu},
          {"origin", p.origin},        {"date", p.date},
          {"device", p.device_name},   {"derived_from", p.derived_from},
          {"description", description}};
}

Json roofline_provenance(const hw::GpuSpec& gpu, const std::string& description) {
  return {{"kind", "roofline"}, {"gpu", gpu.name}, {"origin", "datasheet"}, {"description", description}};
}

}  // namespace

CostSetup make_cost_setup(const hw::GpuSpec& gpu, const std::string& profile_path, bool roofline) {
  CostSetup s;
  if (roofline) {
    s.cost = std::make_unique<hw::RooflineCostModel>(gpu);
    s.name = "datasheet roofline";
    s.provenance = roofline_provenance(gpu, s.name);
    return s;
  }
  if (!profile_path.empty() && hw::is_cluster_profile_file(profile_path)) {
    // A cluster profile: its GPU profile of this GPU and its comm section; without a GPU profile
    // of this GPU, the embedded one (or the roofline) with the cluster's comm section.
    const Json j = read_json_file(profile_path);
    if (j.contains("comm")) s.comm = coll::CommProfile::from_json(Json{{"comm", j.at("comm")}}, profile_path);
    if (hw::gpu_profile_from_cluster_profile(j, gpu.name)) {
      auto cm = hw::make_calibrated_cost_model(gpu.name, profile_path);
      s.name = "cluster profile " + profile_path + " (" + cm->profile().source + ")";
      s.cost = std::move(cm);
      return s;
    }
    if (hw::has_default_profile(gpu.name)) {
      auto cm = hw::make_calibrated_cost_model(gpu.name);
      s.name = "embedded " + cm->profile().source + " profile of " + gpu.name + ", comm of cluster profile " +
               profile_path;
      s.cost = std::move(cm);
    } else {
      s.cost = std::make_unique<hw::RooflineCostModel>(gpu);
      s.name = "datasheet roofline, comm of cluster profile " + profile_path;
    }
    return s;
  }
  if (!profile_path.empty()) {
    auto cm = hw::make_calibrated_cost_model(gpu.name, profile_path);
    s.name = "profile " + profile_path + " (" + cm->profile().source + ")";
    if (!cm->profile().comm.is_null())
      s.comm = coll::CommProfile::from_json(Json{{"comm", cm->profile().comm}}, profile_path);
    s.provenance = profile_provenance(cm->profile(), s.name);
    s.spread = hw::spread_bands(cm->profile());
    s.validation_error = cm->profile().validation_error;
    if (!s.spread.known() && hw::has_default_profile(gpu.name)) {
      try {
        s.spread = hw::spread_bands(hw::default_profile(gpu.name));
        if (s.spread.known()) s.spread.method += " (the embedded profile's: " + profile_path + " records none)";
      } catch (const Error&) {
        s.spread = {};
      }
    }
    s.cost = std::move(cm);
    return s;
  }
  if (hw::has_default_profile(gpu.name)) {
    try {
      auto cm = hw::make_calibrated_cost_model(gpu.name);
      s.name = "embedded " + cm->profile().source + " profile of " + gpu.name;
      s.provenance = profile_provenance(cm->profile(), s.name);
      s.spread = hw::spread_bands(cm->profile());
      s.validation_error = cm->profile().validation_error;
      s.cost = std::move(cm);
      return s;
    } catch (const Error& e) {
      // A broken embedded profile must not stop a user's run: say so and use the datasheet.
      std::fprintf(stderr,
                   "warning: the embedded profile of %s is unusable (%s); using the datasheet roofline\n",
                   gpu.name.c_str(), e.what());
    }
  }
  s.cost = std::make_unique<hw::RooflineCostModel>(gpu);
  s.name = "datasheet roofline (no profile for " + gpu.name + ")";
  s.provenance = roofline_provenance(gpu, s.name);
  return s;
}

}  // namespace infraplan::sim
