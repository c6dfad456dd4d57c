#pragma once
// What a path that is not a regular file is, for error messages of the input and output file
// checks (common/input_file.cpp, common/output_files.cpp): "a directory", "a FIFO (named pipe)", …
#include <sys/stat.h>

#include <string>

namespace infraplan {

inline std::string file_kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO (named pipe)";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

}  // namespace infraplan
