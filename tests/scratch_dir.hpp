// A fresh folder for a test's files, removed when the test program ends:
// wherever TempDir() is (the build tree's tmp/ under the test presets, /tmp
// for a bare ctest), a test run leaves nothing behind.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace chunkmeta {

// Named after `name` and this process (ctest runs tests in parallel processes).
inline std::filesystem::path scratch_dir(const std::string& name) {
  struct Removal {
    std::vector<std::filesystem::path> dirs;
    ~Removal() {
      for (const auto& dir : dirs) {
        std::error_code ignored;
        std::filesystem::remove_all(dir, ignored);
      }
    }
  };
  static Removal removal;
  const auto dir = std::filesystem::path(testing::TempDir()) /
                   ("chunkmeta-" + name + "-" + std::to_string(::getpid()));
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  std::filesystem::create_directories(dir);
  removal.dirs.push_back(dir);
  return dir;
}

}  // namespace chunkmeta
