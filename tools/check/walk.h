// Command-line inputs expanded into the files to check.
//
// A file named on the command line is always checked (a symlink is followed). A directory is
// walked recursively (an unpacked wheel, a site-packages tree, a build tree): regular files that
// start with the ELF magic are checked, other files are counted as skipped, symlinks to files are
// followed but a file reached twice (libcudart.so -> libcudart.so.13) is checked once under its
// real name, symlinks to directories are not followed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace torchada::check {

struct Target {
  std::string path;
  std::string error;  // set when the input cannot be used (missing, unreadable directory)
};

struct Expansion {
  std::vector<Target> targets;  // in command-line order, each directory's files sorted
  uint64_t skipped = 0;
};

Expansion ExpandInputs(const std::vector<std::string>& inputs);

}  // namespace torchada::check
