#include "common/output_files.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/error.hpp"

using namespace infraplan;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/infraplan-out-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::vector<std::string> names;
    if (DIR* d = opendir(path.c_str())) {
      while (dirent* e = readdir(d))
        if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") names.push_back(e->d_name);
      closedir(d);
    }
    for (const auto& n : names) unlink((path + "/" + n).c_str());
    rmdir(path.c_str());
  }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    if (DIR* d = opendir(path.c_str())) {
      while (dirent* e = readdir(d))
        if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") names.push_back(e->d_name);
      closedir(d);
    }
    return names;
  }
};

std::string read(const std::string& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string refusal(OutputFiles& o, const std::string& opt, const std::string& path) {
  try {
    o.add(opt, path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(OutputFiles, WritesAllOrNothing) {
  TempDir d;
  const std::string good = d.path + "/good.json";
  std::ofstream(good) << "old";
  OutputFiles o;
  o.add("--trace", good);
  EXPECT_NE(refusal(o, "--requests", d.path + "/nodir/x.csv").find("does not exist"), std::string::npos);
  EXPECT_EQ(read(good), "old");  // nothing written before every output was checked
  o.set(good, "new");
  o.commit();
  EXPECT_EQ(read(good), "new");
  EXPECT_EQ(d.entries().size(), 1u);  // no temporary file left behind
}

TEST(OutputFiles, RefusesInputsDevicesDirectoriesAndDuplicates) {
  TempDir d;
  const std::string in = d.path + "/scenario.json";
  std::ofstream(in) << "{}";
  symlink(in.c_str(), (d.path + "/alias.json").c_str());
  OutputFiles o;
  o.add_input(in);
  EXPECT_NE(refusal(o, "--trace", in).find("is the input"), std::string::npos);
  EXPECT_NE(refusal(o, "--trace", d.path + "/alias.json").find("is the input"), std::string::npos);
  EXPECT_NE(refusal(o, "--trace", "/dev/null").find("character device"), std::string::npos);
  EXPECT_NE(refusal(o, "--trace", d.path).find("directory"), std::string::npos);
  EXPECT_NE(refusal(o, "--trace", d.path + "/").find("directory"), std::string::npos);
  o.add("--trace", d.path + "/a.json");
  EXPECT_NE(refusal(o, "--requests", d.path + "/./a.json").find("also the output of --trace"), std::string::npos);
  EXPECT_EQ(read(in), "{}");
}

TEST(OutputFiles, NeverFollowsAPlantedSymlinkAndTakesLongNames) {
  TempDir d;
  const std::string victim = d.path + "/victim";
  std::ofstream(victim) << "precious";
  // The old fixed temporary name, planted as a link to another file.
  const std::string name(255, 'x');
  const std::string target = d.path + "/" + name;
  symlink(victim.c_str(), (target + ".tmp-infraplan").c_str());  // fails (name too long): fine
  symlink(victim.c_str(), (d.path + "/out.json.tmp-infraplan").c_str());
  const mode_t old_mask = umask(022);
  write_output_file(d.path + "/out.json", "result");
  umask(old_mask);
  write_output_file(target, "long");  // a legal 255-byte file name
  EXPECT_EQ(read(victim), "precious");
  EXPECT_EQ(read(d.path + "/out.json"), "result");
  EXPECT_EQ(read(target), "long");
  struct stat st {};
  ASSERT_EQ(stat((d.path + "/out.json").c_str(), &st), 0);
  EXPECT_NE(st.st_mode & 0044, 0u) << "outputs get the usual permissions, not mkstemp's 0600";
}
