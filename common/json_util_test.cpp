#include "common/json_util.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"

using namespace infraplan;

TEST(JsonUtil, MalformedJsonReportsLineAndColumn) {
  try {
    parse_json_text("{\n  \"a\": 1,\n  \"b\": }\n", "s.json");
    FAIL();
  } catch (const Error& e) {
    std::string w = e.what();
    EXPECT_NE(w.find("s.json:3:"), std::string::npos) << w;
    EXPECT_NE(w.find("malformed JSON"), std::string::npos) << w;
  }
}

TEST(JsonUtil, MissingFileIsAClearError) { EXPECT_THROW(read_json_file("/nonexistent/x.json"), Error); }

TEST(JsonUtil, TypedReads) {
  Json j = Json::parse(R"({"n": 4, "x": 2.5, "s": "a", "b": true, "neg": -1})");
  JsonObject o(j, "training");
  EXPECT_EQ(o.get_int("n"), 4);
  EXPECT_EQ(o.get_int("missing", 7), 7);
  EXPECT_DOUBLE_EQ(o.get_number("x"), 2.5);
  EXPECT_THROW(o.get_int("x"), Error);
  EXPECT_THROW(o.get_int("s"), Error);
  try {
    o.get_int_min("neg", 1, 1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("training.neg=-1"), std::string::npos);
  }
  EXPECT_THROW(o.get_choice("s", "x", {"x", "y"}), Error);
}

TEST(JsonUtil, ByteSizes) {
  EXPECT_DOUBLE_EQ(parse_bytes_string("1GiB", "f"), 1073741824.0);
  EXPECT_DOUBLE_EQ(parse_bytes_string("2GB", "f"), 2e9);
  EXPECT_DOUBLE_EQ(parse_bytes_string("512", "f"), 512);
  EXPECT_DOUBLE_EQ(parse_bytes(Json(64), "f"), 64);
  EXPECT_THROW(parse_bytes_string("-1GB", "f"), Error);
  EXPECT_THROW(parse_bytes_string("3 parsecs", "f"), Error);
  EXPECT_THROW(parse_bytes(Json(-3), "f"), Error);
}
