#include "walk.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <utility>

namespace torchada::check {
namespace {

constexpr int kMaxDepth = 64;

struct Candidate {
  std::string path;
  dev_t dev;
  ino_t ino;
  bool via_link;
};

bool StartsWithElfMagic(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return true;  // let the checker report why it cannot be read
  unsigned char magic[4] = {};
  const ssize_t n = pread(fd, magic, sizeof magic, 0);
  close(fd);
  return n == 4 && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F';
}

void Walk(const std::string& dir, int depth, std::vector<Candidate>* found,
          std::vector<Target>* errors, uint64_t* skipped) {
  if (depth > kMaxDepth) {
    errors->push_back({dir, "directory nesting deeper than " + std::to_string(kMaxDepth)});
    return;
  }
  DIR* d = opendir(dir.c_str());
  if (!d) {
    errors->push_back({dir, std::string("cannot read directory: ") + std::strerror(errno)});
    return;
  }
  std::vector<std::string> names;
  while (dirent* e = readdir(d)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
      names.emplace_back(e->d_name);
    }
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  for (const std::string& n : names) {
    const std::string path = dir == "/" ? "/" + n : dir + "/" + n;
    struct stat lst {};
    if (lstat(path.c_str(), &lst) != 0) continue;  // vanished meanwhile
    if (S_ISDIR(lst.st_mode)) {
      Walk(path, depth + 1, found, errors, skipped);
      continue;
    }
    struct stat st = lst;
    const bool link = S_ISLNK(lst.st_mode);
    if (link && stat(path.c_str(), &st) != 0) continue;  // dangling
    if (!S_ISREG(st.st_mode)) continue;                  // directories behind links, devices...
    if (!StartsWithElfMagic(path)) {
      if (!link) ++*skipped;
      continue;
    }
    found->push_back({path, st.st_dev, st.st_ino, link});
  }
}

}  // namespace

Expansion ExpandInputs(const std::vector<std::string>& inputs) {
  Expansion out;
  std::set<std::pair<dev_t, ino_t>> seen;
  for (const std::string& in : inputs) {
    struct stat st {};
    if (stat(in.c_str(), &st) != 0) {
      out.targets.push_back({in, std::strerror(errno)});
      continue;
    }
    if (!S_ISDIR(st.st_mode)) {
      // Named explicitly: checked even when it is not ELF (the checker says what it is).
      if (seen.insert({st.st_dev, st.st_ino}).second) out.targets.push_back({in, {}});
      continue;
    }
    std::vector<Candidate> found;
    std::vector<Target> errors;
    std::string dir = in;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    Walk(dir, 0, &found, &errors, &out.skipped);
    // Real files claim their inode first, so a library is reported under its own name.
    std::stable_sort(found.begin(), found.end(), [](const Candidate& a, const Candidate& b) {
      return a.via_link < b.via_link;
    });
    std::vector<std::string> paths;
    for (const Candidate& c : found) {
      if (seen.insert({c.dev, c.ino}).second) paths.push_back(c.path);
    }
    std::sort(paths.begin(), paths.end());
    for (std::string& p : paths) out.targets.push_back({std::move(p), {}});
    for (Target& e : errors) out.targets.push_back(std::move(e));
  }
  return out;
}

}  // namespace torchada::check
