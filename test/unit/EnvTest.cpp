// The environment table (runtime/Env.h): parseEnv over a made-up
// environment (a map), so nothing here depends on the process's variables or
// on env() having been read. The process side (accel-run refusing a bad
// value, --help-env) is test/Plan/env.test.
#include "runtime/Env.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

using namespace accel::rt;

namespace {

ParsedEnv parse(const std::map<std::string, std::string> &vars) {
  return parseEnv([&](const char *name) -> const char * {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

const EnvVar &entry(const std::string &name) {
  for (const EnvVar &v : envTable())
    if (name == v.name)
      return v;
  ADD_FAILURE() << name << " is not in the table";
  static const EnvVar none{"", EnvType::kPath, "", ""};
  return none;
}

std::vector<std::string> boolNames() {
  std::vector<std::string> names;
  for (const EnvVar &v : envTable())
    if (v.type == EnvType::kBool)
      names.push_back(v.name);
  return names;
}

} // namespace

TEST(Env, DefaultsWhenUnsetOrEmpty) {
  for (const ParsedEnv &p :
       {parse({}), parse({{"ACCEL_GPU_GRAPHS", ""}, {"ACCEL_LIBCUDA", ""},
                          {"ACCEL_GPU_DECODE_SPLIT", ""}, {"ACCEL_GPU_GEMV", ""}})}) {
    EXPECT_TRUE(p.status.isOk()) << p.status.message();
    EXPECT_EQ(p.values.libcuda, "libcuda.so.1");
    EXPECT_EQ(p.values.libcublasLt, "");
    EXPECT_EQ(p.values.libnccl, "libnccl.so.2");
    EXPECT_TRUE(p.values.gpuGraphs);
    EXPECT_FALSE(p.values.gpuProfile);
    EXPECT_FALSE(p.values.gpuForcePtx);
    EXPECT_TRUE(p.values.gemmAutotune);
    EXPECT_EQ(p.values.gpuDecodeSplit, 256);
  }
}

TEST(Env, EveryBooleanSpelling) {
  for (const std::string &name : boolNames()) {
    bool Env::*member = entry(name).flag;
    ASSERT_NE(member, nullptr) << name;
    for (const char *yes : {"1", "true", "TRUE", "Yes", "on", "On"}) {
      ParsedEnv p = parse({{name, yes}});
      EXPECT_TRUE(p.status.isOk()) << name << "=" << yes << ": " << p.status.message();
      EXPECT_TRUE(p.values.*member) << name << "=" << yes;
    }
    for (const char *no : {"0", "false", "False", "no", "OFF", "off"}) {
      ParsedEnv p = parse({{name, no}});
      EXPECT_TRUE(p.status.isOk()) << name << "=" << no << ": " << p.status.message();
      EXPECT_FALSE(p.values.*member) << name << "=" << no;
    }
  }
}

TEST(Env, PathsAndCounts) {
  ParsedEnv p = parse({{"ACCEL_LIBCUDA", "/opt/driver/libcuda.so.1"},
                       {"ACCEL_LIBCUBLASLT", "/x/libcublasLt.so.13"},
                       {"ACCEL_LIBNCCL", "libnccl.so.2.21"},
                       {"ACCEL_GPU_DECODE_SPLIT", "4"}});
  EXPECT_TRUE(p.status.isOk()) << p.status.message();
  EXPECT_EQ(p.values.libcuda, "/opt/driver/libcuda.so.1");
  EXPECT_EQ(p.values.libcublasLt, "/x/libcublasLt.so.13");
  EXPECT_EQ(p.values.libnccl, "libnccl.so.2.21");
  EXPECT_EQ(p.values.gpuDecodeSplit, 4);
  EXPECT_EQ(parse({{"ACCEL_GPU_DECODE_SPLIT", "0"}}).values.gpuDecodeSplit, 0);
  EXPECT_EQ(parse({{"ACCEL_GPU_DECODE_SPLIT", "2147483647"}}).values.gpuDecodeSplit, 2147483647);
  EXPECT_EQ(parse({{"ACCEL_GPU_DECODE_SPLIT", "007"}}).values.gpuDecodeSplit, 7);
}

TEST(Env, AMalformedBooleanIsOneSentenceAndKeepsTheDefault) {
  ParsedEnv p = parse({{"ACCEL_GPU_GRAPHS", "maybe"}});
  ASSERT_FALSE(p.status.isOk());
  EXPECT_EQ(p.status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(p.status.message(), "ACCEL_GPU_GRAPHS is 'maybe'; it takes 1, true, yes or on, or 0, "
                                "false, no or off (docs/env.md)");
  EXPECT_TRUE(p.values.gpuGraphs);
  for (const std::string &name : boolNames())
    for (const char *bad : {"2", "y", "enable", " 1", "1 ", "-1"}) {
      ParsedEnv q = parse({{name, bad}});
      EXPECT_EQ(q.status.message(), name + " is '" + bad +
                                        "'; it takes 1, true, yes or on, or 0, false, no or off "
                                        "(docs/env.md)");
    }
}

TEST(Env, AMalformedCountIsOneSentenceAndKeepsTheDefault) {
  for (const char *bad : {"-3", "x", "4k", " 4", "+4", "2147483648", "99999999999999999999",
                          "1.5"}) {
    ParsedEnv p = parse({{"ACCEL_GPU_DECODE_SPLIT", bad}});
    ASSERT_FALSE(p.status.isOk()) << bad;
    EXPECT_EQ(p.status.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(p.status.message(), std::string("ACCEL_GPU_DECODE_SPLIT is '") + bad +
                                      "'; it takes a whole number from 0 to 2147483647 "
                                      "(docs/env.md)");
    EXPECT_EQ(p.values.gpuDecodeSplit, 256) << bad;
  }
}

TEST(Env, RemovedSwitchesAreRefusedWhileSet) {
  ParsedEnv p = parse({{"ACCEL_GPU_GEMV", "0"}});
  ASSERT_FALSE(p.status.isOk());
  EXPECT_EQ(p.status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(p.status.message(),
            "ACCEL_GPU_GEMV is set to '0', but accel no longer reads it: one-row GEMMs always "
            "run Gemv.cu's kernels where they apply; unset it (docs/env.md)");
  const std::set<std::string> want = {"ACCEL_GPU_GEMV",
                                      "ACCEL_GPU_GEMV_SINGLE_ROUND",
                                      "ACCEL_GPU_GEMV_KS",
                                      "ACCEL_GPU_GEMV_WARPS",
                                      "ACCEL_GPU_DECODE_ATTENTION",
                                      "ACCEL_GPU_PDL",
                                      "ACCEL_GPU_TP_PERSISTENT_THREADS",
                                      "ACCEL_GPU_FLASH_PREFILL",
                                      "ACCEL_GPU_FP8_OUTER_SCALES",
                                      "ACCEL_GPU_P2P_ALLREDUCE"};
  std::set<std::string> got;
  for (const RemovedEnvVar &r : removedEnvTable()) {
    got.insert(r.name);
    ParsedEnv q = parse({{r.name, "1"}});
    EXPECT_EQ(q.status.message(), std::string(r.name) +
                                      " is set to '1', but accel no longer reads it: " +
                                      r.instead + "; unset it (docs/env.md)");
  }
  EXPECT_EQ(got, want);
}

TEST(Env, TheFirstBadVariableInTableOrderIsReported) {
  ParsedEnv p = parse({{"ACCEL_GPU_DECODE_SPLIT", "x"},
                       {"ACCEL_GPU_GRAPHS", "maybe"},
                       {"ACCEL_GPU_PDL", "0"},
                       {"ACCEL_GPU_PROFILE", "1"}});
  EXPECT_EQ(p.status.message().rfind("ACCEL_GPU_GRAPHS is 'maybe'", 0), 0u) << p.status.message();
  // The good ones still parse.
  EXPECT_TRUE(p.values.gpuProfile);
  EXPECT_EQ(parse({{"ACCEL_GPU_PDL", "0"}, {"ACCEL_GPU_DECODE_SPLIT", "x"}})
                .status.message()
                .rfind("ACCEL_GPU_DECODE_SPLIT is 'x'", 0),
            0u);
}

// Each row's printed default is what Env holds when the variable is unset,
// and each row sets exactly the member of its type.
TEST(Env, TheTableAgreesWithTheStruct) {
  const Env defaults;
  std::set<std::string> names;
  for (const EnvVar &v : envTable()) {
    EXPECT_TRUE(names.insert(v.name).second) << v.name << " twice";
    EXPECT_EQ(std::string(v.name).rfind("ACCEL_", 0), 0u) << v.name;
    EXPECT_FALSE(std::string(v.meaning).empty()) << v.name;
    EXPECT_EQ(std::string(v.meaning).find('|'), std::string::npos) << v.name; // Markdown cell
    switch (v.type) {
    case EnvType::kPath:
    case EnvType::kText:
      ASSERT_TRUE(v.path && !v.flag && !v.count) << v.name;
      EXPECT_EQ(defaults.*v.path, std::string(v.defaultText) == "(search)" ||
                                          std::string(v.defaultText) == "(none)"
                                      ? ""
                                      : v.defaultText)
          << v.name;
      break;
    case EnvType::kBool:
      ASSERT_TRUE(!v.path && v.flag && !v.count) << v.name;
      EXPECT_EQ(defaults.*v.flag ? "1" : "0", std::string(v.defaultText)) << v.name;
      break;
    case EnvType::kCount:
      ASSERT_TRUE(!v.path && !v.flag && v.count) << v.name;
      EXPECT_EQ(std::to_string(defaults.*v.count), v.defaultText) << v.name;
      break;
    }
  }
  for (const RemovedEnvVar &r : removedEnvTable())
    EXPECT_EQ(names.count(r.name), 0u) << r.name << " is both read and removed";
}

TEST(Env, HelpListsBothTables) {
  const std::string help = envHelp();
  EXPECT_EQ(help.rfind("| variable | type | default | meaning |\n|---|---|---|---|\n", 0), 0u);
  EXPECT_NE(help.find("| `ACCEL_GPU_GRAPHS` | bool | `1` | decode steps replay CUDA graphs"),
            std::string::npos)
      << help;
  EXPECT_NE(help.find("| `ACCEL_LIBCUBLASLT` | path | (search) | "), std::string::npos) << help;
  EXPECT_NE(help.find("| `ACCEL_GPU_DECODE_SPLIT` | count | `256` | "), std::string::npos) << help;
  for (const EnvVar &v : envTable())
    EXPECT_NE(help.find(std::string("| `") + v.name + "` |"), std::string::npos) << v.name;
  for (const RemovedEnvVar &r : removedEnvTable())
    EXPECT_NE(help.find(std::string("| `") + r.name + "` | " + r.instead + " |"),
              std::string::npos)
        << r.name;
}
