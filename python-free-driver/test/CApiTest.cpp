//===- CApiTest.cpp - the C API, through libaccel.so ----------------------===//
//
// Compiles the llama_op18 fixture through accel_compile() once, then scores
// its input ids whole and token by token against the logits HF transformers
// produced, generates greedily, and checks that every error comes back as
// the documented code with a message naming the problem.
//
//===----------------------------------------------------------------------===//
#include "accel.h"

#include "core/Npy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

namespace {

const std::string kFixture = std::string(ACCEL_SOURCE_DIR) + "/test/fixtures/models/llama_op18";

/// A fresh directory under gtest's temp dir.
std::string makeTempDir() {
  std::string tmpl = ::testing::TempDir() + "accel-capi-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  const char *dir = mkdtemp(buf.data());
  return dir ? std::string(dir) : std::string();
}

bool fileExists(const std::string &path) { return access(path.c_str(), F_OK) == 0; }

void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// Expects `status` to be `code` with a message containing every one of
/// `parts`.
void expectError(accel_status status, accel_status code, std::vector<std::string> parts) {
  std::string msg = accel_last_error();
  EXPECT_EQ(status, code) << "got " << accel_status_name(status) << ": " << msg;
  for (const std::string &p : parts)
    EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' is not in: " << msg;
}

class CApiTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(makeTempDir());
    ASSERT_FALSE(dir_->empty());
    plan_ = new std::string(*dir_ + "/model.plan");
    accel_compile_options co;
    accel_compile_options_init(&co);
    co.onnx_path = nullptr;
    std::string onnx = kFixture + "/model.onnx";
    co.onnx_path = onnx.c_str();
    co.output_path = plan_->c_str();
    accel_status s = accel_compile(&co);
    ASSERT_EQ(s, ACCEL_OK) << accel_last_error();

    auto ids = accel::rt::readNpy(kFixture + "/input_ids.npy");
    ASSERT_TRUE(ids.isOk()) << ids.status().message();
    ids_ = new std::vector<int64_t>(ids->toInt64s());
    auto logits = accel::rt::readNpy(kFixture + "/logits.npy");
    ASSERT_TRUE(logits.isOk()) << logits.status().message();
    ASSERT_EQ(logits->dtype(), accel::rt::DType::kF32);
    vocab_ = logits->dim(-1);
    const float *p = logits->data<float>();
    expected_ = new std::vector<float>(p, p + logits->numElements());
  }
  static void TearDownTestSuite() {
    if (dir_ && !dir_->empty())
      std::system(("rm -rf '" + *dir_ + "'").c_str());
    delete dir_;
    delete plan_;
    delete ids_;
    delete expected_;
  }

  void SetUp() override {
    ASSERT_TRUE(plan_ && fileExists(*plan_)) << "the suite's compile failed";
    ASSERT_EQ(accel_model_load(plan_->c_str(), nullptr, &model_), ACCEL_OK)
        << accel_last_error();
    ASSERT_NE(model_, nullptr);
  }
  void TearDown() override { accel_model_free(model_); }

  /// Scores the fixture with `chunk` and compares with HF's logits.
  void expectMatchesReference(int64_t chunk) {
    std::vector<float> logits(ids_->size() * vocab_, NAN);
    ASSERT_EQ(accel_score(model_, ids_->data(), ids_->size(), chunk, logits.data()), ACCEL_OK)
        << accel_last_error();
    float maxRef = 0, maxErr = 0;
    for (size_t i = 0; i < logits.size(); ++i) {
      maxRef = std::max(maxRef, std::fabs((*expected_)[i]));
      float err = std::fabs(logits[i] - (*expected_)[i]);
      maxErr = std::isnan(err) ? INFINITY : std::max(maxErr, err);
    }
    EXPECT_GT(maxRef, 0.0f);
    EXPECT_LE(maxErr, 1e-4f * maxRef) << "chunk " << chunk << ": max |err| " << maxErr
                                      << ", max |logit| " << maxRef;
  }

  static std::string *dir_;
  static std::string *plan_;
  static std::vector<int64_t> *ids_;
  static std::vector<float> *expected_;
  static int64_t vocab_;
  accel_model *model_ = nullptr;
};

std::string *CApiTest::dir_ = nullptr;
std::string *CApiTest::plan_ = nullptr;
std::vector<int64_t> *CApiTest::ids_ = nullptr;
std::vector<float> *CApiTest::expected_ = nullptr;
int64_t CApiTest::vocab_ = 0;

//===----------------------------------------------------------------------===//
// What works
//===----------------------------------------------------------------------===//

TEST(CApiVersion, HeaderMatchesLibrary) {
  EXPECT_EQ(accel_version(), unsigned(ACCEL_API_VERSION));
  char expect[32];
  std::snprintf(expect, sizeof expect, "%d.%d.%d", ACCEL_VERSION_MAJOR, ACCEL_VERSION_MINOR,
                ACCEL_VERSION_PATCH);
  EXPECT_STREQ(accel_version_string(), expect);
  EXPECT_STREQ(accel_status_name(ACCEL_OK), "ok");
  EXPECT_STREQ(accel_status_name(ACCEL_ERROR_DATA_LOSS), "data loss");
  EXPECT_STREQ(accel_status_name(static_cast<accel_status>(99)), "unknown");
}

TEST_F(CApiTest, ModelFacts) {
  EXPECT_EQ(accel_model_vocab_size(model_), vocab_);
  EXPECT_GT(accel_model_max_model_len(model_), int64_t(ids_->size()));
  EXPECT_EQ(accel_model_has_tokenizer(model_), 0); // llama_op18 has no tokenizer.json
  EXPECT_EQ(accel_model_vocab_size(nullptr), -1);
  EXPECT_EQ(accel_model_max_model_len(nullptr), -1);
  EXPECT_EQ(accel_model_has_tokenizer(nullptr), 0);
}

TEST_F(CApiTest, ScoreWholePromptMatchesReference) { expectMatchesReference(0); }

TEST_F(CApiTest, ScoreTokenByTokenMatchesReference) { expectMatchesReference(1); }

TEST_F(CApiTest, ScoreInChunksMatchesReference) { expectMatchesReference(5); }

TEST_F(CApiTest, SuccessClearsTheLastError) {
  float logit[256];
  int64_t bad = -1;
  ASSERT_NE(accel_score(model_, &bad, 1, 0, logit), ACCEL_OK);
  EXPECT_STRNE(accel_last_error(), "");
  ASSERT_EQ(accel_score(model_, ids_->data(), 1, 0, logit), ACCEL_OK) << accel_last_error();
  EXPECT_STREQ(accel_last_error(), "");
}

TEST_F(CApiTest, GreedyGenerationFollowsTheArgmax) {
  accel_generate_options go;
  accel_generate_options_init(&go);
  go.max_tokens = 4;
  go.ignore_eos = 1;
  const size_t promptLen = 5;
  int64_t *tokens = nullptr;
  size_t n = 0;
  ASSERT_EQ(accel_generate_tokens(model_, ids_->data(), promptLen, &go, nullptr, nullptr, &tokens,
                                  &n),
            ACCEL_OK)
      << accel_last_error();
  ASSERT_EQ(n, 4u);
  ASSERT_NE(tokens, nullptr);
  // Each generated token is the argmax of the logits of the sequence so far.
  std::vector<int64_t> seq(ids_->begin(), ids_->begin() + promptLen);
  seq.insert(seq.end(), tokens, tokens + n);
  std::vector<float> logits(seq.size() * vocab_);
  ASSERT_EQ(accel_score(model_, seq.data(), seq.size(), 0, logits.data()), ACCEL_OK)
      << accel_last_error();
  for (size_t i = 0; i < n; ++i) {
    const float *row = logits.data() + (promptLen - 1 + i) * vocab_;
    int64_t argmax = std::max_element(row, row + vocab_) - row;
    EXPECT_EQ(tokens[i], argmax) << "generated token " << i;
  }
  accel_tokens_free(tokens);
}

TEST_F(CApiTest, SeededSamplingIsReproducible) {
  accel_generate_options go;
  accel_generate_options_init(&go);
  go.max_tokens = 6;
  go.ignore_eos = 1;
  go.temperature = 1.0f;
  go.top_k = 50;
  go.has_seed = 1;
  go.seed = 1234;
  std::vector<int64_t> runs[2];
  for (auto &run : runs) {
    int64_t *tokens = nullptr;
    size_t n = 0;
    ASSERT_EQ(accel_generate_tokens(model_, ids_->data(), 3, &go, nullptr, nullptr, &tokens, &n),
              ACCEL_OK)
        << accel_last_error();
    run.assign(tokens, tokens + n);
    accel_tokens_free(tokens);
  }
  EXPECT_EQ(runs[0].size(), 6u);
  EXPECT_EQ(runs[0], runs[1]);
}

TEST_F(CApiTest, OneModelServesTwoThreads) {
  // Calls on one model are serialised inside it: both threads get the
  // reference logits.
  std::vector<float> a(ids_->size() * vocab_), b(ids_->size() * vocab_);
  accel_status sa = static_cast<accel_status>(-1), sb = sa;
  std::thread ta([&] { sa = accel_score(model_, ids_->data(), ids_->size(), 1, a.data()); });
  std::thread tb([&] { sb = accel_score(model_, ids_->data(), ids_->size(), 0, b.data()); });
  ta.join();
  tb.join();
  ASSERT_EQ(sa, ACCEL_OK);
  ASSERT_EQ(sb, ACCEL_OK);
  float maxRef = 0;
  for (float v : *expected_)
    maxRef = std::max(maxRef, std::fabs(v));
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_NEAR(a[i], (*expected_)[i], 1e-4f * maxRef) << i;
    ASSERT_NEAR(b[i], (*expected_)[i], 1e-4f * maxRef) << i;
  }
}

//===----------------------------------------------------------------------===//
// Errors: each one a code and a message naming the problem
//===----------------------------------------------------------------------===//

TEST(CApiCompile, MissingOnnxFile) {
  std::string dir = makeTempDir();
  std::string onnx = dir + "/no-such-model.onnx", plan = dir + "/out.plan";
  accel_compile_options co;
  accel_compile_options_init(&co);
  co.onnx_path = onnx.c_str();
  co.output_path = plan.c_str();
  expectError(accel_compile(&co), ACCEL_ERROR_NOT_FOUND, {onnx, "cannot open"});
  EXPECT_FALSE(fileExists(plan));
  rmdir(dir.c_str());
}

/// Compiles the fixture with `tp` ranks and `pp` stages into `plan`, loads it
/// and checks that its scores are HF's logits; leaves `co` set up for the
/// caller's refusal checks.
void compileScoresLikeHF(accel_compile_options &co, const std::string &onnx,
                         const std::string &plan, int tp, int pp) {
  accel_compile_options_init(&co);
  co.onnx_path = onnx.c_str();
  co.output_path = plan.c_str();
  co.tp_size = tp;
  co.pp_size = pp;
  ASSERT_EQ(accel_compile(&co), ACCEL_OK) << accel_last_error();
  accel_model *model = nullptr;
  ASSERT_EQ(accel_model_load(plan.c_str(), nullptr, &model), ACCEL_OK) << accel_last_error();
  auto ids = accel::rt::readNpy(kFixture + "/input_ids.npy");
  auto want = accel::rt::readNpy(kFixture + "/logits.npy");
  ASSERT_TRUE(ids.isOk() && want.isOk());
  std::vector<int64_t> tokens = ids->toInt64s();
  const int64_t vocab = want->dim(-1);
  std::vector<float> logits(tokens.size() * size_t(vocab), NAN);
  ASSERT_EQ(accel_score(model, tokens.data(), tokens.size(), 1, logits.data()), ACCEL_OK)
      << accel_last_error();
  float maxRef = 0, maxErr = 0;
  for (size_t i = 0; i < logits.size(); ++i) {
    maxRef = std::max(maxRef, std::fabs(want->data<float>()[i]));
    maxErr = std::max(maxErr, std::fabs(logits[i] - want->data<float>()[i]));
  }
  EXPECT_LE(maxErr, 1e-4f * maxRef) << "tp " << tp << " pp " << pp;
  accel_model_free(model);
  std::remove(plan.c_str());
}

// A tensor-parallel plan (tp_size 2) compiles and loads like any other;
// its logits are HF's. tp_size 3 does not divide the 4 heads: one sentence.
TEST(CApiCompile, TensorParallelPlanScoresLikeHF) {
  std::string dir = makeTempDir();
  std::string onnx = kFixture + "/model.onnx", plan = dir + "/tp2.plan";
  accel_compile_options co;
  compileScoresLikeHF(co, onnx, plan, 2, 1);
  co.tp_size = 3;
  expectError(accel_compile(&co), ACCEL_ERROR_INVALID_MODEL,
              {"-tp=3 does not divide the 4 attention heads of layer 0"});
  EXPECT_FALSE(fileExists(plan));
  rmdir(dir.c_str());
}

// A Hugging Face checkpoint folder compiles through the same call: onnx_path names the folder
// (docs/checkpoints.md). test/fixtures/checkpoints/llama holds the model of the llama_op18
// fixture, so its plan scores that fixture's HF logits.
TEST(CApiCompile, CheckpointFolderScoresLikeHF) {
  std::string dir = makeTempDir();
  accel_compile_options co;
  compileScoresLikeHF(co, std::string(ACCEL_SOURCE_DIR) + "/test/fixtures/checkpoints/llama",
                      dir + "/ckpt.plan", 1, 1);
  rmdir(dir.c_str());
}

// A plan of 2 pipeline stages x 2 ranks (pp_size, tp_size) loads and scores
// like the unsplit plan: HF's logits. 3 stages of a 2-layer model: one
// sentence.
TEST(CApiCompile, PipelinedPlanScoresLikeHF) {
  std::string dir = makeTempDir();
  std::string onnx = kFixture + "/model.onnx", plan = dir + "/pp2.plan";
  accel_compile_options co;
  compileScoresLikeHF(co, onnx, plan, 2, 2);
  co.tp_size = 1;
  co.pp_size = 3;
  expectError(accel_compile(&co), ACCEL_ERROR_INVALID_MODEL,
              {"-pp=3 asks for more pipeline stages than the 2 decoder layers of this model"});
  EXPECT_FALSE(fileExists(plan));
  co.pp_size = -1;
  expectError(accel_compile(&co), ACCEL_ERROR_INVALID_ARGUMENT,
              {"options->pp_size must not be negative, got -1"});
  rmdir(dir.c_str());
}

TEST(CApiCompile, GarbageOnnxFileNamesTheFile) {
  std::string dir = makeTempDir();
  std::string onnx = dir + "/garbage.onnx", plan = dir + "/out.plan";
  writeFile(onnx, "this is not a protobuf \x01\x02\x03\xff\xff\xff\xff");
  accel_compile_options co;
  accel_compile_options_init(&co);
  co.onnx_path = onnx.c_str();
  co.output_path = plan.c_str();
  expectError(accel_compile(&co), ACCEL_ERROR_INVALID_MODEL,
              {onnx + ": error: ", "not a valid ONNX model"});
  EXPECT_FALSE(fileExists(plan));
  std::remove(onnx.c_str());
  rmdir(dir.c_str());
}

/// Protobuf wire format, enough to write a tiny ONNX model by hand.
std::string varint(uint64_t v) {
  std::string out;
  do {
    out += char((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v);
  return out;
}
std::string field(int number, uint64_t v) { return varint(uint64_t(number) << 3) + varint(v); }
std::string field(int number, const std::string &bytes) {
  return varint(uint64_t(number) << 3 | 2) + varint(bytes.size()) + bytes;
}

/// y = FancyOp(x), x and y float32 [4], opset 18: a well-formed model with an
/// operator accel does not know.
std::string unsupportedOperatorModel() {
  auto value = [](const std::string &name) {
    std::string dim = field(1, uint64_t(4));                      // dim_value
    std::string shape = field(1, dim);                            // TensorShapeProto.dim
    std::string tensor = field(1, uint64_t(1)) + field(2, shape); // elem_type FLOAT, shape
    std::string type = field(1, tensor);                          // TypeProto.tensor_type
    return field(1, name) + field(2, type);                       // ValueInfoProto
  };
  std::string node = field(1, std::string("x")) + field(2, std::string("y")) +
                     field(3, std::string("my_fancy_node")) + field(4, std::string("FancyOp"));
  std::string graph = field(1, node) + field(2, std::string("g")) + field(11, value("x")) +
                      field(12, value("y"));
  std::string opset = field(1, std::string("")) + field(2, uint64_t(18));
  return field(1, uint64_t(8)) + field(7, graph) + field(8, opset);
}

TEST(CApiCompile, UnsupportedOperatorNamesTheNode) {
  std::string dir = makeTempDir();
  std::string onnx = dir + "/fancy.onnx", plan = dir + "/out.plan";
  writeFile(onnx, unsupportedOperatorModel());
  accel_compile_options co;
  accel_compile_options_init(&co);
  co.onnx_path = onnx.c_str();
  co.output_path = plan.c_str();
  // As accelc prints it: "<file>: node '<name>': error: <sentence>".
  expectError(accel_compile(&co), ACCEL_ERROR_INVALID_MODEL,
              {onnx + ": node 'my_fancy_node': error: ", "'FancyOp'", "does not support"});
  EXPECT_EQ(std::string(accel_last_error()).find('\n'), std::string::npos)
      << "one line: " << accel_last_error();
  EXPECT_FALSE(fileExists(plan));
  std::system(("rm -rf '" + dir + "'").c_str());
}

TEST(CApiCompile, BadOptions) {
  std::string onnx = kFixture + "/model.onnx";
  accel_compile_options co;
  accel_compile_options_init(&co);
  co.onnx_path = onnx.c_str();
  co.output_path = "/nonexistent-dir/out.plan";

  co.target = "tpu";
  expectError(accel_compile(&co), ACCEL_ERROR_INVALID_ARGUMENT, {"unknown target 'tpu'"});
  co.target = nullptr;

  co.tokenizer_path = "/nonexistent-dir/tokenizer.json";
  expectError(accel_compile(&co), ACCEL_ERROR_NOT_FOUND,
              {"cannot open the tokenizer '/nonexistent-dir/tokenizer.json'"});
  co.tokenizer_path = nullptr;

  co.model_config_path = "/nonexistent-dir/config.json";
  expectError(accel_compile(&co), ACCEL_ERROR_NOT_FOUND,
              {"cannot open the model config '/nonexistent-dir/config.json'"});
  co.model_config_path = nullptr;

  accel_compile_options stale = co;
  stale.struct_size = 0; // not initialised with accel_compile_options_init
  expectError(accel_compile(&stale), ACCEL_ERROR_INVALID_ARGUMENT,
              {"struct_size", "accel_compile_options_init"});
}

TEST(CApiCompile, UnwritableOutputLeavesAnError) {
  std::string onnx = kFixture + "/model.onnx";
  accel_compile_options co;
  accel_compile_options_init(&co);
  co.onnx_path = onnx.c_str();
  co.output_path = "/nonexistent-dir/out.plan";
  accel_status s = accel_compile(&co);
  EXPECT_NE(s, ACCEL_OK);
  EXPECT_NE(std::string(accel_last_error()).find("/nonexistent-dir/out.plan"), std::string::npos)
      << accel_last_error();
}

TEST(CApiCompile, ConcurrentCompilesAreIndependent) {
  std::string dir = makeTempDir();
  std::string onnx = kFixture + "/model.onnx";
  std::string plans[3] = {dir + "/a.plan", dir + "/b.plan", dir + "/c.plan"};
  accel_status status[3];
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i)
    threads.emplace_back([&, i] {
      accel_compile_options co;
      accel_compile_options_init(&co);
      co.onnx_path = onnx.c_str();
      co.output_path = plans[i].c_str();
      status[i] = accel_compile(&co);
    });
  for (std::thread &t : threads)
    t.join();
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(status[i], ACCEL_OK) << plans[i];
  EXPECT_EQ(readFile(plans[0]), readFile(plans[1]));
  EXPECT_EQ(readFile(plans[0]), readFile(plans[2]));
  std::system(("rm -rf '" + dir + "'").c_str());
}

TEST(CApiLoad, MissingPlanFile) {
  accel_model *m = reinterpret_cast<accel_model *>(0x1);
  expectError(accel_model_load("/nonexistent-dir/model.plan", nullptr, &m), ACCEL_ERROR_NOT_FOUND,
              {"/nonexistent-dir/model.plan"});
  EXPECT_EQ(m, nullptr);
}

TEST(CApiLoad, GpuPlanWithoutADriver) {
  // A plan for sm_90 goes to the GPU backend; with no driver (ACCEL_LIBCUDA
  // names no library, as on a machine without a GPU) it fails in one sentence.
  // The runtime reads the environment once (runtime/Env.h, at the first
  // accel_model_load): the variable is set before that, and ctest runs each
  // test in a process of its own.
  std::string dir = makeTempDir();
  std::string missing = dir + "/no-libcuda.so";
  setenv("ACCEL_LIBCUDA", missing.c_str(), 1);
  std::string plan = dir + "/h100.plan";
  std::string onnx = kFixture + "/model.onnx";
  accel_compile_options co;
  accel_compile_options_init(&co);
  co.onnx_path = onnx.c_str();
  co.output_path = plan.c_str();
  co.target = "h100";
  ASSERT_EQ(accel_compile(&co), ACCEL_OK) << accel_last_error();
  accel_load_options lo;
  accel_load_options_init(&lo);
  accel_model *m = nullptr;
  lo.gpu_dtype = "f64";
  expectError(accel_model_load(plan.c_str(), &lo, &m), ACCEL_ERROR_INVALID_ARGUMENT,
              {"gpu_dtype", "f64"});
  lo.gpu_dtype = "bf16";
  expectError(accel_model_load(plan.c_str(), &lo, &m), ACCEL_ERROR_UNAVAILABLE,
              {"no NVIDIA driver", "no-libcuda.so"});
  unsetenv("ACCEL_LIBCUDA");
  EXPECT_EQ(m, nullptr);
  std::system(("rm -rf '" + dir + "'").c_str());
}

TEST(CApiLoad, MalformedEnvironmentVariable) {
  // An ACCEL_* variable that does not parse is refused, in one sentence,
  // before the plan is even opened (read once per process: set before the
  // first accel_model_load; ctest runs each test in a process of its own).
  setenv("ACCEL_GPU_DECODE_SPLIT", "-3", 1);
  accel_model *m = reinterpret_cast<accel_model *>(0x1);
  expectError(accel_model_load("/nonexistent-dir/model.plan", nullptr, &m),
              ACCEL_ERROR_INVALID_ARGUMENT,
              {"ACCEL_GPU_DECODE_SPLIT is '-3'; it takes a whole number from 0 to 2147483647"});
  EXPECT_EQ(m, nullptr);
  unsetenv("ACCEL_GPU_DECODE_SPLIT");
}

TEST(CApiLoad, GarbagePlanFile) {
  // Not a plan at all: the loader says so (a wrong file, not a damaged one).
  std::string dir = makeTempDir();
  std::string plan = dir + "/garbage.plan";
  std::string junk(8192, '\0');
  for (size_t i = 0; i < junk.size(); ++i)
    junk[i] = char((i * 7919 + 13) & 0xff);
  writeFile(plan, junk);
  accel_model *m = nullptr;
  expectError(accel_model_load(plan.c_str(), nullptr, &m), ACCEL_ERROR_INVALID_ARGUMENT,
              {plan, "not an accel plan"});
  EXPECT_EQ(m, nullptr);
  std::remove(plan.c_str());
  rmdir(dir.c_str());
}

TEST_F(CApiTest, DamagedPlans) {
  // A real plan, damaged: garbage in the header after its magic and format
  // version, cut in half, one bit flipped in the weights. Each is data loss,
  // named by the file.
  std::string bytes = readFile(*plan_);
  ASSERT_GT(bytes.size(), 8192u);
  std::string garbage = *dir_ + "/garbage-header.plan", truncated = *dir_ + "/truncated.plan",
              flipped = *dir_ + "/flipped.plan";
  std::string g = bytes;
  for (size_t i = 16; i < 64; ++i)
    g[i] = char(0xA5 ^ i);
  writeFile(garbage, g);
  writeFile(truncated, bytes.substr(0, bytes.size() / 2));
  bytes[bytes.size() / 2] ^= 0x40; // inside the weights
  writeFile(flipped, bytes);
  for (const std::string &p : {garbage, truncated, flipped}) {
    accel_model *m = nullptr;
    expectError(accel_model_load(p.c_str(), nullptr, &m), ACCEL_ERROR_DATA_LOSS, {p});
    EXPECT_EQ(m, nullptr);
  }
  // Skipping the checksums loads the bit-flipped plan (the damage is in a
  // weight, which only changes numbers).
  accel_load_options lo;
  accel_load_options_init(&lo);
  lo.verify_checksums = 0;
  accel_model *m = nullptr;
  EXPECT_EQ(accel_model_load(flipped.c_str(), &lo, &m), ACCEL_OK) << accel_last_error();
  accel_model_free(m);
}

TEST_F(CApiTest, IdsOutsideTheVocabulary) {
  std::vector<float> logits(3 * vocab_);
  int64_t high[] = {1, vocab_, 2};
  expectError(accel_score(model_, high, 3, 0, logits.data()), ACCEL_ERROR_INVALID_ARGUMENT,
              {"token 1 is " + std::to_string(vocab_), "outside the vocabulary"});
  int64_t negative[] = {-5};
  expectError(accel_score(model_, negative, 1, 1, logits.data()), ACCEL_ERROR_INVALID_ARGUMENT,
              {"token 0 is -5", "outside the vocabulary"});
  expectError(accel_generate_tokens(model_, high, 3, nullptr, nullptr, nullptr, nullptr, nullptr),
              ACCEL_ERROR_INVALID_ARGUMENT, {"outside the vocabulary"});
  // The model still works afterwards.
  EXPECT_EQ(accel_score(model_, ids_->data(), 2, 0, logits.data()), ACCEL_OK)
      << accel_last_error();
}

TEST_F(CApiTest, BadScoreArguments) {
  std::vector<float> logits(ids_->size() * vocab_);
  expectError(accel_score(model_, ids_->data(), ids_->size(), -1, logits.data()),
              ACCEL_ERROR_INVALID_ARGUMENT, {"chunk", "-1"});
  expectError(accel_score(model_, ids_->data(), 0, 0, logits.data()),
              ACCEL_ERROR_INVALID_ARGUMENT, {"empty"});
}

TEST_F(CApiTest, SequenceLongerThanTheContext) {
  accel_load_options lo;
  accel_load_options_init(&lo);
  lo.max_model_len = 8;
  accel_model *small = nullptr;
  ASSERT_EQ(accel_model_load(plan_->c_str(), &lo, &small), ACCEL_OK) << accel_last_error();
  EXPECT_EQ(accel_model_max_model_len(small), 8);
  std::vector<float> logits(ids_->size() * vocab_);
  expectError(accel_score(small, ids_->data(), ids_->size(), 0, logits.data()),
              ACCEL_ERROR_INVALID_ARGUMENT, {"12 tokens", "context of 8"});
  accel_model_free(small);
  lo.max_model_len = -3;
  expectError(accel_model_load(plan_->c_str(), &lo, &small), ACCEL_ERROR_INVALID_ARGUMENT,
              {"max_model_len", "-3"});
}

TEST_F(CApiTest, TextNeedsATokenizer) {
  char *text = reinterpret_cast<char *>(0x1);
  expectError(accel_generate(model_, "Hello", nullptr, nullptr, nullptr, &text),
              ACCEL_ERROR_INVALID_ARGUMENT, {*plan_, "no tokenizer", "accel_generate_tokens"});
  EXPECT_EQ(text, nullptr);
  int64_t *ids = nullptr;
  size_t n = 7;
  expectError(accel_tokenize(model_, "Hello", 1, &ids, &n), ACCEL_ERROR_INVALID_ARGUMENT,
              {"no tokenizer"});
  EXPECT_EQ(n, 0u);
  expectError(accel_detokenize(model_, ids_->data(), 2, &text), ACCEL_ERROR_INVALID_ARGUMENT,
              {"no tokenizer"});
  const char *stop[] = {"\n"};
  accel_generate_options go;
  accel_generate_options_init(&go);
  go.stop = stop;
  go.num_stop = 1;
  expectError(accel_generate_tokens(model_, ids_->data(), 2, &go, nullptr, nullptr, nullptr,
                                    nullptr),
              ACCEL_ERROR_INVALID_ARGUMENT, {"no tokenizer", "stop strings"});
}

TEST_F(CApiTest, BadGenerateOptions) {
  accel_generate_options go;
  accel_generate_options_init(&go);
  go.max_tokens = 0;
  expectError(accel_generate_tokens(model_, ids_->data(), 2, &go, nullptr, nullptr, nullptr,
                                    nullptr),
              ACCEL_ERROR_INVALID_ARGUMENT, {"max_tokens", "0"});
  accel_generate_options_init(&go);
  go.temperature = -1.0f;
  expectError(accel_generate_tokens(model_, ids_->data(), 2, &go, nullptr, nullptr, nullptr,
                                    nullptr),
              ACCEL_ERROR_INVALID_ARGUMENT, {"temperature"});
  accel_generate_options_init(&go);
  go.top_p = 0.0f;
  expectError(accel_generate_tokens(model_, ids_->data(), 2, &go, nullptr, nullptr, nullptr,
                                    nullptr),
              ACCEL_ERROR_INVALID_ARGUMENT, {"top_p"});
  accel_generate_options_init(&go);
  go.num_stop = 2;
  expectError(accel_generate_tokens(model_, ids_->data(), 2, &go, nullptr, nullptr, nullptr,
                                    nullptr),
              ACCEL_ERROR_INVALID_ARGUMENT, {"options->stop is NULL"});
}

TEST_F(CApiTest, NullArguments) {
  float logits[256 * 2];
  int64_t ids[] = {1, 2};
  int64_t *outIds = nullptr;
  size_t n = 0;
  char *text = nullptr;
  accel_model *m = nullptr;
  const accel_status E = ACCEL_ERROR_INVALID_ARGUMENT;

  expectError(accel_compile(nullptr), E, {"accel_compile", "options is NULL"});
  accel_compile_options co;
  accel_compile_options_init(&co);
  co.output_path = "x.plan";
  expectError(accel_compile(&co), E, {"accel_compile", "onnx_path is NULL"});
  co.onnx_path = "";
  expectError(accel_compile(&co), E, {"accel_compile", "onnx_path is empty"});
  co.onnx_path = "model.onnx";
  co.output_path = nullptr;
  expectError(accel_compile(&co), E, {"accel_compile", "output_path is NULL"});

  expectError(accel_model_load(nullptr, nullptr, &m), E, {"accel_model_load", "plan_path"});
  expectError(accel_model_load(plan_->c_str(), nullptr, nullptr), E,
              {"accel_model_load", "model_out"});

  expectError(accel_score(nullptr, ids, 2, 0, logits), E, {"accel_score", "model is NULL"});
  expectError(accel_score(model_, nullptr, 2, 0, logits), E, {"accel_score", "ids is NULL"});
  expectError(accel_score(model_, ids, 2, 0, nullptr), E, {"accel_score", "logits_out is NULL"});

  expectError(accel_generate(nullptr, "x", nullptr, nullptr, nullptr, &text), E,
              {"accel_generate", "model is NULL"});
  expectError(accel_generate(model_, nullptr, nullptr, nullptr, nullptr, &text), E,
              {"accel_generate", "prompt is NULL"});
  expectError(accel_generate_tokens(nullptr, ids, 2, nullptr, nullptr, nullptr, &outIds, &n), E,
              {"accel_generate_tokens", "model is NULL"});
  expectError(accel_generate_tokens(model_, nullptr, 2, nullptr, nullptr, nullptr, &outIds, &n),
              E, {"accel_generate_tokens", "prompt_ids is NULL"});
  expectError(accel_generate_tokens(model_, ids, 2, nullptr, nullptr, nullptr, &outIds, nullptr),
              E, {"accel_generate_tokens", "num_tokens_out is NULL"});
  expectError(accel_tokenize(nullptr, "x", 1, &outIds, &n), E, {"accel_tokenize", "model"});
  expectError(accel_tokenize(model_, nullptr, 1, &outIds, &n), E, {"accel_tokenize", "text"});
  expectError(accel_detokenize(nullptr, ids, 2, &text), E, {"accel_detokenize", "model"});
  expectError(accel_detokenize(model_, ids, 2, nullptr), E, {"accel_detokenize", "text_out"});

  // Freeing NULL is a no-op; _init of NULL too.
  accel_model_free(nullptr);
  accel_string_free(nullptr);
  accel_tokens_free(nullptr);
  accel_compile_options_init(nullptr);
  accel_load_options_init(nullptr);
  accel_generate_options_init(nullptr);
}

//===----------------------------------------------------------------------===//
// Text: the demo model (test/fixtures/demo), which carries a tokenizer
//===----------------------------------------------------------------------===//

const std::string kDemo = std::string(ACCEL_SOURCE_DIR) + "/test/fixtures/demo";

/// The demo compiled once (the fixture is committed: its absence fails).
class CApiTextTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    ASSERT_TRUE(fileExists(kDemo + "/model.onnx")) << kDemo << "/model.onnx is missing";
    dir_ = new std::string(makeTempDir());
    plan_ = new std::string(*dir_ + "/demo.plan");
    std::string onnx = kDemo + "/model.onnx";
    accel_compile_options co;
    accel_compile_options_init(&co);
    co.onnx_path = onnx.c_str(); // tokenizer.json and config.json beside it
    co.output_path = plan_->c_str();
    ASSERT_EQ(accel_compile(&co), ACCEL_OK) << accel_last_error();
  }
  static void TearDownTestSuite() {
    if (dir_)
      std::system(("rm -rf '" + *dir_ + "'").c_str());
    delete dir_;
    delete plan_;
    dir_ = plan_ = nullptr;
  }
  void SetUp() override {
    ASSERT_TRUE(plan_) << "the demo model did not compile";
    ASSERT_EQ(accel_model_load(plan_->c_str(), nullptr, &model_), ACCEL_OK)
        << accel_last_error();
  }
  void TearDown() override { accel_model_free(model_); }

  /// generated.txt's greedy continuation of "In the beginning" (HF
  /// transformers, 48 tokens, no EOS stop), without the prompt.
  static std::string expectedContinuation() {
    std::string file = readFile(kDemo + "/generated.txt");
    size_t at = file.find("\ntext:\n");
    if (at == std::string::npos)
      return "";
    std::string text = file.substr(at + 7);
    if (!text.empty() && text.back() == '\n')
      text.pop_back();
    const std::string prompt = "In the beginning";
    return text.compare(0, prompt.size(), prompt) == 0 ? text.substr(prompt.size()) : "";
  }

  static std::string *dir_;
  static std::string *plan_;
  accel_model *model_ = nullptr;
};
std::string *CApiTextTest::dir_ = nullptr;
std::string *CApiTextTest::plan_ = nullptr;

TEST_F(CApiTextTest, ModelFacts) {
  EXPECT_EQ(accel_model_has_tokenizer(model_), 1);
  EXPECT_EQ(accel_model_vocab_size(model_), 2048);
  EXPECT_EQ(accel_model_max_model_len(model_), 512); // config.json's max_position_embeddings
}

TEST_F(CApiTextTest, TokenizeAndDetokenize) {
  int64_t *ids = nullptr;
  size_t n = 0;
  ASSERT_EQ(accel_tokenize(model_, "In the beginning", 1, &ids, &n), ACCEL_OK)
      << accel_last_error();
  EXPECT_EQ(std::vector<int64_t>(ids, ids + n), (std::vector<int64_t>{1143, 259, 1796, 1239}));
  char *text = nullptr;
  ASSERT_EQ(accel_detokenize(model_, ids, n, &text), ACCEL_OK) << accel_last_error();
  EXPECT_STREQ(text, "In the beginning");
  accel_string_free(text);
  accel_tokens_free(ids);
  int64_t bad[] = {5, 2048};
  expectError(accel_detokenize(model_, bad, 2, &text), ACCEL_ERROR_INVALID_ARGUMENT,
              {"token 1 is 2048", "outside the vocabulary"});
}

struct Stream {
  std::string text;
  int calls = 0;
  accel_model *model = nullptr;
  accel_status reentrant = ACCEL_OK;
  std::string reentrantMessage;
};

void collect(const char *text, size_t length, void *userData) {
  auto *s = static_cast<Stream *>(userData);
  EXPECT_EQ(std::strlen(text), length);
  s->text.append(text, length);
  ++s->calls;
}

TEST_F(CApiTextTest, GreedyTextMatchesTransformers) {
  const std::string expected = expectedContinuation();
  ASSERT_FALSE(expected.empty()) << "generated.txt has no text";
  accel_generate_options go;
  accel_generate_options_init(&go);
  go.max_tokens = 48;
  go.ignore_eos = 1;
  Stream stream;
  char *text = nullptr;
  ASSERT_EQ(accel_generate(model_, "In the beginning", &go, collect, &stream, &text), ACCEL_OK)
      << accel_last_error();
  ASSERT_NE(text, nullptr);
  EXPECT_EQ(std::string(text), expected);
  EXPECT_EQ(stream.text, expected) << "the streamed pieces concatenate to the output";
  EXPECT_GT(stream.calls, 1);
  accel_string_free(text);
}

TEST_F(CApiTextTest, GreedyTokensMatchTransformers) {
  auto all = accel::rt::readNpy(kDemo + "/generated_ids.npy");
  ASSERT_TRUE(all.isOk()) << all.status().message();
  std::vector<int64_t> ids = all->toInt64s();
  ASSERT_EQ(ids.size(), 52u);
  accel_generate_options go;
  accel_generate_options_init(&go);
  go.max_tokens = 48;
  go.ignore_eos = 1;
  int64_t *tokens = nullptr;
  size_t n = 0;
  Stream stream;
  ASSERT_EQ(accel_generate_tokens(model_, ids.data(), 4, &go, collect, &stream, &tokens, &n),
            ACCEL_OK)
      << accel_last_error();
  EXPECT_EQ(std::vector<int64_t>(tokens, tokens + n),
            std::vector<int64_t>(ids.begin() + 4, ids.end()));
  EXPECT_EQ(stream.text, expectedContinuation()) << "token prompts stream text too";
  accel_tokens_free(tokens);
}

TEST_F(CApiTextTest, StopStringEndsTheText) {
  const std::string full = expectedContinuation();
  ASSERT_NE(full.find('\n'), std::string::npos);
  const char *stop[] = {"\n"};
  accel_generate_options go;
  accel_generate_options_init(&go);
  go.max_tokens = 48;
  go.ignore_eos = 1;
  go.stop = stop;
  go.num_stop = 1;
  Stream stream;
  char *text = nullptr;
  ASSERT_EQ(accel_generate(model_, "In the beginning", &go, collect, &stream, &text), ACCEL_OK)
      << accel_last_error();
  EXPECT_EQ(std::string(text), full.substr(0, full.find('\n')));
  EXPECT_EQ(stream.text, std::string(text));
  accel_string_free(text);
}

void callBack(const char *, size_t, void *userData) {
  auto *s = static_cast<Stream *>(userData);
  if (s->calls++)
    return;
  float logits[2048];
  int64_t id = 1;
  s->reentrant = accel_score(s->model, &id, 1, 0, logits);
  s->reentrantMessage = accel_last_error();
}

TEST_F(CApiTextTest, CallbacksCannotCallBackIntoTheModel) {
  accel_generate_options go;
  accel_generate_options_init(&go);
  go.max_tokens = 8;
  go.ignore_eos = 1;
  Stream stream;
  stream.model = model_;
  ASSERT_EQ(accel_generate(model_, "In the beginning", &go, callBack, &stream, nullptr), ACCEL_OK)
      << accel_last_error();
  ASSERT_GT(stream.calls, 0);
  EXPECT_EQ(stream.reentrant, ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(stream.reentrantMessage.find("callback"), std::string::npos) << stream.reentrantMessage;
  // The model is fine afterwards.
  float logits[2048];
  int64_t id = 1;
  EXPECT_EQ(accel_score(model_, &id, 1, 0, logits), ACCEL_OK) << accel_last_error();
}

TEST(CApiErrors, TheLastErrorIsPerThread) {
  accel_model *m = nullptr;
  ASSERT_NE(accel_model_load(nullptr, nullptr, &m), ACCEL_OK);
  std::string mine = accel_last_error();
  ASSERT_FALSE(mine.empty());
  std::string theirs = "unset";
  std::thread t([&] {
    theirs = accel_last_error(); // nothing failed on this thread yet
    accel_compile(nullptr);
  });
  t.join();
  EXPECT_EQ(theirs, "");
  EXPECT_EQ(accel_last_error(), mine);
}

} // namespace
