#include "common/dtype.hpp"

#include "common/error.hpp"

namespace infraplan {

double dtype_bytes(Dtype d) {
  switch (d) {
    case Dtype::FP64:
      return 8;
    case Dtype::FP32:
      return 4;
    case Dtype::TF32:
      return 4;
    case Dtype::BF16:
      return 2;
    case Dtype::FP16:
      return 2;
    case Dtype::FP8:
      return 1;
    case Dtype::INT8:
      return 1;
    case Dtype::INT4:
      return 0.5;
    case Dtype::FP4:
      return 0.5;
  }
  return 0;
}

std::string_view dtype_name(Dtype d) {
  switch (d) {
    case Dtype::FP64:
      return "fp64";
    case Dtype::FP32:
      return "fp32";
    case Dtype::TF32:
      return "tf32";
    case Dtype::BF16:
      return "bf16";
    case Dtype::FP16:
      return "fp16";
    case Dtype::FP8:
      return "fp8";
    case Dtype::INT8:
      return "int8";
    case Dtype::INT4:
      return "int4";
    case Dtype::FP4:
      return "fp4";
  }
  return "?";
}

const std::vector<Dtype>& all_dtypes() {
  static const std::vector<Dtype> all = {Dtype::FP64, Dtype::FP32, Dtype::TF32, Dtype::BF16, Dtype::FP16,
                                         Dtype::FP8,  Dtype::INT8, Dtype::INT4, Dtype::FP4};
  return all;
}

Dtype parse_dtype(std::string_view s, std::string_view field) {
  for (Dtype d : all_dtypes())
    if (dtype_name(d) == s) return d;
  if (s == "e4m3" || s == "fp8_e4m3") return Dtype::FP8;
  if (s == "nvfp4") return Dtype::FP4;
  std::vector<std::string> names;
  for (Dtype d : all_dtypes()) names.emplace_back(dtype_name(d));
  throw Error(std::string(field) + "='" + std::string(s) + "' is not a known format; valid: " + join(names));
}

}  // namespace infraplan
