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

TEST(JsonUtil, IntegersAreRangeCheckedBeforeAnyCast) {
  const Json j = parse_json_text(
      R"({"big": 4294967304, "huge": 18446744073709551615, "neg": -5, "f": 4.0, "ff": 1e300, "z": 0})", "t");
  JsonObject o(j, "serving");
  EXPECT_EQ(o.get_int_min("f", 1, 1), 4);
  for (const char* k : {"big", "huge", "ff"}) {
    try {
      o.get_int_min(k, 1, 1);
      FAIL() << k;
    } catch (const Error& e) {
      const std::string w = e.what();
      EXPECT_NE(w.find(std::string("serving.") + k), std::string::npos) << w;
      EXPECT_NE(w.find("[1, 2147483647]"), std::string::npos) << w;
    }
  }
  EXPECT_THROW(o.opt_int("huge"), Error);  // 2^64 − 1 does not fit an int64 either
  EXPECT_THROW(o.opt_int_in("neg", 0, 10), Error);
  EXPECT_EQ(o.opt_int_in("z", 0, 10).value(), 0);
}

TEST(JsonUtil, NullIsRefusedUnlessTheFormatSaysAbsent) {
  const Json j = parse_json_text(R"({"tp": null})", "t");
  EXPECT_THROW(JsonObject(j, "training"), Error);
  JsonObject hf(j, "", JsonObject::Null::Absent);
  EXPECT_FALSE(hf.has("tp"));
}

TEST(JsonUtil, NumbersAreFiniteAndInRange) {
  const Json j = parse_json_text(R"({"x": 1e308, "y": -0.5})", "t");
  JsonObject o(j, "w");
  EXPECT_THROW(o.get_number_min("x", 0, 0, 1e9), Error);
  EXPECT_THROW(o.get_number_min("y", 0, 0), Error);
  EXPECT_DOUBLE_EQ(o.get_number_min("x", 0, 0), 1e308);
}

TEST(StrictJson, DuplicateKeysDepthOverflowAndGarbageAreErrors) {
  auto message = [](const std::string& text) {
    try {
      parse_json_text(text, "s.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message(R"({"training": {"tp": 2, "tp": 4}})").find("duplicate key 'training.tp'"),
            std::string::npos);
  EXPECT_NE(message(R"({"a": [{"b": 1, "b": 2}]})").find("'a[0].b'"), std::string::npos);
  EXPECT_NE(message(R"({"a": 1} x)").find("s.json:1:"), std::string::npos);
  EXPECT_NE(message(R"({"a": 1e400})").find("malformed JSON"), std::string::npos);
  EXPECT_NE(message(R"({"a": 1 /* c */})").find("malformed JSON"), std::string::npos);
  std::string deep(100000, '[');
  EXPECT_NE(message(R"({"model": )" + deep).find("nesting deeper than 64"), std::string::npos);
  std::string ok = std::string(60, '[') + std::string(60, ']');
  EXPECT_EQ(message(ok), "");
  EXPECT_EQ(parse_json_text(R"({"a": {"b": [1, {"c": 2}]}, "d": "e"})", "t"),
            Json::parse(R"({"a": {"b": [1, {"c": 2}]}, "d": "e"})"));
}

TEST(CheckedNumber, StrictTextForms) {
  EXPECT_EQ(parse_integer("4096", "--tp", 1, 1 << 20), 4096);
  EXPECT_EQ(parse_integer("-3", "x", -5, 5), -3);
  for (const char* bad : {"4abc", "", "+4", " 4", "4 ", "0x10", "1e3", "4.0", "-", "9223372036854775808"})
    EXPECT_THROW(parse_integer(bad, "--tp", 1, 1 << 20), Error) << bad;
  EXPECT_THROW(parse_integer("4294967297", "--gpus", 1, 131072), Error);
  EXPECT_DOUBLE_EQ(parse_real("1.5", "--bytes", 0, 10), 1.5);
  EXPECT_DOUBLE_EQ(parse_real(".5e1", "x", 0, 10), 5);
  EXPECT_DOUBLE_EQ(parse_real("1e-400", "x", 0, 10), 0);
  for (const char* bad : {"1.5.5", "inf", "nan", "0x1p3", "1e", "e3", ".", "1e400", "1,5", "--1"})
    EXPECT_THROW(parse_real(bad, "--bytes", 0, 1e300), Error) << bad;
  try {
    parse_integer("4abc", "--tp", 1, 64);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "--tp='4abc' is not an integer; must be an integer in [1, 64]");
  }
  EXPECT_THROW(integer_from_real(1e300, "x", 0, kInt64Max), Error);
  EXPECT_THROW(integer_from_real(9223372036854775807.0, "x", 0, kInt64Max), Error);
  EXPECT_EQ(narrow<int>(7, "x"), 7);
  EXPECT_THROW(narrow<int>(4294967304LL, "x"), Error);
}

TEST(JsonUtil, ByteSizesAreStrictAndBounded) {
  EXPECT_THROW(parse_bytes_string("1.5.5", "--bytes"), Error);
  EXPECT_THROW(parse_bytes_string("1e308TiB", "--bytes"), Error);
  EXPECT_THROW(parse_bytes_string("nanGiB", "--bytes"), Error);
  EXPECT_DOUBLE_EQ(parse_bytes_string("1.5 GiB", "--bytes"), 1.5 * 1073741824.0);
  EXPECT_THROW(parse_bytes_string("1PiB", "--bytes", 1e18), Error);
}
