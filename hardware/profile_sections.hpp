// Parsers of a profile's optional sections, one file each; parse_profile (profile.cpp) calls them.
#pragma once

#include <string>

#include "hardware/profile.hpp"

namespace infraplan::hw {

/// j["framework"] into p.framework (j must contain it).
void parse_framework_section(const Json& j, const std::string& origin, Profile& p);
/// j["serving_kernels"] and j["serving_attention"] into p, each where present.
void parse_serving_sections(const Json& j, const std::string& origin, Profile& p);
/// j["power"] into p.power (j must contain it).
void parse_power_section(const Json& j, const std::string& origin, Profile& p);

}  // namespace infraplan::hw
