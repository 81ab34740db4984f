// RUN: accel-opt %s -split-input-file -verify-diagnostics
//
// One case per verifier rule of transformer.moe, with the exact diagnostic
// it gives.

func.func @moe_top_k(%x: tensor<?x16xf32>, %r: tensor<4x16xf32>, %gu: tensor<4x8x16xf32>, %d: tensor<4x16x4xf32>) {
  // expected-error @+1 {{top_k = 5 exceeds num_experts = 4}}
  %0 = transformer.moe %x router(%r) gate_up(%gu) down(%d) kind = silu routing = renormalize {num_experts = 4 : i64, top_k = 5 : i64}
         : (tensor<?x16xf32>, tensor<4x16xf32>, tensor<4x8x16xf32>, tensor<4x16x4xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @moe_top_k_zero(%x: tensor<?x16xf32>, %r: tensor<4x16xf32>, %gu: tensor<4x8x16xf32>, %d: tensor<4x16x4xf32>) {
  // expected-error @+1 {{attribute 'top_k' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = transformer.moe %x router(%r) gate_up(%gu) down(%d) kind = silu routing = renormalize {num_experts = 4 : i64, top_k = 0 : i64}
         : (tensor<?x16xf32>, tensor<4x16xf32>, tensor<4x8x16xf32>, tensor<4x16x4xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @moe_router_experts(%x: tensor<?x16xf32>, %r: tensor<3x16xf32>, %gu: tensor<4x8x16xf32>, %d: tensor<4x16x4xf32>) {
  // expected-error @+1 {{router must be [num_experts = 4, hidden = 16], got 'tensor<3x16xf32>'}}
  %0 = transformer.moe %x router(%r) gate_up(%gu) down(%d) kind = silu routing = renormalize {num_experts = 4 : i64, top_k = 2 : i64}
         : (tensor<?x16xf32>, tensor<3x16xf32>, tensor<4x8x16xf32>, tensor<4x16x4xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @moe_router_hidden(%x: tensor<?x16xf32>, %r: tensor<4x8xf32>, %gu: tensor<4x8x16xf32>, %d: tensor<4x16x4xf32>) {
  // expected-error @+1 {{router must be [num_experts = 4, hidden = 16], got 'tensor<4x8xf32>'}}
  %0 = transformer.moe %x router(%r) gate_up(%gu) down(%d) kind = silu routing = renormalize {num_experts = 4 : i64, top_k = 2 : i64}
         : (tensor<?x16xf32>, tensor<4x8xf32>, tensor<4x8x16xf32>, tensor<4x16x4xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @moe_router_bias(%x: tensor<?x16xf32>, %r: tensor<4x16xf32>, %gu: tensor<4x8x16xf32>, %d: tensor<4x16x4xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{router_bias must be [num_experts = 4], got 'tensor<3xf32>'}}
  %0 = transformer.moe %x router(%r) router_bias(%b) gate_up(%gu) down(%d) kind = silu routing = renormalize {num_experts = 4 : i64, top_k = 2 : i64}
         : (tensor<?x16xf32>, tensor<4x16xf32>, tensor<3xf32>, tensor<4x8x16xf32>, tensor<4x16x4xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @moe_both(%x: tensor<?x16xf32>, %r: tensor<4x16xf32>, %gu: tensor<4x8x16xf32>, %d: tensor<4x16x4xf32>, %g: tensor<4x4x16xf32>) {
  // expected-error @+1 {{takes gate_up or gate and up, not both}}
  %0 = transformer.moe %x router(%r) gate_up(%gu) gate(%g) up(%g) down(%d) kind = silu routing = renormalize {num_experts = 4 : i64, top_k = 2 : i64}
         : (tensor<?x16xf32>, tensor<4x16xf32>, tensor<4x8x16xf32>, tensor<4x4x16xf32>, tensor<4x4x16xf32>, tensor<4x16x4xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @moe_no_up(%x: tensor<?x16xf32>, %r: tensor<4x16xf32>, %g: tensor<4x4x16xf32>, %d: tensor<4x16x4xf32>) {
  // expected-error @+1 {{needs gate_up, or both gate and up}}
  %0 = transformer.moe %x router(%r) gate(%g) down(%d) kind = silu routing = renormalize {num_experts = 4 : i64, top_k = 2 : i64}
         : (tensor<?x16xf32>, tensor<4x16xf32>, tensor<4x4x16xf32>, tensor<4x16x4xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @moe_gate_up_types(%x: tensor<?x16xf32>, %r: tensor<4x16xf32>, %g: tensor<4x4x16xf32>, %u: tensor<4x2x16xf32>, %d: tensor<4x16x4xf32>) {
  // expected-error @+1 {{gate and up must have the same type, got 'tensor<4x4x16xf32>' and 'tensor<4x2x16xf32>'}}
  %0 = transformer.moe %x router(%r) gate(%g) up(%u) down(%d) kind = silu routing = renormalize {num_experts = 4 : i64, top_k = 2 : i64}
         : (tensor<?x16xf32>, tensor<4x16xf32>, tensor<4x4x16xf32>, tensor<4x2x16xf32>, tensor<4x16x4xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @moe_gate_hidden(%x: tensor<?x16xf32>, %r: tensor<4x16xf32>, %g: tensor<4x4x8xf32>, %d: tensor<4x16x4xf32>) {
  // expected-error @+1 {{gate and up must be [num_experts, intermediate, hidden = 16], got 'tensor<4x4x8xf32>'}}
  %0 = transformer.moe %x router(%r) gate(%g) up(%g) down(%d) kind = silu routing = renormalize {num_experts = 4 : i64, top_k = 2 : i64}
         : (tensor<?x16xf32>, tensor<4x16xf32>, tensor<4x4x8xf32>, tensor<4x4x8xf32>, tensor<4x16x4xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @moe_gate_experts(%x: tensor<?x16xf32>, %r: tensor<4x16xf32>, %g: tensor<3x4x16xf32>, %d: tensor<4x16x4xf32>) {
  // expected-error @+1 {{gate stacks 3 experts but num_experts = 4}}
  %0 = transformer.moe %x router(%r) gate(%g) up(%g) down(%d) kind = silu routing = renormalize {num_experts = 4 : i64, top_k = 2 : i64}
         : (tensor<?x16xf32>, tensor<4x16xf32>, tensor<3x4x16xf32>, tensor<3x4x16xf32>, tensor<4x16x4xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @moe_gate_up_experts(%x: tensor<?x16xf32>, %r: tensor<4x16xf32>, %gu: tensor<2x8x16xf32>, %d: tensor<4x16x4xf32>) {
  // expected-error @+1 {{gate_up stacks 2 experts but num_experts = 4}}
  %0 = transformer.moe %x router(%r) gate_up(%gu) down(%d) kind = silu routing = renormalize {num_experts = 4 : i64, top_k = 2 : i64}
         : (tensor<?x16xf32>, tensor<4x16xf32>, tensor<2x8x16xf32>, tensor<4x16x4xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @moe_gate_up_odd(%x: tensor<?x16xf32>, %r: tensor<4x16xf32>, %gu: tensor<4x7x16xf32>, %d: tensor<4x16x4xf32>) {
  // expected-error @+1 {{gate_up must be [num_experts, 2 * intermediate, hidden = 16], got 'tensor<4x7x16xf32>'}}
  %0 = transformer.moe %x router(%r) gate_up(%gu) down(%d) kind = silu routing = renormalize {num_experts = 4 : i64, top_k = 2 : i64}
         : (tensor<?x16xf32>, tensor<4x16xf32>, tensor<4x7x16xf32>, tensor<4x16x4xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @moe_down_experts(%x: tensor<?x16xf32>, %r: tensor<4x16xf32>, %gu: tensor<4x8x16xf32>, %d: tensor<8x16x4xf32>) {
  // expected-error @+1 {{down stacks 8 experts but num_experts = 4}}
  %0 = transformer.moe %x router(%r) gate_up(%gu) down(%d) kind = silu routing = renormalize {num_experts = 4 : i64, top_k = 2 : i64}
         : (tensor<?x16xf32>, tensor<4x16xf32>, tensor<4x8x16xf32>, tensor<8x16x4xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @moe_down_inter(%x: tensor<?x16xf32>, %r: tensor<4x16xf32>, %gu: tensor<4x8x16xf32>, %d: tensor<4x16x8xf32>) {
  // expected-error @+1 {{down must be [num_experts, hidden = 16, intermediate = 4], got 'tensor<4x16x8xf32>'}}
  %0 = transformer.moe %x router(%r) gate_up(%gu) down(%d) kind = silu routing = renormalize {num_experts = 4 : i64, top_k = 2 : i64}
         : (tensor<?x16xf32>, tensor<4x16xf32>, tensor<4x8x16xf32>, tensor<4x16x8xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @moe_shared_half(%x: tensor<?x16xf32>, %r: tensor<4x16xf32>, %gu: tensor<4x8x16xf32>, %d: tensor<4x16x4xf32>, %sgu: tensor<8x16xf32>) {
  // expected-error @+1 {{a shared expert needs both shared_gate_up and shared_down}}
  %0 = transformer.moe %x router(%r) gate_up(%gu) down(%d) shared_gate_up(%sgu) kind = silu routing = renormalize {num_experts = 4 : i64, top_k = 2 : i64}
         : (tensor<?x16xf32>, tensor<4x16xf32>, tensor<4x8x16xf32>, tensor<4x16x4xf32>, tensor<8x16xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @moe_shared_gate_up(%x: tensor<?x16xf32>, %r: tensor<4x16xf32>, %gu: tensor<4x8x16xf32>, %d: tensor<4x16x4xf32>, %sgu: tensor<8x8xf32>, %sd: tensor<16x4xf32>) {
  // expected-error @+1 {{shared_gate_up must be [2 * shared intermediate, hidden = 16], got 'tensor<8x8xf32>'}}
  %0 = transformer.moe %x router(%r) gate_up(%gu) down(%d) shared_gate_up(%sgu) shared_down(%sd) kind = silu routing = renormalize {num_experts = 4 : i64, top_k = 2 : i64}
         : (tensor<?x16xf32>, tensor<4x16xf32>, tensor<4x8x16xf32>, tensor<4x16x4xf32>, tensor<8x8xf32>, tensor<16x4xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @moe_shared_down(%x: tensor<?x16xf32>, %r: tensor<4x16xf32>, %gu: tensor<4x8x16xf32>, %d: tensor<4x16x4xf32>, %sgu: tensor<8x16xf32>, %sd: tensor<16x8xf32>) {
  // expected-error @+1 {{shared_down must be [hidden = 16, shared intermediate = 4], got 'tensor<16x8xf32>'}}
  %0 = transformer.moe %x router(%r) gate_up(%gu) down(%d) shared_gate_up(%sgu) shared_down(%sd) kind = silu routing = renormalize {num_experts = 4 : i64, top_k = 2 : i64}
         : (tensor<?x16xf32>, tensor<4x16xf32>, tensor<4x8x16xf32>, tensor<4x16x4xf32>, tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @moe_shared_gate_alone(%x: tensor<?x16xf32>, %r: tensor<4x16xf32>, %gu: tensor<4x8x16xf32>, %d: tensor<4x16x4xf32>, %sg: tensor<1x16xf32>) {
  // expected-error @+1 {{shared_expert_gate scales a shared expert, and there is none}}
  %0 = transformer.moe %x router(%r) gate_up(%gu) down(%d) shared_expert_gate(%sg) kind = silu routing = renormalize {num_experts = 4 : i64, top_k = 2 : i64}
         : (tensor<?x16xf32>, tensor<4x16xf32>, tensor<4x8x16xf32>, tensor<4x16x4xf32>, tensor<1x16xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @moe_shared_gate_shape(%x: tensor<?x16xf32>, %r: tensor<4x16xf32>, %gu: tensor<4x8x16xf32>, %d: tensor<4x16x4xf32>, %sgu: tensor<8x16xf32>, %sd: tensor<16x4xf32>, %sg: tensor<2x16xf32>) {
  // expected-error @+1 {{shared_expert_gate must be [1, hidden = 16], got 'tensor<2x16xf32>'}}
  %0 = transformer.moe %x router(%r) gate_up(%gu) down(%d) shared_gate_up(%sgu) shared_down(%sd) shared_expert_gate(%sg) kind = silu routing = renormalize {num_experts = 4 : i64, top_k = 2 : i64}
         : (tensor<?x16xf32>, tensor<4x16xf32>, tensor<4x8x16xf32>, tensor<4x16x4xf32>, tensor<8x16xf32>, tensor<16x4xf32>, tensor<2x16xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @moe_weight_type(%x: tensor<?x16xbf16>, %r: tensor<4x16xbf16>, %gu: tensor<4x8x16xf32>, %d: tensor<4x16x4xbf16>) {
  // expected-error @+1 {{weight element type 'f32' does not match the x element type 'bf16' (only f32 x may read f16 or bf16 weights)}}
  %0 = transformer.moe %x router(%r) gate_up(%gu) down(%d) kind = silu routing = renormalize {num_experts = 4 : i64, top_k = 2 : i64}
         : (tensor<?x16xbf16>, tensor<4x16xbf16>, tensor<4x8x16xf32>, tensor<4x16x4xbf16>) -> tensor<?x16xbf16>
  return
}

// -----

func.func @moe_result_type(%x: tensor<?x16xf32>, %r: tensor<4x16xf32>, %gu: tensor<4x8x16xf32>, %d: tensor<4x16x4xf32>) {
  // expected-error @+1 {{failed to verify that all of {x, result} have same type}}
  %0 = transformer.moe %x router(%r) gate_up(%gu) down(%d) kind = silu routing = renormalize {num_experts = 4 : i64, top_k = 2 : i64}
         : (tensor<?x16xf32>, tensor<4x16xf32>, tensor<4x8x16xf32>, tensor<4x16x4xf32>) -> tensor<?x16xbf16>
  return
}

// -----

func.func @moe_expert_rank(%x: tensor<?x16xf32>, %r: tensor<4x16xf32>, %gu: tensor<32x16xf32>, %d: tensor<4x16x4xf32>) {
  // expected-error @+1 {{operand #2 must be 3D tensor of f32, f16, bf16, f8E4M3FN or i8 values, but got 'tensor<32x16xf32>'}}
  %0 = "transformer.moe"(%x, %r, %gu, %d) {kind = #transformer<activation_kind silu>, routing = #transformer<moe_routing renormalize>, num_experts = 4 : i64, top_k = 2 : i64, operandSegmentSizes = array<i32: 1, 1, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0>}
         : (tensor<?x16xf32>, tensor<4x16xf32>, tensor<32x16xf32>, tensor<4x16x4xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @moe_quantised_without_scale(%x: tensor<?x16xf32>, %r: tensor<4x16xf32>, %gu: tensor<4x8x16xi8>, %d: tensor<4x16x4xf32>) {
  // expected-error @+1 {{gate_up is quantised ('i8') and needs gate_up_scale [num_experts, rows]}}
  %0 = transformer.moe %x router(%r) gate_up(%gu) down(%d) kind = silu routing = renormalize {num_experts = 4 : i64, top_k = 2 : i64}
         : (tensor<?x16xf32>, tensor<4x16xf32>, tensor<4x8x16xi8>, tensor<4x16x4xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @moe_scale_of_float_experts(%x: tensor<?x16xf32>, %r: tensor<4x16xf32>, %gu: tensor<4x8x16xf32>, %d: tensor<4x16x4xf32>, %s: tensor<4x16xf32>) {
  // expected-error @+1 {{down_scale scales quantised (i8 or f8E4M3FN) experts, but down is 'f32'}}
  %0 = transformer.moe %x router(%r) gate_up(%gu) down(%d) down_scale(%s) kind = silu routing = renormalize {num_experts = 4 : i64, top_k = 2 : i64}
         : (tensor<?x16xf32>, tensor<4x16xf32>, tensor<4x8x16xf32>, tensor<4x16x4xf32>, tensor<4x16xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @moe_scale_shape(%x: tensor<?x16xf32>, %r: tensor<4x16xf32>, %g: tensor<4x4x16xf8E4M3FN>, %u: tensor<4x4x16xf8E4M3FN>, %d: tensor<4x16x4xf32>, %gs: tensor<4x4xf32>, %us: tensor<4x16xf32>) {
  // expected-error @+1 {{up_scale must be f32 [4, 4] (per expert and row), got 'tensor<4x16xf32>'}}
  %0 = transformer.moe %x router(%r) gate(%g) up(%u) down(%d) gate_scale(%gs) up_scale(%us) kind = silu routing = renormalize {num_experts = 4 : i64, top_k = 2 : i64}
         : (tensor<?x16xf32>, tensor<4x16xf32>, tensor<4x4x16xf8E4M3FN>, tensor<4x4x16xf8E4M3FN>, tensor<4x16x4xf32>, tensor<4x4xf32>, tensor<4x16xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @moe_quantised_experts_bf16_x(%x: tensor<?x16xbf16>, %r: tensor<4x16xbf16>, %gu: tensor<4x8x16xi8>, %d: tensor<4x16x4xi8>, %gus: tensor<4x8xf32>, %ds: tensor<4x16xf32>) {
  // Quantised experts under bf16 activations: accepted (the scales stay f32).
  %0 = transformer.moe %x router(%r) gate_up(%gu) down(%d) gate_up_scale(%gus) down_scale(%ds) kind = silu routing = renormalize {num_experts = 4 : i64, top_k = 2 : i64}
         : (tensor<?x16xbf16>, tensor<4x16xbf16>, tensor<4x8x16xi8>, tensor<4x16x4xi8>, tensor<4x8xf32>, tensor<4x16xf32>) -> tensor<?x16xbf16>
  return
}
