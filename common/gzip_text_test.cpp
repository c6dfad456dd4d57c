#include "common/gzip_text.hpp"

#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "common/json_text.hpp"

using namespace infraplan;

namespace {

/// `text` as one gzip member (zlib's deflate with the gzip wrapper).
std::string gzip(const std::string& text) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, uLong(text.size())) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = uInt(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = uInt(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(out.size() - zs.avail_out);
  deflateEnd(&zs);
  return out;
}

std::string error_of(const std::string& bytes, std::uint64_t max = 1 << 20) {
  try {
    gunzip(bytes, max, "p.json.gz");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Gzip, InflatesWhatWasDeflated) {
  const std::string text = R"({"gpu": "h200-sxm-141gb", "tables": [1, 2, 3]})";
  const std::string z = gzip(text);
  EXPECT_TRUE(is_gzip(z));
  EXPECT_FALSE(is_gzip(text));
  EXPECT_FALSE(is_gzip(""));
  EXPECT_EQ(gunzip(z, 1 << 20, "p.json.gz"), text);
  EXPECT_EQ(gunzip(gzip("abc") + gzip("def"), 1 << 20, "two members"), "abcdef");
}

TEST(Gzip, RefusesBrokenTruncatedOrOversizedData) {
  const std::string z = gzip(std::string(100000, 'x') + "end");
  EXPECT_NE(error_of(z.substr(0, z.size() / 2)).find("cut short"), std::string::npos);
  std::string corrupt = z;
  corrupt[12] = char(~corrupt[12]), corrupt[13] = char(~corrupt[13]);
  EXPECT_NE(error_of(corrupt).find("p.json.gz"), std::string::npos);
  EXPECT_NE(error_of(z + "junk").find("trailing bytes"), std::string::npos);
  // A few kB that would inflate past the bound: refused as soon as it passes it.
  EXPECT_NE(error_of(gzip(std::string(8 << 20, '\0')), 1 << 20).find("inflates to more than 1 MiB"),
            std::string::npos);
}

TEST(Gzip, JsonFilesMayBeGzipped) {
  char tmpl[] = "/tmp/infraplan-gzip-XXXXXX";
  const int fd = mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  close(fd);
  const std::string z = gzip(R"({"a": [1, 2], "b": "c"})");
  std::ofstream(tmpl, std::ios::binary) << z;
  const Json j = read_json_file(tmpl);
  EXPECT_EQ(j.at("a").size(), 2u);
  EXPECT_EQ(j.at("b"), "c");
  std::ofstream(tmpl, std::ios::binary) << z.substr(0, z.size() - 4);
  EXPECT_THROW(read_json_file(tmpl), Error);
  std::remove(tmpl);
}
