#include "common/output_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/error.hpp"
#include "common/file_kind.hpp"

namespace infraplan {

namespace fs = std::filesystem;

namespace {

std::string dir_of(const std::string& path) {
  const fs::path p(path);
  return p.has_parent_path() ? p.parent_path().string() : ".";
}

/// The permissions a newly created file gets (0666 less the umask); mkstemp makes it 0600.
mode_t file_mode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

/// Writes `content` to a new temporary file beside `target`; returns its path.
std::string write_temp(const std::string& target, const std::string& content) {
  std::string tmpl = dir_of(target) + "/.infraplan-XXXXXX";
  const int fd = ::mkstemp(tmpl.data());  // O_CREAT | O_EXCL: never opens an existing file or link
  if (fd < 0)
    throw Error("cannot create a temporary file in '" + dir_of(target) + "' for '" + target +
                "': " + std::strerror(errno));
  std::size_t done = 0;
  int err = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      err = errno;
      break;
    }
    done += std::size_t(n);
  }
  if (!err && ::fchmod(fd, file_mode()) != 0) err = errno;
  if (!err && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && !err) err = errno;
  if (err) {
    ::unlink(tmpl.c_str());
    throw Error("failed writing '" + target + "': " + std::strerror(err));
  }
  return tmpl;
}

}  // namespace

void OutputFiles::add_input(const std::string& path) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return;
  inputs_.push_back({path, (unsigned long long)st.st_dev, (unsigned long long)st.st_ino});
}

void OutputFiles::add(const std::string& option, const std::string& path) {
  const std::string name = option + " '" + path + "'";
  if (path.empty()) throw Error(option + ": the output file name is empty");
  if (path.back() == '/') throw Error(name + " names a directory; give a file name");
  // The target itself: absent, a regular file, or a symlink (the rename replaces the link, it
  // never writes through it) — anything else is refused rather than replaced.
  struct stat lst {};
  if (::lstat(path.c_str(), &lst) == 0 && !S_ISREG(lst.st_mode) && !S_ISLNK(lst.st_mode))
    throw Error(name + " is " + file_kind_of(lst.st_mode) + "; outputs must be regular files");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode))
      throw Error(name + " points to " + file_kind_of(st.st_mode) + "; outputs must be regular files");
    for (const auto& in : inputs_)
      if ((unsigned long long)st.st_dev == in.dev && (unsigned long long)st.st_ino == in.ino)
        throw Error(name + " is the input '" + in.path + "' of this run; write the output elsewhere");
  }
  const std::string dir = dir_of(path);
  struct stat dst {};
  if (::stat(dir.c_str(), &dst) != 0)
    throw Error("cannot write " + name + ": directory '" + dir + "' does not exist");
  if (!S_ISDIR(dst.st_mode)) throw Error("cannot write " + name + ": '" + dir + "' is not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw Error("cannot write " + name + ": directory '" + dir + "' is not writable");
  std::error_code ec;
  const fs::path canon = fs::weakly_canonical(fs::absolute(path, ec), ec);
  for (const auto& o : outputs_) {
    std::error_code ec2;
    if (fs::weakly_canonical(fs::absolute(o.path, ec2), ec2) == canon)
      throw Error(name + " is also the output of " + o.option + "; give each output its own file");
  }
  outputs_.push_back({option, path, "", false});
}

void OutputFiles::set(const std::string& path, std::string content) {
  for (auto& o : outputs_)
    if (o.path == path) {
      o.content = std::move(content);
      o.has_content = true;
      return;
    }
  throw Error("internal: output '" + path + "' was not registered");
}

void OutputFiles::commit() {
  std::vector<std::string> temps;
  auto cleanup = [&](std::size_t from) {
    for (std::size_t i = from; i < temps.size(); ++i) ::unlink(temps[i].c_str());
  };
  std::vector<const Output*> todo;
  for (const auto& o : outputs_)
    if (o.has_content) todo.push_back(&o);
  try {
    for (const Output* o : todo) temps.push_back(write_temp(o->path, o->content));
  } catch (...) {
    cleanup(0);
    throw;
  }
  for (std::size_t i = 0; i < todo.size(); ++i) {
    if (::rename(temps[i].c_str(), todo[i]->path.c_str()) != 0) {
      const int err = errno;
      cleanup(i);
      throw Error("cannot move the output into place at '" + todo[i]->path + "': " + std::strerror(err));
    }
  }
  outputs_.clear();
}

void write_output_file(const std::string& path, const std::string& content) {
  OutputFiles out;
  out.add("output", path);
  out.set(path, content);
  out.commit();
}

}  // namespace infraplan
