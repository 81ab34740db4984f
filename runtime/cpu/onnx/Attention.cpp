//===- Attention.cpp - ONNX Attention (opset 23/24) -----------------------===//
//
// Y = softmax(softcap(scale * Q K^T) + bias) V per head, where bias combines
// attn_mask (bool: false -> -inf; float: added; a mask shorter than the keys
// is padded with -inf), is_causal (query i attends key j iff j <= i + past,
// i.e. bottom-right aligned with a cache), nonpad_kv_seqlen (opset 24) and
// the sliding window (left/right_window_size, opset 25). GQA: q head h reads
// kv head h / (q_heads / kv_heads). A row whose bias is -inf everywhere
// yields zeros. softmax_precision is ignored: everything is computed in f32
// (f64 for f64 inputs).
//
// qk_matmul_output (output 3), in pipeline order as the ONNX reference and
// its tests have it: mode 0 the scaled Q K^T, 1 after softcap, 2 after the
// bias is added, 3 the softmax.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Gemm.h"
#include "runtime/cpu/onnx/ElementwiseUtil.h"

#include <cmath>
#include <limits>

namespace accel::rt::onnx {

namespace {

template <typename T>
void gemm(bool tb, int64_t m, int64_t n, int64_t k, const T *a, int64_t lda, const T *b,
          int64_t ldb, T *c, int64_t ldc) {
  if constexpr (std::is_same_v<T, float>)
    cpu::gemmF32(false, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
  else
    cpu::gemmF64(false, tb, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, ldc);
}

struct AttnDims {
  int64_t batch, qHeads, kvHeads, qLen, kvLen, past, total, headDim, vHeadDim;
  bool threeD;
};

/// [B, H, S, D] contiguous in compute type `ct`, from a 3-D [B, S, H*D] or
/// 4-D [B, H, S, D] input.
StatusOr<Tensor> toHeadMajor(const Tensor &t, int64_t heads, DType ct) {
  Tensor w;
  ACCEL_RT_ASSIGN_OR_RETURN(w, convertTo(t, ct));
  if (t.rank() == 4)
    return w;
  const int64_t b = t.dim(0), s = t.dim(1), d = t.dim(2) / heads;
  Tensor out;
  ACCEL_RT_ASSIGN_OR_RETURN(out, Tensor::allocate(ct, {b, heads, s, d}));
  transposeBytes(w.rawData(), {b, s, heads, d}, {0, 2, 1, 3}, out.rawData(), dtypeSize(ct));
  return out;
}

/// Concatenates past [B, H, P, D] and cur [B, H, S, D] along the sequence.
StatusOr<Tensor> concatSeq(const Tensor *past, const Tensor &cur, DType ct) {
  if (!past)
    return cur;
  Tensor p;
  ACCEL_RT_ASSIGN_OR_RETURN(p, convertTo(*past, ct));
  const int64_t bh = cur.dim(0) * cur.dim(1), ps = p.dim(2), cs = cur.dim(2), d = cur.dim(3);
  Tensor out;
  ACCEL_RT_ASSIGN_OR_RETURN(out, Tensor::allocate(ct, {cur.dim(0), cur.dim(1), ps + cs, d}));
  const size_t es = dtypeSize(ct);
  const char *a = static_cast<const char *>(p.rawData());
  const char *b = static_cast<const char *>(cur.rawData());
  char *o = static_cast<char *>(out.rawData());
  for (int64_t i = 0; i < bh; ++i) {
    std::memcpy(o + size_t(i * (ps + cs) * d) * es, a + size_t(i * ps * d) * es,
                size_t(ps * d) * es);
    std::memcpy(o + size_t((i * (ps + cs) + ps) * d) * es, b + size_t(i * cs * d) * es,
                size_t(cs * d) * es);
  }
  return out;
}

Status kAttention(KernelContext &ctx) {
  const Tensor &q0 = *ctx.in(0), &k0 = *ctx.in(1), &v0 = *ctx.in(2);
  const Tensor *mask = ctx.in(3), *pastK = ctx.in(4), *pastV = ctx.in(5);
  const Tensor *nonpad = ctx.in(6);
  ACCEL_RT_RETURN_IF_ERROR(checkAllowed(ctx, q0, kAllowFloat));
  if (k0.dtype() != q0.dtype() || v0.dtype() != q0.dtype())
    return ctx.error("Q, K and V must have the same type, got " + q0.describe() + ", " +
                     k0.describe() + " and " + v0.describe());
  if (q0.rank() != k0.rank() || q0.rank() != v0.rank() || (q0.rank() != 3 && q0.rank() != 4))
    return ctx.error("Q, K and V must all be 3-D or all 4-D, got " + q0.describe() + ", " +
                     k0.describe() + " and " + v0.describe());
  if ((pastK == nullptr) != (pastV == nullptr))
    return ctx.error("past_key and past_value must be given together");
  if (nonpad && pastK)
    return ctx.error("nonpad_kv_seqlen cannot be combined with past_key/past_value");
  AttnDims d{};
  d.threeD = q0.rank() == 3;
  d.batch = q0.dim(0);
  if (d.threeD) {
    d.qHeads = ctx.attrInt("q_num_heads", 0);
    d.kvHeads = ctx.attrInt("kv_num_heads", 0);
    if (d.qHeads <= 0 || d.kvHeads <= 0)
      return ctx.error("3-D inputs need attributes q_num_heads and kv_num_heads");
    if (q0.dim(2) % d.qHeads || k0.dim(2) % d.kvHeads || v0.dim(2) % d.kvHeads)
      return ctx.error("hidden sizes of Q " + q0.describe() + ", K " + k0.describe() +
                       " and V " + v0.describe() + " are not divisible by the head counts " +
                       std::to_string(d.qHeads) + "/" + std::to_string(d.kvHeads));
    d.qLen = q0.dim(1);
    d.kvLen = k0.dim(1);
    d.headDim = q0.dim(2) / d.qHeads;
    d.vHeadDim = v0.dim(2) / d.kvHeads;
    if (k0.dim(2) / d.kvHeads != d.headDim)
      return ctx.error("Q and K head sizes differ");
  } else {
    d.qHeads = q0.dim(1);
    d.kvHeads = k0.dim(1);
    d.qLen = q0.dim(2);
    d.kvLen = k0.dim(2);
    d.headDim = q0.dim(3);
    d.vHeadDim = v0.dim(3);
    if (k0.dim(3) != d.headDim || v0.dim(1) != d.kvHeads)
      return ctx.error("K " + k0.describe() + " and V " + v0.describe() +
                       " do not match Q " + q0.describe());
  }
  if (k0.dim(0) != d.batch || v0.dim(0) != d.batch ||
      v0.dim(d.threeD ? 1 : 2) != d.kvLen)
    return ctx.error("batch or sequence sizes of Q " + q0.describe() + ", K " + k0.describe() +
                     " and V " + v0.describe() + " disagree");
  if (d.kvHeads == 0 || d.qHeads % d.kvHeads)
    return ctx.error("q heads (" + std::to_string(d.qHeads) +
                     ") must be a multiple of kv heads (" + std::to_string(d.kvHeads) + ")");
  d.past = 0;
  if (pastK) {
    const Shape wantK{d.batch, d.kvHeads, pastK->dim(2), d.headDim};
    const Shape wantV{d.batch, d.kvHeads, pastK->rank() == 4 ? pastK->dim(2) : 0, d.vHeadDim};
    if (pastK->rank() != 4 || pastK->shape() != wantK || pastV->shape() != wantV)
      return ctx.error("past_key " + pastK->describe() + " / past_value " + pastV->describe() +
                       " must be [batch, kv_heads, past, head_size]");
    d.past = pastK->dim(2);
  }
  d.total = d.past + d.kvLen;

  const DType ct = computeType(q0.dtype());
  Tensor q, k, v, presentK, presentV;
  ACCEL_RT_ASSIGN_OR_RETURN(q, toHeadMajor(q0, d.qHeads, ct));
  ACCEL_RT_ASSIGN_OR_RETURN(k, toHeadMajor(k0, d.kvHeads, ct));
  ACCEL_RT_ASSIGN_OR_RETURN(v, toHeadMajor(v0, d.kvHeads, ct));
  ACCEL_RT_ASSIGN_OR_RETURN(presentK, concatSeq(pastK, k, ct));
  ACCEL_RT_ASSIGN_OR_RETURN(presentV, concatSeq(pastV, v, ct));

  // The mask as an additive f32/f64 bias broadcast over [B, Hq, Sq, Tm].
  Tensor bias;
  std::vector<int64_t> maskStride(4, 0);
  int64_t maskLen = 0;
  if (mask) {
    if (mask->rank() < 1 || mask->rank() > 4)
      return ctx.error("attn_mask must have rank 1 to 4, got " + mask->describe());
    Shape ms(size_t(4 - mask->rank()), 1);
    ms.insert(ms.end(), mask->shape().begin(), mask->shape().end());
    const int64_t want[3] = {d.batch, d.qHeads, d.qLen};
    for (int i = 0; i < 3; ++i)
      if (ms[size_t(i)] != 1 && ms[size_t(i)] != want[i])
        return ctx.error("attn_mask " + mask->describe() + " does not broadcast to [" +
                         std::to_string(d.batch) + ", " + std::to_string(d.qHeads) + ", " +
                         std::to_string(d.qLen) + ", " + std::to_string(d.total) + "]");
    maskLen = ms[3];
    if (maskLen > d.total)
      return ctx.error("attn_mask " + mask->describe() + " is longer than the " +
                       std::to_string(d.total) + " keys");
    if (mask->dtype() == DType::kI1) {
      ACCEL_RT_ASSIGN_OR_RETURN(bias, Tensor::allocate(ct, mask->shape()));
      const bool *m = mask->data<bool>();
      dispatchAllowed<kAllowFloat>(ct, [&](auto tag) {
        using T = typename decltype(tag)::type;
        T *b = bias.data<T>();
        for (int64_t i = 0; i < mask->numElements(); ++i)
          b[i] = m[i] ? T(0) : -std::numeric_limits<T>::infinity();
      });
    } else if (isFloat(mask->dtype())) {
      ACCEL_RT_ASSIGN_OR_RETURN(bias, convertTo(*mask, ct));
    } else {
      return ctx.error("attn_mask must be boolean or floating-point, got " + mask->describe());
    }
    int64_t s = 1;
    for (int i = 3; i >= 0; --i) {
      maskStride[size_t(i)] = ms[size_t(i)] == 1 ? 0 : s;
      s *= ms[size_t(i)];
    }
  }
  std::vector<int64_t> validLen(size_t(d.batch), d.total);
  if (nonpad) {
    std::vector<int64_t> np;
    ACCEL_RT_ASSIGN_OR_RETURN(np, readIndexTensor(ctx, *nonpad, "nonpad_kv_seqlen"));
    if (int64_t(np.size()) != d.batch)
      return ctx.error("nonpad_kv_seqlen must hold one length per batch, got " +
                       nonpad->describe());
    for (int64_t b = 0; b < d.batch; ++b)
      validLen[size_t(b)] = std::clamp<int64_t>(np[size_t(b)], 0, d.total);
  }

  const bool causal = ctx.attrInt("is_causal", 0) != 0;
  const double softcap = ctx.attrFloat("softcap", 0.0f);
  const double scale = ctx.hasAttr("scale") ? double(ctx.attrFloat("scale", 1.0f))
                                            : 1.0 / std::sqrt(double(d.headDim));
  const int64_t mode = ctx.attrInt("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3)
    return ctx.error("qk_matmul_output_mode must be 0 to 3, got " + std::to_string(mode));
  const bool wantQk = ctx.wants(3);
  // Sliding window (opset 25): query at absolute position p attends keys in
  // [p - left, p + right]; -1 leaves that side open.
  const int64_t leftWindow = ctx.attrInt("left_window_size", -1);
  const int64_t rightWindow = ctx.attrInt("right_window_size", -1);
  if (leftWindow < -1 || rightWindow < -1)
    return ctx.error("left_window_size and right_window_size must be -1 or >= 0");

  Tensor y, qk;
  ACCEL_RT_ASSIGN_OR_RETURN(y, Tensor::allocate(ct, {d.batch, d.qHeads, d.qLen, d.vHeadDim}));
  if (wantQk) {
    ACCEL_RT_ASSIGN_OR_RETURN(qk, Tensor::allocate(ct, {d.batch, d.qHeads, d.qLen, d.total}));
  }
  const int64_t group = d.qHeads / d.kvHeads;
  dispatchAllowed<kAllowFloat>(ct, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T ninf = -std::numeric_limits<T>::infinity();
    std::vector<T> scores(size_t(d.qLen * d.total)), rowBias(size_t(d.total));
    for (int64_t b = 0; b < d.batch; ++b)
      for (int64_t h = 0; h < d.qHeads; ++h) {
        const int64_t kvh = h / group;
        const T *qp = q.data<T>() + ((b * d.qHeads + h) * d.qLen) * d.headDim;
        const T *kp = presentK.data<T>() + ((b * d.kvHeads + kvh) * d.total) * d.headDim;
        const T *vp = presentV.data<T>() + ((b * d.kvHeads + kvh) * d.total) * d.vHeadDim;
        T *yp = y.data<T>() + ((b * d.qHeads + h) * d.qLen) * d.vHeadDim;
        T *qkp = wantQk ? qk.data<T>() + ((b * d.qHeads + h) * d.qLen) * d.total : nullptr;
        gemm<T>(true, d.qLen, d.total, d.headDim, qp, d.headDim, kp, d.headDim, scores.data(),
                d.total);
        const int64_t offset = nonpad ? validLen[size_t(b)] - d.qLen : d.past;
        for (int64_t i = 0; i < d.qLen; ++i) {
          T *s = scores.data() + i * d.total;
          T *qrow = qkp ? qkp + i * d.total : nullptr;
          bool anyOpen = false;
          for (int64_t j = 0; j < d.total; ++j) {
            T bj = 0;
            if (mask)
              bj = j < maskLen ? bias.data<T>()[b * maskStride[0] + h * maskStride[1] +
                                                i * maskStride[2] + j * maskStride[3]]
                               : ninf;
            if (causal && j > i + offset)
              bj = ninf;
            if ((leftWindow >= 0 && j < i + offset - leftWindow) ||
                (rightWindow >= 0 && j > i + offset + rightWindow))
              bj = ninf;
            if (j >= validLen[size_t(b)])
              bj = ninf;
            rowBias[size_t(j)] = bj;
            anyOpen |= bj != ninf;
            s[j] = T(s[j] * scale);
            if (qrow && mode == 0)
              qrow[j] = s[j];
            if (softcap > 0)
              s[j] = T(softcap * std::tanh(s[j] / softcap));
            if (qrow && mode == 1)
              qrow[j] = s[j];
            s[j] += bj;
            if (qrow && mode == 2)
              qrow[j] = s[j];
          }
          if (!anyOpen) { // fully masked: zero probabilities, zero output
            std::fill(s, s + d.total, T(0));
          } else {
            T m = ninf;
            for (int64_t j = 0; j < d.total; ++j)
              m = std::max(m, s[j]);
            T sum = 0;
            for (int64_t j = 0; j < d.total; ++j) {
              s[j] = std::exp(s[j] - m);
              sum += s[j];
            }
            for (int64_t j = 0; j < d.total; ++j)
              s[j] /= sum;
          }
          if (qrow && mode == 3)
            std::copy(s, s + d.total, qrow);
        }
        gemm<T>(false, d.qLen, d.vHeadDim, d.total, scores.data(), d.total, vp, d.vHeadDim, yp,
                d.vHeadDim);
      }
  });

  // Outputs in the input dtype; Y back to [B, Sq, Hq*Dv] for 3-D inputs.
  if (d.threeD) {
    Tensor y3;
    ACCEL_RT_ASSIGN_OR_RETURN(y3, Tensor::allocate(ct, {d.batch, d.qLen, d.qHeads * d.vHeadDim}));
    transposeBytes(y.rawData(), y.shape(), {0, 2, 1, 3}, y3.rawData(), dtypeSize(ct));
    y = y3;
  }
  ACCEL_RT_ASSIGN_OR_RETURN(ctx.outputs[0], convertTo(y, q0.dtype()));
  if (ctx.wants(1)) {
    ACCEL_RT_ASSIGN_OR_RETURN(ctx.outputs[1], convertTo(presentK, q0.dtype()));
  }
  if (ctx.wants(2)) {
    ACCEL_RT_ASSIGN_OR_RETURN(ctx.outputs[2], convertTo(presentV, q0.dtype()));
  }
  if (wantQk) {
    ACCEL_RT_ASSIGN_OR_RETURN(ctx.outputs[3], convertTo(qk, q0.dtype()));
  }
  return Status::ok();
}

/// com.microsoft GroupQueryAttention (onnxruntime's contrib op, CPU
/// semantics). query [B, S, N*H] (or packed [B, S, (N + 2*Nkv)*H] with key
/// and value absent); past_key/past_value [B, Nkv, P, H] (BNSH); seqlens_k
/// [B] i32 = total length - 1 per sequence; total_sequence_length a scalar.
/// The first prompt (S == total_sequence_length) has no past; otherwise
/// sequence b's past is seqlens_k[b] + 1 - S tokens. The new keys/values
/// (rotated when do_rotary) are written after that past into present
/// [B, Nkv, max(total, P), H]; query s attends keys up to past + s (and at
/// most the last local_window_size of them when it is >= 0), with
/// scores scale * q.k, softcapped when softcap > 0.
Status kGroupQueryAttention(KernelContext &ctx) {
  const Tensor &q0 = *ctx.in(0);
  const Tensor *k0 = ctx.in(1), *v0 = ctx.in(2), *pastK = ctx.in(3), *pastV = ctx.in(4);
  const Tensor *seqlens = ctx.in(5), *totalT = ctx.in(6), *cosT = ctx.in(7), *sinT = ctx.in(8);
  const Tensor *posIds = ctx.in(9);
  if (!seqlens || !totalT)
    return ctx.error("seqlens_k and total_sequence_length are required");
  for (size_t i : {10u, 11u, 12u, 13u})
    if (ctx.in(i))
      return ctx.unsupported(i == 10 ? "attention_bias" : i == 11 ? "head_sink"
                                                                  : "quantized KV (k_scale/v_scale)");
  if (ctx.attrInt("smooth_softmax", 0) != 0)
    return ctx.unsupported("smooth_softmax=1");
  if (ctx.attrInt("qk_output", 0) != 0 || ctx.wants(3))
    return ctx.unsupported("output_qk");
  ACCEL_RT_RETURN_IF_ERROR(checkAllowed(ctx, q0, kAllowFloat));
  const int64_t n = ctx.attrInt("num_heads", 0), nkv = ctx.attrInt("kv_num_heads", 0);
  if (n <= 0 || nkv <= 0 || n % nkv)
    return ctx.error("num_heads (" + std::to_string(n) + ") must be a positive multiple of "
                     "kv_num_heads (" + std::to_string(nkv) + ")");
  if (q0.rank() != 3)
    return ctx.error("query must be [batch, seq, hidden], got " + q0.describe());
  if ((k0 == nullptr) != (v0 == nullptr))
    return ctx.error("key and value must be given together");
  const bool packed = k0 == nullptr;
  const int64_t B = q0.dim(0), S = q0.dim(1);
  const int64_t H = packed ? q0.dim(2) / (n + 2 * nkv) : q0.dim(2) / n;
  if (H <= 0 || (packed ? q0.dim(2) != (n + 2 * nkv) * H : q0.dim(2) != n * H))
    return ctx.error("query " + q0.describe() + " does not split into " + std::to_string(n) +
                     (packed ? " + 2 x " + std::to_string(nkv) : std::string()) + " heads");
  if (!packed) {
    if (k0->rank() != 3 || v0->rank() != 3 || k0->dim(0) != B || k0->dim(1) != S ||
        k0->shape() != v0->shape() || k0->dim(2) != nkv * H)
      return ctx.error("key " + k0->describe() + " and value " + v0->describe() +
                       " must be [batch, seq, kv_num_heads * head_size]");
    if (k0->dtype() != q0.dtype() || v0->dtype() != q0.dtype())
      return ctx.error("query, key and value must have the same type");
  }
  if ((pastK == nullptr) != (pastV == nullptr))
    return ctx.error("past_key and past_value must be given together");
  int64_t P = 0;
  if (pastK) {
    if (pastK->rank() != 4 || pastK->dim(0) != B || pastK->dim(1) != nkv ||
        pastK->shape() != pastV->shape() || (pastK->dim(2) > 0 && pastK->dim(3) != H))
      return ctx.error("past_key " + pastK->describe() + " / past_value " + pastV->describe() +
                       " must be [batch, kv_num_heads, past, head_size] = [" +
                       std::to_string(B) + ", " + std::to_string(nkv) + ", past, " +
                       std::to_string(H) + "]");
    P = pastK->dim(2);
  }
  std::vector<int64_t> sk, tot;
  ACCEL_RT_ASSIGN_OR_RETURN(sk, readIndexTensor(ctx, *seqlens, "seqlens_k"));
  ACCEL_RT_ASSIGN_OR_RETURN(tot, readIndexTensor(ctx, *totalT, "total_sequence_length"));
  if (int64_t(sk.size()) != B)
    return ctx.error("seqlens_k must hold one length per batch, got " + seqlens->describe());
  if (tot.size() != 1)
    return ctx.error("total_sequence_length must be a scalar, got " + totalT->describe());
  const int64_t total = tot[0];
  const bool firstPrompt = S == total;
  const int64_t present = std::max(total, P);
  std::vector<int64_t> pastLen(static_cast<size_t>(B)), validLen(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) {
    const int64_t t = sk[size_t(b)] + 1;
    const int64_t p = firstPrompt ? 0 : t - S;
    if (t < 1 || t > total || p < 0 || p > P || (!firstPrompt && p + S > present))
      return ctx.error("seqlens_k[" + std::to_string(b) + "] = " + std::to_string(t - 1) +
                       " is inconsistent with " + std::to_string(S) + " new tokens, a past of " +
                       std::to_string(P) + " and total_sequence_length " +
                       std::to_string(total));
    pastLen[size_t(b)] = p;
    validLen[size_t(b)] = firstPrompt ? t : p + S;
  }
  const bool rotary = ctx.attrInt("do_rotary", 0) != 0;
  const bool interleaved = ctx.attrInt("rotary_interleaved", 0) != 0;
  int64_t half = 0;
  if (rotary) {
    if (!cosT || !sinT)
      return ctx.error("do_rotary=1 needs cos_cache and sin_cache");
    if (cosT->rank() != 2 || cosT->shape() != sinT->shape() || 2 * cosT->dim(1) > H)
      return ctx.error("cos_cache " + cosT->describe() + " and sin_cache " + sinT->describe() +
                       " must be [max_position, rotary_dim / 2] with rotary_dim <= head size " +
                       std::to_string(H));
    half = cosT->dim(1);
  }
  std::vector<int64_t> pos;
  if (rotary && posIds) {
    ACCEL_RT_ASSIGN_OR_RETURN(pos, readIndexTensor(ctx, *posIds, "position_ids"));
    if (int64_t(pos.size()) != B * S)
      return ctx.error("position_ids must be [batch, seq], got " + posIds->describe());
  }
  const double scale = ctx.hasAttr("scale") && ctx.attrFloat("scale", 0.0f) != 0.0f
                           ? double(ctx.attrFloat("scale", 1.0f))
                           : 1.0 / std::sqrt(double(H));
  const double softcap = ctx.attrFloat("softcap", 0.0f);
  const int64_t window = ctx.attrInt("local_window_size", -1);

  const DType ct = computeType(q0.dtype());
  Tensor qw, kw, vw, cw, sw;
  ACCEL_RT_ASSIGN_OR_RETURN(qw, convertTo(q0, ct));
  if (!packed) {
    ACCEL_RT_ASSIGN_OR_RETURN(kw, convertTo(*k0, ct));
    ACCEL_RT_ASSIGN_OR_RETURN(vw, convertTo(*v0, ct));
  }
  if (rotary) {
    ACCEL_RT_ASSIGN_OR_RETURN(cw, convertTo(*cosT, ct));
    ACCEL_RT_ASSIGN_OR_RETURN(sw, convertTo(*sinT, ct));
  }
  Tensor pk, pv;
  if (pastK && P > 0) {
    ACCEL_RT_ASSIGN_OR_RETURN(pk, convertTo(*pastK, ct));
    ACCEL_RT_ASSIGN_OR_RETURN(pv, convertTo(*pastV, ct));
  }
  Tensor y, presK, presV;
  ACCEL_RT_ASSIGN_OR_RETURN(y, Tensor::allocate(ct, {B, S, n * H}));
  presK = Tensor::zeros(ct, {B, nkv, present, H});
  presV = Tensor::zeros(ct, {B, nkv, present, H});
  if (!presK.defined() || !presV.defined())
    return ctx.error("cannot allocate present_key/present_value");
  const int64_t maxPos = rotary ? cosT->dim(0) : 0;
  Status st = Status::ok();
  dispatchAllowed<kAllowFloat>(ct, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T ninf = -std::numeric_limits<T>::infinity();
    const int64_t qStride = packed ? (n + 2 * nkv) * H : n * H;
    const int64_t kvStride = packed ? (n + 2 * nkv) * H : nkv * H;
    const T *qp = qw.data<T>();
    const T *kp = packed ? qp + n * H : kw.data<T>();
    const T *vp = packed ? qp + (n + nkv) * H : vw.data<T>();
    std::vector<T> qh(static_cast<size_t>(S * H)), scores(static_cast<size_t>(present));
    auto rotate = [&](T *x, int64_t p) {
      const T *cr = cw.data<T>() + p * half, *sr = sw.data<T>() + p * half;
      for (int64_t i = 0; i < half; ++i) {
        const int64_t i1 = interleaved ? 2 * i : i, i2 = interleaved ? 2 * i + 1 : i + half;
        const T x1 = x[i1], x2 = x[i2];
        x[i1] = cr[i] * x1 - sr[i] * x2;
        x[i2] = sr[i] * x1 + cr[i] * x2;
      }
    };
    for (int64_t b = 0; b < B && st.isOk(); ++b) {
      const int64_t past = pastLen[size_t(b)];
      auto position = [&](int64_t s) -> int64_t {
        if (!pos.empty())
          return pos[size_t(b * S + s)];
        return firstPrompt ? (s < validLen[size_t(b)] ? s : 1) : past + s;
      };
      if (rotary)
        for (int64_t s = 0; s < S; ++s)
          if (position(s) < 0 || position(s) >= maxPos) {
            st = ctx.error("position " + std::to_string(position(s)) +
                           " is outside the cos/sin cache of " + std::to_string(maxPos) +
                           " positions");
            return;
          }
      // present = past[0, past) ++ new (rotated).
      for (int64_t h = 0; h < nkv; ++h) {
        T *ok = presK.data<T>() + (b * nkv + h) * present * H;
        T *ov = presV.data<T>() + (b * nkv + h) * present * H;
        if (past > 0) {
          std::copy_n(pk.data<T>() + (b * nkv + h) * P * H, past * H, ok);
          std::copy_n(pv.data<T>() + (b * nkv + h) * P * H, past * H, ov);
        }
        for (int64_t s = 0; s < S; ++s) {
          T *dk = ok + (past + s) * H, *dv = ov + (past + s) * H;
          std::copy_n(kp + (b * S + s) * kvStride + h * H, H, dk);
          std::copy_n(vp + (b * S + s) * kvStride + h * H, H, dv);
          if (rotary)
            rotate(dk, position(s));
        }
      }
      for (int64_t h = 0; h < n; ++h) {
        const int64_t kvh = h / (n / nkv);
        const T *K = presK.data<T>() + (b * nkv + kvh) * present * H;
        const T *V = presV.data<T>() + (b * nkv + kvh) * present * H;
        for (int64_t s = 0; s < S; ++s) {
          T *x = qh.data() + s * H;
          std::copy_n(qp + (b * S + s) * qStride + h * H, H, x);
          if (rotary)
            rotate(x, position(s));
          T *out = y.data<T>() + (b * S + s) * n * H + h * H;
          const int64_t end = std::min(past + s + 1, validLen[size_t(b)]);
          const int64_t start = window > 0 ? std::max<int64_t>(0, past + s + 1 - window) : 0;
          if (end <= start) {
            std::fill(out, out + H, T(0));
            continue;
          }
          T m = ninf;
          for (int64_t j = start; j < end; ++j) {
            T acc = 0;
            for (int64_t d = 0; d < H; ++d)
              acc += x[d] * K[j * H + d];
            acc = T(acc * scale);
            if (softcap > 0)
              acc = T(softcap * std::tanh(acc / softcap));
            scores[size_t(j)] = acc;
            m = std::max(m, acc);
          }
          T sum = 0;
          for (int64_t j = start; j < end; ++j) {
            scores[size_t(j)] = std::exp(scores[size_t(j)] - m);
            sum += scores[size_t(j)];
          }
          std::fill(out, out + H, T(0));
          for (int64_t j = start; j < end; ++j) {
            const T w = scores[size_t(j)] / sum;
            for (int64_t d = 0; d < H; ++d)
              out[d] += w * V[j * H + d];
          }
        }
      }
    }
  });
  ACCEL_RT_RETURN_IF_ERROR(st);
  ACCEL_RT_ASSIGN_OR_RETURN(ctx.outputs[0], convertTo(y, q0.dtype()));
  if (ctx.wants(1)) {
    ACCEL_RT_ASSIGN_OR_RETURN(ctx.outputs[1], convertTo(presK, q0.dtype()));
  }
  if (ctx.wants(2)) {
    ACCEL_RT_ASSIGN_OR_RETURN(ctx.outputs[2], convertTo(presV, q0.dtype()));
  }
  return Status::ok();
}

} // namespace

void addAttentionKernels(KernelTable &t) { t["Attention"] = {kAttention, 3, 7, 4}; }

void addMicrosoftAttentionKernels(KernelTable &ms) {
  ms["GroupQueryAttention"] = {kGroupQueryAttention, 1, 14, 4};
}

} // namespace accel::rt::onnx
