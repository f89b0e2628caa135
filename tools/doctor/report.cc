// The report model, its text and JSON renderings, and the small utilities the checks share.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "doctor.h"

extern char** environ;

namespace torchada::doctor {

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kOk:
      return "ok";
    case Verdict::kWarning:
      return "warning";
    case Verdict::kProblem:
      return "problem";
  }
  return "problem";
}

std::vector<std::string>& Check::List(const std::string& k) {
  for (auto& [key, items] : lists)
    if (key == k) return items;
  lists.emplace_back(k, std::vector<std::string>{});
  return lists.back().second;
}

void Check::Raise(Verdict v, const std::string& why, const std::string& how) {
  if (static_cast<int>(v) > static_cast<int>(verdict)) verdict = v;
  if (!why.empty()) summary = summary.empty() ? why : summary + " " + why;
  if (!how.empty()) fix = fix.empty() ? how : fix + " " + how;
}

const std::string* Check::FactValue(const std::string& k) const {
  for (const auto& [key, v] : facts)
    if (key == k) return &v;
  return nullptr;
}

Verdict Report::Overall() const {
  Verdict worst = Verdict::kOk;
  for (const Section& s : sections)
    for (const Check& c : s.checks)
      if (static_cast<int>(c.verdict) > static_cast<int>(worst)) worst = c.verdict;
  return worst;
}

std::string Join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

bool FileExists(const std::string& p) {
  struct stat st {};
  return !p.empty() && ::stat(p.c_str(), &st) == 0;
}

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

const FoundLibrary* Context::Lib(const std::string& key) const {
  for (const FoundLibrary& l : libs)
    if (l.key == key) return &l;
  return nullptr;
}

// ---- text ------------------------------------------------------------------------------------

namespace {

std::string Wrap(const std::string& text, const std::string& indent, size_t width = 100) {
  std::string out, line;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string para = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    line.clear();
    size_t i = 0;
    while (i < para.size()) {
      size_t sp = para.find(' ', i);
      std::string word = para.substr(i, sp == std::string::npos ? std::string::npos : sp - i);
      i = sp == std::string::npos ? para.size() : sp + 1;
      if (!line.empty() && indent.size() + line.size() + 1 + word.size() > width) {
        out += indent + line + "\n";
        line.clear();
      }
      line += (line.empty() ? "" : " ") + word;
    }
    out += indent + line + "\n";
  }
  return out;
}

}  // namespace

std::string RenderText(const Report& r, bool color) {
  auto paint = [&](Verdict v, const std::string& s) {
    if (!color) return s;
    const char* c = v == Verdict::kOk        ? "\033[32m"
                    : v == Verdict::kWarning ? "\033[33m"
                                             : "\033[31m";
    return std::string(c) + s + "\033[0m";
  };
  std::string out = "torchada-doctor " + r.version + "\n";
  int counts[3] = {0, 0, 0};
  for (const Section& s : r.sections) {
    out += "\n== " + s.title + " ==\n";
    for (const Check& c : s.checks) {
      ++counts[static_cast<int>(c.verdict)];
      char tag[16];
      std::snprintf(tag, sizeof tag, "[%s]", VerdictName(c.verdict));
      char head[32];
      std::snprintf(head, sizeof head, "%-10s", tag);
      out += paint(c.verdict, head) + c.title + "\n";
      if (!c.summary.empty()) out += Wrap(c.summary, "          ");
      for (const auto& [k, v] : c.facts) out += Wrap(k + ": " + v, "            ");
      for (const auto& [k, items] : c.lists) {
        if (items.empty()) continue;
        out += "            " + k + " (" + std::to_string(items.size()) + "):\n";
        bool words = std::none_of(items.begin(), items.end(), [](const std::string& i) {
          return i.find(' ') != std::string::npos;
        });
        if (words)  // names: as many to a line as fit
          out += Wrap(Join(items, " "), "              ");
        else  // sentences: one to a line
          for (const std::string& i : items) out += Wrap(i, "              ");
      }
      if (!c.fix.empty()) out += Wrap("fix: " + c.fix, "          ");
    }
  }
  Verdict all = r.Overall();
  char tail[160];
  std::snprintf(tail, sizeof tail, "\nverdict: %s (%d ok, %d warnings, %d problems)\n",
                VerdictName(all), counts[0], counts[1], counts[2]);
  out += paint(all, tail);
  return out;
}

// ---- JSON ------------------------------------------------------------------------------------

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);  // UTF-8 passes through; invalid bytes are not expected
        }
    }
  }
  return out + "\"";
}

std::string RenderJson(const Report& r) {
  int counts[3] = {0, 0, 0};
  std::string secs;
  for (size_t si = 0; si < r.sections.size(); ++si) {
    const Section& s = r.sections[si];
    secs += si ? ",\n" : "\n";
    secs += "    {\"id\": " + JsonString(s.id) + ", \"title\": " + JsonString(s.title) +
            ", \"checks\": [";
    for (size_t ci = 0; ci < s.checks.size(); ++ci) {
      const Check& c = s.checks[ci];
      ++counts[static_cast<int>(c.verdict)];
      secs += ci ? ",\n" : "\n";
      secs += "      {\"id\": " + JsonString(c.id) + ", \"title\": " + JsonString(c.title) +
              ", \"verdict\": " + JsonString(VerdictName(c.verdict)) +
              ", \"summary\": " + JsonString(c.summary) + ", \"fix\": " + JsonString(c.fix) +
              ",\n       \"facts\": {";
      for (size_t i = 0; i < c.facts.size(); ++i)
        secs +=
            (i ? ", " : "") + JsonString(c.facts[i].first) + ": " + JsonString(c.facts[i].second);
      secs += "},\n       \"lists\": {";
      for (size_t i = 0; i < c.lists.size(); ++i) {
        secs += (i ? ", " : "") + JsonString(c.lists[i].first) + ": [";
        for (size_t j = 0; j < c.lists[i].second.size(); ++j)
          secs += (j ? ", " : "") + JsonString(c.lists[i].second[j]);
        secs += "]";
      }
      secs += "}}";
    }
    secs += "\n    ]}";
  }
  Verdict all = r.Overall();
  std::string out = "{\n  \"tool\": \"torchada-doctor\",\n  \"schema_version\": 1,\n";
  out += "  \"version\": " + JsonString(r.version) + ",\n";
  out += "  \"verdict\": " + JsonString(VerdictName(all)) + ",\n";
  out += "  \"exit_status\": " + std::to_string(all == Verdict::kProblem ? 1 : 0) + ",\n";
  out += "  \"counts\": {\"ok\": " + std::to_string(counts[0]) +
         ", \"warning\": " + std::to_string(counts[1]) +
         ", \"problem\": " + std::to_string(counts[2]) + "},\n";
  out += "  \"sections\": [" + secs + "\n  ]\n}\n";
  return out;
}

// ---- child processes -------------------------------------------------------------------------

std::vector<std::string> CurrentEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) env.emplace_back(*e);
  return env;
}

void SetEnv(std::vector<std::string>& env, const std::string& k, const char* v) {
  const std::string prefix = k + "=";
  for (size_t i = 0; i < env.size();) {
    if (StartsWith(env[i], prefix))
      env.erase(env.begin() + static_cast<long>(i));
    else
      ++i;
  }
  if (v != nullptr) env.push_back(prefix + v);
}

std::string ChildResult::Describe() const {
  if (!started) return "could not start: " + start_error;
  if (timed_out) return "did not finish in time (killed)";
  if (signal != 0) {
    const char* name = sigabbrev_np(signal);
    return std::string("killed by SIG") + (name ? name : std::to_string(signal).c_str());
  }
  return "exit status " + std::to_string(exit_code);
}

ChildResult RunChild(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                     int timeout_s) {
  ChildResult r;
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    r.start_error = std::strerror(errno);
    return r;
  }
  std::vector<char*> args, envp;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  int exec_pipe[2];
  if (pipe2(exec_pipe, O_CLOEXEC) != 0) {
    r.start_error = std::strerror(errno);
    return r;
  }
  pid_t pid = fork();
  if (pid < 0) {
    r.start_error = std::strerror(errno);
    return r;
  }
  if (pid == 0) {
    setpgid(0, 0);  // its own group: a timeout ends whatever it started
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    execvpe(args[0], args.data(), envp.data());
    int e = errno;
    ssize_t w = write(exec_pipe[1], &e, sizeof e);
    (void)w;
    _exit(127);
  }
  setpgid(pid, pid);
  close(out_pipe[1]);
  close(err_pipe[1]);
  close(exec_pipe[1]);
  int exec_errno = 0;
  if (read(exec_pipe[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno) {
    r.start_error = argv[0] + ": " + std::strerror(exec_errno);
    close(exec_pipe[0]);
    close(out_pipe[0]);
    close(err_pipe[0]);
    waitpid(pid, nullptr, 0);
    return r;
  }
  close(exec_pipe[0]);
  r.started = true;
  timespec start{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open_fds = 2;
  while (open_fds > 0) {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    double left = timeout_s - ((now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9);
    if (left <= 0) {
      r.timed_out = true;
      kill(-pid, SIGKILL);
      break;
    }
    int n = poll(fds, 2, static_cast<int>(left * 1000) + 1);
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[4096];
      ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        if (sinks[i]->size() < (4u << 20)) sinks[i]->append(buf, static_cast<size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (pollfd& p : fds)
    if (p.fd >= 0) close(p.fd);
  int status = 0;
  if (r.timed_out) {
    waitpid(pid, &status, 0);
    return r;
  }
  // Output closed: the child is exiting (or closed its descriptors; wait for it within the limit).
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - start.tv_sec > timeout_s) {
      r.timed_out = true;
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      return r;
    }
    usleep(2000);
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

}  // namespace torchada::doctor
