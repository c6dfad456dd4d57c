#include "common/gzip_text.hpp"

#include <zlib.h>

#include <vector>

#include "common/error.hpp"

namespace infraplan {

bool is_gzip(const std::string& bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

std::string gunzip(const std::string& bytes, std::uint64_t max_bytes, const std::string& origin) {
  // zlib counts input in 32-bit units; every caller's input is far smaller.
  if (bytes.size() > (std::size_t(1) << 31)) throw Error(origin + ": gzip data larger than 2 GiB");
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) throw Error(origin + ": cannot start gzip decoding");
  struct Guard {
    z_stream* z;
    ~Guard() { inflateEnd(z); }
  } guard{&zs};
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  zs.avail_in = uInt(bytes.size());
  std::string out;
  std::vector<unsigned char> buf(std::size_t(1) << 16);
  for (;;) {
    zs.next_out = buf.data();
    zs.avail_out = uInt(buf.size());
    const int rc = inflate(&zs, Z_NO_FLUSH);
    out.append(reinterpret_cast<const char*>(buf.data()), buf.size() - zs.avail_out);
    if (out.size() > max_bytes)
      throw Error(origin + ": inflates to more than " + std::to_string(max_bytes >> 20) + " MiB");
    if (rc == Z_OK) continue;
    if (rc == Z_STREAM_END) {
      if (zs.avail_in == 0) return out;
      // Another member may follow (concatenated gzip files); anything else is refused.
      if (!is_gzip(bytes.substr(bytes.size() - zs.avail_in, 2)))
        throw Error(origin + ": trailing bytes after the gzip data");
      if (inflateReset(&zs) != Z_OK) throw Error(origin + ": cannot continue gzip decoding");
      continue;
    }
    // A fresh output buffer and no progress: the input ran out inside a member.
    if (rc == Z_BUF_ERROR) throw Error(origin + ": gzip data cut short");
    throw Error(origin + ": not valid gzip data (" +
                (zs.msg ? std::string(zs.msg) : "zlib error " + std::to_string(rc)) + ")");
  }
}

}  // namespace infraplan
