#pragma once
// The output files of one run, written safely:
//  - every output is checked before the run does its work: its directory exists and is writable;
//    it is not a directory, a device, a FIFO or a socket; it is not an input of the same run
//    (through whatever path or symlink); no two outputs are the same file;
//  - nothing is written until the run has produced every output: a failure leaves all of them
//    as they were;
//  - each file goes through a temporary file created with mkstemp (O_CREAT | O_EXCL, so never
//    through a symlink planted in its place) in the target's own directory, then renamed over
//    the target. The temporary name is short, so any legal file name (up to 255 bytes) works.
#include <string>
#include <vector>

namespace infraplan {

class OutputFiles {
 public:
  /// An input of the run; an output naming the same file is refused. Paths that do not exist
  /// are ignored.
  void add_input(const std::string& path);
  /// Registers an output given by `option` (for messages, e.g. "--trace") and checks it now;
  /// throws infraplan::Error when it cannot be written safely.
  void add(const std::string& option, const std::string& path);
  /// The content of a registered output, kept until commit().
  void set(const std::string& path, std::string content);
  /// Writes every output that has content: all temporary files first, then the renames.
  /// Throws infraplan::Error (removing the temporary files) on failure.
  void commit();

 private:
  struct Output {
    std::string option, path, content;
    bool has_content = false;
  };
  struct Input {
    std::string path;
    unsigned long long dev = 0, ino = 0;
  };
  std::vector<Input> inputs_;
  std::vector<Output> outputs_;
};

/// Writes one file safely (a run with a single output).
void write_output_file(const std::string& path, const std::string& content);

}  // namespace infraplan
