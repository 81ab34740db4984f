// com.microsoft GroupQueryAttention against the kernels it decomposes into:
// ms RotaryEmbedding of q and k at positions past .. past + S - 1, then the
// opset-23 Attention (3-D, GQA, is_causal, past_key/past_value, and
// left_window_size = local_window_size - 1 for onnxruntime's window of the
// last local_window_size keys). onnxruntime's own outputs are checked in
// test/Import/ms-group-query-attention.test.
#include "KernelTestUtil.h"

using namespace kt;

namespace {

constexpr int64_t N = 4, NKV = 2, H = 16, P = 3, S = 2, MAXPOS = 16;

Tensor table(bool sine) {
  std::vector<float> v;
  for (int64_t p = 0; p < MAXPOS; ++p)
    for (int64_t i = 0; i < H / 2; ++i) {
      const double a = double(p) * std::pow(10000.0, -double(i) / double(H / 2));
      v.push_back(float(sine ? std::sin(a) : std::cos(a)));
    }
  return F({MAXPOS, H / 2}, v);
}

struct Case {
  Tensor q = rnd({1, S, N * H}, 1), k = rnd({1, S, NKV * H}, 2), v = rnd({1, S, NKV * H}, 3);
  Tensor pk = rnd({1, NKV, P, H}, 4), pv = rnd({1, NKV, P, H}, 5);
  Tensor cos = table(false), sin = table(true);
  Tensor seqlens = I32({1}, {int32_t(P + S - 1)}), total = I32({}, {int32_t(P + S)});
};

/// What GQA must equal: rotary (when asked) then causal Attention over the past.
std::vector<Tensor> reference(const Case &c, bool rotary, int64_t window, float softcap) {
  Tensor q = c.q, k = c.k;
  if (rotary) {
    Tensor pos = I64({1, S}, {P, P + 1});
    q = run("RotaryEmbedding", {{"num_heads", N}}, {c.q, pos, c.cos, c.sin}, 1, "com.microsoft")[0];
    k = run("RotaryEmbedding", {{"num_heads", NKV}}, {c.k, pos, c.cos, c.sin}, 1, "com.microsoft")[0];
  }
  AttrMap a = {{"is_causal", int64_t(1)}, {"q_num_heads", N}, {"kv_num_heads", NKV}};
  if (window > 0)
    a["left_window_size"] = window - 1;
  if (softcap > 0)
    a["softcap"] = softcap;
  return run("Attention", a, {q, k, c.v, Tensor(), c.pk, c.pv}, 3);
}

AttrMap gqaAttrs(bool rotary, int64_t window = -1, float softcap = 0) {
  AttrMap a = {{"num_heads", N}, {"kv_num_heads", NKV}, {"do_rotary", int64_t(rotary)},
               {"local_window_size", window}};
  if (softcap > 0)
    a["softcap"] = softcap;
  return a;
}

std::vector<Tensor> gqa(const Case &c, const AttrMap &a, bool packed) {
  Tensor q = c.q, k = c.k, v = c.v;
  if (packed) { // [q | k | v] along the hidden axis
    std::vector<float> qs = c.q.toFloats(), ks = c.k.toFloats(), vs = c.v.toFloats(), all;
    for (int64_t s = 0; s < S; ++s) {
      all.insert(all.end(), qs.begin() + s * N * H, qs.begin() + (s + 1) * N * H);
      all.insert(all.end(), ks.begin() + s * NKV * H, ks.begin() + (s + 1) * NKV * H);
      all.insert(all.end(), vs.begin() + s * NKV * H, vs.begin() + (s + 1) * NKV * H);
    }
    q = F({1, S, (N + 2 * NKV) * H}, all);
    k = v = Tensor();
  }
  return run("GroupQueryAttention", a,
             {q, k, v, c.pk, c.pv, c.seqlens, c.total, c.cos, c.sin}, 3, "com.microsoft");
}

TEST(OnnxGroupQueryAttention, RotaryPastAndPresentMatchRotaryThenAttention) {
  Case c;
  std::vector<Tensor> want = reference(c, true, -1, 0);
  for (bool packed : {false, true}) {
    std::vector<Tensor> got = gqa(c, gqaAttrs(true), packed);
    EXPECT_TRUE(nearTensor(got[0], want[0])) << "packed " << packed;
    EXPECT_TRUE(nearTensor(got[1], want[1])) << "packed " << packed;
    EXPECT_TRUE(nearTensor(got[2], want[2])) << "packed " << packed;
  }
}

TEST(OnnxGroupQueryAttention, WindowAndSoftcap) {
  Case c;
  std::vector<Tensor> want = reference(c, false, 2, 3.0f);
  std::vector<Tensor> got = gqa(c, gqaAttrs(false, 2, 3.0f), false);
  EXPECT_TRUE(nearTensor(got[0], want[0]));
  // The window matters: without it the result differs.
  EXPECT_FALSE(nearTensor(gqa(c, gqaAttrs(false, -1, 3.0f), false)[0], want[0]));
}

TEST(OnnxGroupQueryAttention, FirstPromptIgnoresThePastBuffer) {
  // S == total_sequence_length: the first prompt; positions start at 0.
  Case c;
  c.pk = Tensor::zeros(DType::kF32, {1, NKV, 0, H});
  c.pv = Tensor::zeros(DType::kF32, {1, NKV, 0, H});
  c.seqlens = I32({1}, {int32_t(S - 1)});
  c.total = I32({}, {int32_t(S)});
  Tensor pos = I64({1, S}, {0, 1});
  Tensor q = run("RotaryEmbedding", {{"num_heads", N}}, {c.q, pos, c.cos, c.sin}, 1, "com.microsoft")[0];
  Tensor k = run("RotaryEmbedding", {{"num_heads", NKV}}, {c.k, pos, c.cos, c.sin}, 1, "com.microsoft")[0];
  std::vector<Tensor> want = run(
      "Attention", {{"is_causal", int64_t(1)}, {"q_num_heads", N}, {"kv_num_heads", NKV}},
      {q, k, c.v}, 3);
  std::vector<Tensor> got = gqa(c, gqaAttrs(true), true);
  EXPECT_TRUE(nearTensor(got[0], want[0]));
  EXPECT_TRUE(nearTensor(got[1], want[1]));
}

TEST(OnnxGroupQueryAttention, Errors) {
  Case c;
  std::vector<Tensor> out;
  // seqlens_k says 10 keys, but 2 new tokens after a past of 3 and total 5 cannot give that.
  Status s = runStatus("GroupQueryAttention", gqaAttrs(false),
                       {c.q, c.k, c.v, c.pk, c.pv, I32({1}, {9}), c.total}, out, 3,
                       "com.microsoft");
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("seqlens_k[0] = 9 is inconsistent"), std::string::npos) << s.message();
  s = runStatus("GroupQueryAttention", gqaAttrs(true),
                {c.q, c.k, c.v, c.pk, c.pv, c.seqlens, c.total}, out, 3, "com.microsoft");
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("do_rotary=1 needs cos_cache and sin_cache"), std::string::npos)
      << s.message();
  s = runStatus("GroupQueryAttention", {{"num_heads", int64_t(3)}, {"kv_num_heads", NKV}},
                {c.q, c.k, c.v, c.pk, c.pv, c.seqlens, c.total}, out, 3, "com.microsoft");
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("must be a positive multiple of kv_num_heads"), std::string::npos)
      << s.message();
}

} // namespace
