#include "common/dtype.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"

using namespace infraplan;

TEST(Dtype, Names) {
  EXPECT_EQ(parse_dtype("e4m3", "x"), Dtype::FP8);
  EXPECT_EQ(parse_dtype("nvfp4", "x"), Dtype::FP4);
  EXPECT_DOUBLE_EQ(dtype_bytes(Dtype::INT4), 0.5);
  EXPECT_THROW(parse_dtype("fp12", "x"), Error);
}
