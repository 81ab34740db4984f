// RUN: accel-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(accel-kv-cache-dtype))' | FileCheck %s
// RUN: accel-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(accel-kv-cache-dtype{k-scale=0.5 v-scale=0.25}))' | FileCheck %s --check-prefix=SCALES
// RUN: not accel-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(accel-kv-cache-dtype{dtype=i8}))' 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not accel-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(accel-kv-cache-dtype{k-scale=0.0}))' 2>&1 | FileCheck %s --check-prefix=ZERO
// Calibration (tokens=) runs the function on the CPU evaluator first: it must
// be a model function taking token ids (accelc -kv-cache-dtype=fp8 -calibration,
// test/Precision/kv-cache-calibrated.test, shows the per-head scales).
// RUN: not accel-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(accel-kv-cache-dtype{tokens=%S/Inputs/w8a8_calib.npy}))' 2>&1 | FileCheck %s --check-prefix=NOTTM
//
// -kv-cache-dtype=fp8 (docs/precision.md): the cache argument becomes
// f8E4M3FN and every attention gets static per-layer scales.

// BAD: accel-kv-cache-dtype: dtype must be f8E4M3FN, not 'i8'
// ZERO: accel-kv-cache-dtype: k-scale and v-scale must be positive
// NOTTM: accel-kv-cache-dtype: sequence 0 of {{.*}}w8a8_calib.npy: @attend must take exactly one tensor argument, the token ids

// CHECK-LABEL: func @attend
// CHECK-SAME: %{{.+}}: !transformer.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, block_size = 16, f8E4M3FN>
// CHECK: transformer.attention {{.+}}[0]{{.+}}k_scale = 1.000000e+00 : f64{{.+}}v_scale = 1.000000e+00 : f64
// CHECK: transformer.attention {{.+}}[1]{{.+}}k_scale = 1.000000e+00 : f64{{.+}}v_scale = 1.000000e+00 : f64
// SCALES: transformer.attention {{.+}}k_scale = 5.000000e-01 : f64{{.+}}v_scale = 2.500000e-01 : f64
func.func @attend(%q: tensor<?x4x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x16xf32>,
                  %batch: !transformer.batch,
                  %cache: !transformer.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, block_size = 16, f32>)
    -> tensor<?x4x16xf32> {
  %o = transformer.attention %q, %k, %v, %cache[0], %batch {causal, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 2.500000e-01 : f64}
         : tensor<?x4x16xf32>, tensor<?x2x16xf32>, !transformer.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, block_size = 16, f32>
  %p = transformer.attention %o, %k, %v, %cache[1], %batch {causal, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 2.500000e-01 : f64}
         : tensor<?x4x16xf32>, tensor<?x2x16xf32>, !transformer.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, block_size = 16, f32>
  return %p : tensor<?x4x16xf32>
}
