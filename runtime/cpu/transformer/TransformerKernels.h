//===- TransformerKernels.h - every transformer-level CPU kernel -*- C++ -*-===//
//
// One include for the CPU implementations of the transformer dialect's ops
// and the exec steps they lower to (what accel-run's CPU backend executes and
// what the compiler checks raised graphs against). Each kernel is a plain
// function over runtime Tensors returning a Status; activations are
// token-major ([tokens, hidden] or [tokens, heads, head_dim]) for a ragged
// batch, math is f32, results keep x's dtype unless a kernel says otherwise.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CPU_TRANSFORMER_TRANSFORMERKERNELS_H
#define ACCEL_RUNTIME_CPU_TRANSFORMER_TRANSFORMERKERNELS_H

#include "runtime/cpu/transformer/Activation.h"
#include "runtime/cpu/transformer/Embedding.h"
#include "runtime/cpu/transformer/GatedMlp.h"
#include "runtime/cpu/transformer/KVWrite.h"
#include "runtime/cpu/transformer/Linear.h"
#include "runtime/cpu/transformer/QuantLinear.h"
#include "runtime/cpu/transformer/Logits.h"
#include "runtime/cpu/transformer/Moe.h"
#include "runtime/cpu/transformer/Norm.h"
#include "runtime/cpu/transformer/PagedAttention.h"
#include "runtime/cpu/transformer/Parallel.h"
#include "runtime/cpu/transformer/QkvRotary.h"
#include "runtime/cpu/transformer/Residual.h"
#include "runtime/cpu/transformer/Rotary.h"
#include "runtime/cpu/transformer/Split.h"

#endif // ACCEL_RUNTIME_CPU_TRANSFORMER_TRANSFORMERKERNELS_H
