//===- TransformerRotaryTest.cpp - rotary against HF-style references -----===//
//
// The references follow HF transformers' code shape: full cos/sin vectors
// (emb = cat(freqs, freqs) for rotate_half; repeat_interleave for GPT-J's
// rotate_every_two) multiplied into whole head vectors.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/transformer/Rotary.h"

#include "TransformerTestUtil.h"

using namespace tt;
using namespace accel::rt::cpu::transformer;

namespace {

// HF: inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim)), f32.
std::vector<float> hfInvFreq(int64_t dim, float base) {
  std::vector<float> inv;
  for (int64_t i = 0; i < dim; i += 2)
    inv.push_back(1.0f / std::pow(base, float(i) / float(dim)));
  return inv;
}

// HF _compute_llama3_parameters, in double, with its torch.where structure.
std::vector<double> hfLlama3(const std::vector<float> &inv, double factor, double low,
                             double high, double old) {
  const double lowWavelen = old / low, highWavelen = old / high;
  std::vector<double> out;
  for (float f : inv) {
    const double wavelen = 2 * 3.14159265358979323846 / f;
    double llama = wavelen > lowWavelen ? f / factor : f;
    const double smooth = (old / wavelen - low) / (high - low);
    const double smoothed = (1 - smooth) * llama / factor + smooth * llama;
    const bool medium = !(wavelen < highWavelen) && !(wavelen > lowWavelen);
    out.push_back(medium ? smoothed : llama);
  }
  return out;
}

enum class Style { kRotateHalf, kRotateEveryTwo };

// apply_rotary_pos_emb on x [T, H, D] with the first `rot` channels rotated.
std::vector<float> hfRotary(const std::vector<float> &x, const std::vector<int64_t> &pos,
                            int64_t heads, int64_t d, int64_t rot,
                            const std::vector<float> &inv, Style style) {
  const int64_t half = rot / 2;
  std::vector<float> out = x;
  for (size_t t = 0; t < pos.size(); ++t) {
    std::vector<float> freqs(static_cast<size_t>(half));
    for (int64_t j = 0; j < half; ++j)
      freqs[size_t(j)] = float(pos[t]) * inv[size_t(j)]; // f32, as torch
    std::vector<double> cosv(static_cast<size_t>(rot)), sinv(static_cast<size_t>(rot));
    for (int64_t i = 0; i < rot; ++i) {
      const float f = style == Style::kRotateHalf ? freqs[size_t(i % half)]  // cat(f, f)
                                                  : freqs[size_t(i / 2)];    // repeat_interleave
      cosv[size_t(i)] = std::cos(double(f));
      sinv[size_t(i)] = std::sin(double(f));
    }
    for (int64_t h = 0; h < heads; ++h) {
      const float *xr = &x[size_t((int64_t(t) * heads + h) * d)];
      float *yr = &out[size_t((int64_t(t) * heads + h) * d)];
      std::vector<double> rotated(static_cast<size_t>(rot));
      for (int64_t i = 0; i < rot; ++i) {
        if (style == Style::kRotateHalf) // cat(-x2, x1)
          rotated[size_t(i)] = i < half ? -xr[i + half] : xr[i - half];
        else // stack(-x[1::2], x[::2]).flatten
          rotated[size_t(i)] = i % 2 == 0 ? -xr[i + 1] : xr[i - 1];
      }
      for (int64_t i = 0; i < rot; ++i)
        yr[i] = float(xr[i] * cosv[size_t(i)] + rotated[size_t(i)] * sinv[size_t(i)]);
    }
  }
  return out;
}

} // namespace

TEST(Rotary, HalfSplitMatchesRotateHalf) {
  const int64_t t = 5, h = 3, d = 16;
  Tensor x = randomF32({t, h, d}, 1);
  std::vector<int64_t> pos = {0, 1, 7, 100, 4095};
  RotaryParams p;
  p.theta = 10000.0;
  TT_ASSIGN(Tensor y, rotary(x, i64({t}, pos), p));
  EXPECT_TRUE(allClose(y, hfRotary(x.toFloats(), pos, h, d, d, hfInvFreq(d, 10000.0f),
                                   Style::kRotateHalf),
                       {t, h, d}, 2e-6));
}

TEST(Rotary, InterleavedPartialMatchesGptJ) {
  // GPT-J: rotary_dim 64 of head_dim 256; here 8 of 20.
  const int64_t t = 4, h = 2, d = 20, rot = 8;
  Tensor x = randomF32({t, h, d}, 2);
  std::vector<int64_t> pos = {3, 9, 10, 511};
  RotaryParams p;
  p.style = RotaryStyle::kInterleaved;
  p.rotaryDim = rot;
  TT_ASSIGN(Tensor y, rotary(x, i32({t}, {3, 9, 10, 511}), p));
  std::vector<float> want = hfRotary(x.toFloats(), pos, h, d, rot,
                                     hfInvFreq(rot, 10000.0f), Style::kRotateEveryTwo);
  EXPECT_TRUE(allClose(y, want, {t, h, d}, 2e-6));
  // Channels past rotary_dim pass through untouched.
  std::vector<float> xv = x.toFloats(), yv = y.toFloats();
  for (int64_t i = rot; i < d; ++i)
    EXPECT_EQ(yv[size_t(d + i)], xv[size_t(d + i)]);
}

TEST(Rotary, HalfSplitPartialMatchesNeoX) {
  // Phi-2 / NeoX: partial rotary with rotate_half on the first rotary_dim.
  const int64_t t = 3, h = 2, d = 12, rot = 6;
  Tensor x = randomF32({t, h, d}, 3);
  std::vector<int64_t> pos = {0, 5, 77};
  RotaryParams p;
  p.rotaryDim = rot;
  p.theta = 500.0;
  TT_ASSIGN(Tensor y, rotary(x, i64({t}, pos), p));
  EXPECT_TRUE(allClose(y, hfRotary(x.toFloats(), pos, h, d, rot, hfInvFreq(rot, 500.0f),
                                   Style::kRotateHalf),
                       {t, h, d}, 2e-6));
}

TEST(Rotary, Llama3ScalingMatchesHf) {
  RopeScaling s;
  s.kind = RopeScalingKind::kLlama3;
  s.factor = 8.0f;
  s.lowFreqFactor = 1.0f;
  s.highFreqFactor = 4.0f;
  s.originalMaxPosition = 8192;
  TT_ASSIGN(std::vector<float> inv, rotaryInvFreq(128, 500000.0, s));
  std::vector<double> want = hfLlama3(hfInvFreq(128, 500000.0f), 8, 1, 4, 8192);
  ASSERT_EQ(inv.size(), want.size());
  int low = 0, medium = 0, high = 0;
  std::vector<float> base = hfInvFreq(128, 500000.0f);
  for (size_t j = 0; j < inv.size(); ++j) {
    EXPECT_NEAR(inv[j], want[j], 1e-6 * want[j]) << "j = " << j;
    if (inv[j] == base[j])
      ++high;
    else if (std::fabs(inv[j] - base[j] / 8) <= 1e-7 * base[j])
      ++low;
    else
      ++medium;
  }
  // Llama 3.1's 128 channels cover all three bands.
  EXPECT_GT(low, 0);
  EXPECT_GT(medium, 0);
  EXPECT_GT(high, 0);

  // And the rotation uses them.
  const int64_t t = 2, h = 1, d = 128;
  Tensor x = randomF32({t, h, d}, 4);
  RotaryParams p;
  p.theta = 500000.0;
  p.scaling = s;
  TT_ASSIGN(Tensor y, rotary(x, i32({t}, {1000, 20000}), p));
  EXPECT_TRUE(allClose(y, hfRotary(x.toFloats(), {1000, 20000}, h, d, d, inv,
                                   Style::kRotateHalf),
                       {t, h, d}, 2e-6));
}

TEST(Rotary, LinearScalingDividesTheFrequencies) {
  RopeScaling s;
  s.kind = RopeScalingKind::kLinear;
  s.factor = 4.0f;
  TT_ASSIGN(std::vector<float> inv, rotaryInvFreq(32, 10000.0, s));
  std::vector<float> base = hfInvFreq(32, 10000.0f);
  for (size_t j = 0; j < inv.size(); ++j)
    EXPECT_FLOAT_EQ(inv[j], base[j] / 4.0f);
  s.kind = RopeScalingKind::kYarn;
  StatusOr<std::vector<float>> yarn = rotaryInvFreq(32, 10000.0, s);
  ASSERT_FALSE(yarn.isOk());
  EXPECT_EQ(yarn.status().code(), StatusCode::kUnimplemented);
}

TEST(Rotary, ExplicitTablesIndexedByPosition) {
  const int64_t t = 3, h = 2, d = 8, half = 4, maxPos = 50;
  // Tables from arbitrary frequencies (LongRoPE-like), in bf16.
  std::vector<float> inv = {1.0f, 0.37f, 0.05f, 0.0021f};
  std::vector<float> c, s;
  for (int64_t p = 0; p < maxPos; ++p)
    for (int64_t j = 0; j < half; ++j) {
      c.push_back(std::cos(float(p) * inv[size_t(j)]));
      s.push_back(std::sin(float(p) * inv[size_t(j)]));
    }
  Tensor cosT = f32({maxPos, half}, c).astype(DType::kBF16);
  Tensor sinT = f32({maxPos, half}, s).astype(DType::kBF16);
  Tensor x = randomF32({t, h, d}, 5);
  RotaryParams p;
  p.cosTable = &cosT;
  p.sinTable = &sinT;
  TT_ASSIGN(Tensor y, rotary(x, i32({t}, {0, 17, 49}), p));
  // The reference reads the same (bf16-rounded) tables.
  std::vector<float> cv = cosT.toFloats(), sv = sinT.toFloats(), xv = x.toFloats();
  std::vector<float> want = xv;
  const int32_t pos[] = {0, 17, 49};
  for (int64_t ti = 0; ti < t; ++ti)
    for (int64_t hi = 0; hi < h; ++hi)
      for (int64_t j = 0; j < half; ++j) {
        const size_t base = size_t((ti * h + hi) * d);
        const float cc = cv[size_t(pos[ti] * half + j)], ss = sv[size_t(pos[ti] * half + j)];
        want[base + j] = xv[base + j] * cc - xv[base + j + half] * ss;
        want[base + j + half] = xv[base + j + half] * cc + xv[base + j] * ss;
      }
  EXPECT_TRUE(allClose(y, want, {t, h, d}, 1e-6));

  StatusOr<Tensor> past = rotary(x, i32({t}, {0, 17, 50}), p);
  ASSERT_FALSE(past.isOk());
  EXPECT_NE(past.status().message().find("position 50, past the 50 rows"), std::string::npos)
      << past.status().message();
}

TEST(Rotary, Bf16InputRoundsOnce) {
  const int64_t t = 2, h = 2, d = 8;
  Tensor x = randomF32({t, h, d}, 6).astype(DType::kBF16);
  RotaryParams p;
  TT_ASSIGN(Tensor y, rotary(x, i32({t}, {5, 6}), p));
  EXPECT_EQ(y.dtype(), DType::kBF16);
  EXPECT_TRUE(allClose(y, hfRotary(x.toFloats(), {5, 6}, h, d, d, hfInvFreq(d, 10000.0f),
                                   Style::kRotateHalf),
                       {t, h, d}, 1e-2));
}

TEST(Rotary, ShapeErrors) {
  Tensor x = randomF32({2, 2, 8}, 7);
  RotaryParams p;
  p.rotaryDim = 7;
  EXPECT_NE(rotary(x, i32({2}, {0, 1}), p).status().message().find("rotary_dim 7"),
            std::string::npos);
  p.rotaryDim = 10;
  EXPECT_FALSE(rotary(x, i32({2}, {0, 1}), p).isOk());
  p.rotaryDim = 0;
  EXPECT_FALSE(rotary(x, i32({3}, {0, 1, 2}), p).isOk());
  EXPECT_FALSE(rotary(x, i32({2}, {0, -1}), p).isOk());
  EXPECT_FALSE(rotary(randomF32({2, 8}, 1), i32({2}, {0, 1}), p).isOk());
  Tensor c = randomF32({4, 4}, 1);
  p.cosTable = &c;
  EXPECT_NE(rotary(x, i32({2}, {0, 1}), p).status().message().find("both cos and sin"),
            std::string::npos);
}
