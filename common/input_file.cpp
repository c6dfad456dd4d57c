#include "common/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/error.hpp"
#include "common/file_kind.hpp"

namespace infraplan {

namespace {

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string mib(std::uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

bool is_regular_file_path(const std::string& path) {
  struct stat st {};
  return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string read_input_file(const std::string& path, std::uint64_t max_bytes, const std::string& what) {
  const std::string name = what + " '" + path + "'";
  if (path.empty()) throw Error(what + ": the file name is empty");
  // Check what the path is before opening it: opening a FIFO for reading blocks until a writer
  // appears. O_NONBLOCK guards the window between the check and the open.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw Error("cannot open file '" + path + "' (" + what + "): " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw Error(name + " is " + file_kind_of(st.st_mode) + ", not a regular file");
  Fd f;
  f.fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (f.fd < 0) throw Error("cannot open file '" + path + "' (" + what + "): " + std::strerror(errno));
  if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode))
    throw Error(name + " is " + file_kind_of(st.st_mode) + ", not a regular file");
  if (std::uint64_t(st.st_size) > max_bytes)
    throw Error(name + " is " + std::to_string(st.st_size) + " bytes; the limit for a " + what + " is " +
                mib(max_bytes));
  std::string out;
  out.reserve(std::size_t(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(f.fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error("cannot read " + name + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    if (out.size() + std::size_t(n) > max_bytes)  // the file grew while being read
      throw Error(name + " is larger than the limit for a " + what + " (" + mib(max_bytes) + ")");
    out.append(buf, std::size_t(n));
  }
  return out;
}

}  // namespace infraplan
