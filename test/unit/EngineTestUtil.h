//===- EngineTestUtil.h - checks on an engine shared by tests ---*- C++ -*-===//
#ifndef ACCEL_TEST_UNIT_ENGINETESTUTIL_H
#define ACCEL_TEST_UNIT_ENGINETESTUTIL_H

#include "runtime/engine/Engine.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace accel::test {

/// Copy-on-write through `eng`'s KV pool (block size 4): a 5-token prompt
/// (block 0 full, block 1 holding one token) is forked, and both sequences
/// append a different token into the shared, partly filled block. Each
/// one's logits must equal (within `tol`) those of the same 6 tokens scored
/// from scratch: a copy that missed a rank's pool or shard changes them.
inline void expectForkAppendsMatchScoring(rt::engine::Engine &eng, int64_t vocab, float tol) {
  using rt::StatusOr;
  using rt::Tensor;
  const std::vector<int64_t> prompt = {1, 4, 2, 5, 3};
  rt::kv::SequenceKV a;
  ASSERT_TRUE(eng.stepBatch({{&a, prompt.data(), 5}}).isOk());
  StatusOr<rt::kv::SequenceKV> forked = a.fork(eng.pool());
  ASSERT_TRUE(forked.isOk());
  rt::kv::SequenceKV b = std::move(*forked);
  const int64_t nextA = 0, nextB = 4;
  StatusOr<Tensor> lb = eng.stepBatch({{&b, &nextB, 1}});
  ASSERT_TRUE(lb.isOk()) << lb.status().message();
  EXPECT_NE(a.blocks().back(), b.blocks().back()) << "the shared block was not copied";
  StatusOr<Tensor> la = eng.stepBatch({{&a, &nextA, 1}});
  ASSERT_TRUE(la.isOk()) << la.status().message();
  for (auto [next, got] : {std::pair{nextA, &*la}, std::pair{nextB, &*lb}}) {
    std::vector<int64_t> whole = prompt;
    whole.push_back(next);
    StatusOr<Tensor> want = eng.score(whole);
    ASSERT_TRUE(want.isOk()) << want.status().message();
    for (int64_t v = 0; v < vocab; ++v)
      EXPECT_NEAR(got->data<float>()[v], want->data<float>()[5 * vocab + v], tol)
          << "next token " << next << ", logit " << v;
  }
  ASSERT_TRUE(a.release(eng.pool()).isOk());
  ASSERT_TRUE(b.release(eng.pool()).isOk());
}

} // namespace accel::test

#endif // ACCEL_TEST_UNIT_ENGINETESTUTIL_H
