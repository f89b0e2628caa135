// settings/settings.h: parsing of each type (valid, malformed, out of range, empty, unknown word),
// the warning text, warn-once, the unknown-variable check, and README.md's Environment table
// against the settings table (both ways).
#include "settings/settings.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace s = torchada::settings;

namespace {

std::vector<std::string> g_lines;
void record(const char* m) { g_lines.emplace_back(m); }

// Sets (or unsets, for null) a variable for one test and forgets what was warned about.
class Env {
 public:
  Env(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
    s::reset_warnings_for_testing();
    g_lines.clear();
  }
  ~Env() {
    if (had_)
      setenv(name_.c_str(), old_.c_str(), 1);
    else
      unsetenv(name_.c_str());
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

s::Parsed P(s::Id id, const char* v) { return s::parse(s::var(id), v); }

}  // namespace

TEST(SettingsTable, NamesAreUniqueTorchadaNamesWithConsistentDefaults) {
  std::set<std::string> names;
  for (const s::Var& v : s::kVars) {
    EXPECT_EQ(0, std::strncmp(v.name, "TORCHADA_", 9)) << v.name;
    EXPECT_TRUE(names.insert(v.name).second) << "twice: " << v.name;
    EXPECT_GT(std::strlen(v.meaning), 0u) << v.name;
    // A default given as text must itself be a valid value.
    if (*v.def) {
      EXPECT_EQ(s::Status::kValid, s::parse(v, v.def).status) << v.name << "=" << v.def;
    }
    if (v.type == s::Type::kInt) {
      EXPECT_LT(v.lo, v.hi) << v.name;
    }
    if (v.type == s::Type::kWord || v.type == s::Type::kCapability) {
      EXPECT_GT(std::strlen(v.words), 0u) << v.name;
    }
  }
  EXPECT_EQ(&s::var(s::Id::kSimDevices), s::find("TORCHADA_SIM_DEVICES"));
  EXPECT_EQ(nullptr, s::find("TORCHADA_SIM_DEVICE"));
  EXPECT_EQ(&s::var(s::Id::kDisableOpOverride), s::find("TORCHADA_DISABLE_OP_OVERRIDE_neg"));
  EXPECT_EQ(nullptr, s::find("TORCHADA_DISABLE_OP_OVERRIDE_"));  // a family needs a member
}

TEST(SettingsParse, Flag) {
  for (const char* t : {"1", "true", "TRUE", "yes", "On"}) {
    s::Parsed p = P(s::Id::kStrict, t);
    EXPECT_EQ(s::Status::kValid, p.status) << t;
    EXPECT_EQ(1, p.number) << t;
  }
  for (const char* f : {"0", "false", "No", "off"}) {
    s::Parsed p = P(s::Id::kStrict, f);
    EXPECT_EQ(s::Status::kValid, p.status) << f;
    EXPECT_EQ(0, p.number) << f;
  }
  for (const char* bad : {"2", "maybe", "1 ", " 1", "yes!", ""})
    EXPECT_EQ(s::Status::kInvalid, P(s::Id::kStrict, bad).status) << "'" << bad << "'";
  EXPECT_EQ(s::Status::kUnset, P(s::Id::kStrict, nullptr).status);
}

TEST(SettingsParse, Integer) {
  s::Parsed p = P(s::Id::kSimDevices, "16");
  EXPECT_EQ(s::Status::kValid, p.status);
  EXPECT_EQ(16, p.number);
  EXPECT_EQ(1, P(s::Id::kSimDevices, "1").number);
  for (const char* bad :
       {"two", "0", "17", "-1", "2x", "2 ", " 2", "+2", "", "99999999999999999999"})
    EXPECT_EQ(s::Status::kInvalid, P(s::Id::kSimDevices, bad).status) << "'" << bad << "'";
  EXPECT_EQ(s::Status::kValid, P(s::Id::kTraceMaxMb, "1099511627775").status);  // 2^40 - 1
  EXPECT_EQ(s::Status::kInvalid, P(s::Id::kTraceMaxMb, "1099511627776").status);
}

TEST(SettingsParse, WordWithAliasesAnyCase) {
  EXPECT_EQ(0, P(s::Id::kLogLevel, "error").number);
  EXPECT_EQ(1, P(s::Id::kLogLevel, "warning").number);
  EXPECT_EQ(1, P(s::Id::kLogLevel, "1").number);
  EXPECT_EQ(2, P(s::Id::kLogLevel, "INFO").number);
  EXPECT_EQ(3, P(s::Id::kLogLevel, "trace").number);
  EXPECT_EQ(3, P(s::Id::kKernelBridge, "none").number);
  for (const char* bad : {"verbose", "warn ", "4", "", "in", "debugx"})
    EXPECT_EQ(s::Status::kInvalid, P(s::Id::kLogLevel, bad).status) << "'" << bad << "'";
}

TEST(SettingsParse, Capability) {
  EXPECT_EQ(0, P(s::Id::kReportCc, "equivalent").number);
  EXPECT_EQ(1, P(s::Id::kReportCc, "native").number);
  s::Parsed p = P(s::Id::kReportCc, "10.0");
  ASSERT_EQ(s::Status::kValid, p.status);
  EXPECT_EQ(-1, p.number);
  EXPECT_EQ(10, p.major);
  EXPECT_EQ(0, p.minor);
  EXPECT_EQ(9, P(s::Id::kReportCc, "9.0").major);
  for (const char* bad : {"8", "8.", ".5", "0.5", "8.0abc", "8.0.1", "-8.0", "100.0", "x", ""})
    EXPECT_EQ(s::Status::kInvalid, P(s::Id::kReportCc, bad).status) << "'" << bad << "'";
}

TEST(SettingsParse, PathsAndTextEmptyIsUnset) {
  EXPECT_EQ(s::Status::kValid, P(s::Id::kTrace, "/tmp/t.json").status);
  EXPECT_EQ(s::Status::kUnset, P(s::Id::kTrace, "").status);
  EXPECT_EQ(s::Status::kValid, P(s::Id::kSimGemm, "openblas").status);
}

TEST(SettingsWarning, TextNamesVariableValueAcceptedAndFallback) {
  char buf[512];
  s::format_warning(s::var(s::Id::kSimDevices), "TORCHADA_SIM_DEVICES", "two", "1", buf,
                    sizeof buf);
  EXPECT_STREQ("TORCHADA_SIM_DEVICES=two is not a whole number in [1, 16]; using 1", buf);
  s::format_warning(s::var(s::Id::kLogLevel), "TORCHADA_LOG_LEVEL", "verbose", "warn", buf,
                    sizeof buf);
  EXPECT_STREQ("TORCHADA_LOG_LEVEL=verbose is not one of error, warn, info or debug; using warn",
               buf);
  s::format_warning(s::var(s::Id::kStats), "TORCHADA_STATS", "", "off", buf, sizeof buf);
  EXPECT_STREQ(
      "TORCHADA_STATS is set but empty, not 1, true, yes, on or 0, false, no, off; using off", buf);
  s::format_warning(s::var(s::Id::kReportCc), "TORCHADA_REPORT_CC", "8.x", "equivalent", buf,
                    sizeof buf);
  EXPECT_STREQ(
      "TORCHADA_REPORT_CC=8.x is not equivalent, native or a compute capability M.m (e.g. 8.0); "
      "using equivalent",
      buf);
  // A tiny buffer is cut, never overrun.
  char tiny[8];
  s::format_warning(s::var(s::Id::kSimDevices), "TORCHADA_SIM_DEVICES", "two", "1", tiny,
                    sizeof tiny);
  EXPECT_STREQ("TORCHAD", tiny);
}

TEST(SettingsAccessors, ValidValuesAreReturnedWithoutAWord) {
  {
    Env e("TORCHADA_SIM_DEVICES", "4");
    EXPECT_EQ(4, s::integer(s::Id::kSimDevices, record));
  }
  {
    Env e("TORCHADA_LOG_LEVEL", "debug");
    EXPECT_EQ(3, s::word(s::Id::kLogLevel, record));
  }
  {
    Env e("TORCHADA_STRICT", "yes");
    EXPECT_TRUE(s::flag(s::Id::kStrict, record));
  }
  {
    Env e("TORCHADA_BRIDGE_DEVICE_ALLOC", nullptr);  // unset: the table's default, on
    EXPECT_TRUE(s::flag(s::Id::kBridgeDeviceAlloc, record));
  }
  {
    Env e("TORCHADA_DISABLE_OP_OVERRIDE_neg", "1");
    EXPECT_TRUE(s::flag(s::Id::kDisableOpOverride, "neg", record));
    EXPECT_FALSE(s::flag(s::Id::kDisableOpOverride, "silu", record));
  }
  EXPECT_TRUE(g_lines.empty()) << g_lines[0];
}

TEST(SettingsAccessors, MalformedValueWarnsOnceAndGivesTheFallback) {
  Env e("TORCHADA_SIM_DEVICES", "two");
  EXPECT_EQ(1, s::integer(s::Id::kSimDevices, record));
  EXPECT_EQ(1, s::integer(s::Id::kSimDevices, record));  // read again: no second warning
  ASSERT_EQ(1u, g_lines.size());
  EXPECT_EQ("TORCHADA_SIM_DEVICES=two is not a whole number in [1, 16]; using 1", g_lines[0]);
  // A caller's own fallback is the one named.
  setenv("TORCHADA_SIM_MEMORY_MB", "lots", 1);
  EXPECT_EQ(777, s::integer(s::Id::kSimMemoryMb, 777, record));
  unsetenv("TORCHADA_SIM_MEMORY_MB");
  ASSERT_EQ(2u, g_lines.size());
  EXPECT_NE(std::string::npos, g_lines[1].find("; using 777")) << g_lines[1];
  // Another malformed value of the same variable is named again.
  setenv("TORCHADA_SIM_DEVICES", "17", 1);
  EXPECT_EQ(1, s::integer(s::Id::kSimDevices, record));
  ASSERT_EQ(3u, g_lines.size());
  EXPECT_EQ(0u, g_lines[2].find("TORCHADA_SIM_DEVICES=17 is not")) << g_lines[2];
}

TEST(SettingsAccessors, QuietReadersNeverWarn) {
  Env e("TORCHADA_LOG_LEVEL", "verbose");
  EXPECT_EQ(1, s::word(s::Id::kLogLevel, nullptr));
  EXPECT_EQ(s::Status::kInvalid, s::read(s::Id::kLogLevel).status);
  EXPECT_TRUE(g_lines.empty());
  EXPECT_EQ(1, s::word(s::Id::kLogLevel, record));  // the owner's read does
  ASSERT_EQ(1u, g_lines.size());
  EXPECT_EQ("TORCHADA_LOG_LEVEL=verbose is not one of error, warn, info or debug; using warn",
            g_lines[0]);
}

TEST(SettingsAccessors, MalformedFlagAndWordFallBackToTheDefault) {
  {
    Env e("TORCHADA_STATS", "please");
    EXPECT_FALSE(s::flag(s::Id::kStats, record));
    ASSERT_EQ(1u, g_lines.size());
    EXPECT_EQ("TORCHADA_STATS=please is not 1, true, yes, on or 0, false, no, off; using off",
              g_lines[0]);
  }
  {
    Env e("TORCHADA_OPS_RNG", "mt19937");
    EXPECT_EQ(0, s::word(s::Id::kOpsRng, record));  // philox
    ASSERT_EQ(1u, g_lines.size());
    EXPECT_EQ("TORCHADA_OPS_RNG=mt19937 is not one of philox or cpu; using philox", g_lines[0]);
  }
  {
    Env e("TORCHADA_REPORT_CC", "8.0abc");
    s::Parsed p = s::capability(s::Id::kReportCc, record);
    EXPECT_EQ(0, p.number);  // equivalent
    ASSERT_EQ(1u, g_lines.size());
    EXPECT_NE(std::string::npos, g_lines[0].find("TORCHADA_REPORT_CC=8.0abc is not")) << g_lines[0];
  }
  {
    Env e("TORCHADA_TRACE", "");
    EXPECT_EQ(nullptr, s::text(s::Id::kTrace));
  }
}

TEST(SettingsEnvironment, UnknownNamesAndMalformedOwnedValuesWarnOnce) {
  Env e("TORCHADA_STRICT", nullptr);  // resets the state
  const char* env_c[] = {"PATH=/bin",
                         "TORCHADA_SIM_DEVICE=2",      // a typo
                         "TORCHADA_FROBNICATE=1",      // nothing near
                         "TORCHADA_STRICT=sometimes",  // the shim's, malformed
                         "TORCHADA_SIM_DEVICES=two",   // the simulator's: not the shim's word
                         "TORCHADA_BACKEND=gpu",       // skipped: its reader reports it
                         "TORCHADA_DISABLE_OP_OVERRIDE_neg=1",  // a family member
                         "TORCHADA_BUILD_DIR=/b",               // a scripts variable
                         "NOT_TORCHADA_X=1",
                         nullptr};
  std::vector<char*> env;
  for (const char* c : env_c) env.push_back(const_cast<char*>(c));
  s::check_environment(env.data(), s::Owner::kShim, record, {s::Id::kBackend});
  s::check_environment(env.data(), s::Owner::kShim, record, {s::Id::kBackend});  // once only
  ASSERT_EQ(3u, g_lines.size()) << g_lines[0];
  EXPECT_EQ(
      "TORCHADA_SIM_DEVICE is not a variable torchada knows; it is ignored (did you mean "
      "TORCHADA_SIM_DEVICES?)",
      g_lines[0]);
  EXPECT_EQ("TORCHADA_FROBNICATE is not a variable torchada knows; it is ignored", g_lines[1]);
  EXPECT_EQ("TORCHADA_STRICT=sometimes is not 1, true, yes, on or 0, false, no, off; using off",
            g_lines[2]);
  // The reader that finds the same value later says nothing more.
  setenv("TORCHADA_STRICT", "sometimes", 1);
  EXPECT_FALSE(s::flag(s::Id::kStrict, record));
  EXPECT_EQ(3u, g_lines.size());
}

// README.md's Environment table and the settings table name the same variables.
TEST(SettingsReadme, EnvironmentTableMatchesTheSettingsTable) {
  std::ifstream f(TORCHADA_README);
  ASSERT_TRUE(f) << TORCHADA_README;
  std::string line, section;
  bool in = false;
  while (std::getline(f, line)) {
    if (line.rfind("## ", 0) == 0) in = line == "## Environment";
    if (in && line.rfind("| ", 0) == 0) section += line + "\n";
  }
  ASSERT_FALSE(section.empty()) << "no table under '## Environment' in README.md";
  std::set<std::string> readme;
  const std::regex name("TORCHADA_[A-Z0-9_]+");
  for (std::sregex_iterator it(section.begin(), section.end(), name), end; it != end; ++it)
    readme.insert(it->str());
  for (const s::Var& v : s::kVars)
    EXPECT_TRUE(readme.count(v.name)) << v.name << " is missing from README.md's Environment table";
  auto known = [](const std::string& n) {
    for (const s::Var& v : s::kVars)
      if (n == v.name) return true;  // a family, as README writes it: ..._OVERRIDE_<op>
    return s::find(n.c_str()) != nullptr;
  };
  for (const std::string& n : readme)
    EXPECT_TRUE(known(n)) << n
                          << " is in README.md's Environment table but not in settings/settings.h";
}
