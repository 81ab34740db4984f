// RUN: accel-opt %s -split-input-file -accel-exec-assign-buffers | FileCheck %s
// RUN: accel-opt %s -split-input-file -accel-exec-assign-buffers="alignment=64" | FileCheck %s --check-prefix=A64
//
// accel-exec-assign-buffers: every exec.alloc becomes a slice of @act, by
// region (fixed, tokens, seqs), packed by liveness.

// A chain x -> y -> z -> w of [T, 64] f32 buffers (256 bytes per token). A
// step's output never shares bytes with its inputs (x and y are both live
// at the norm that reads x), so z reuses x's bytes and w y's: two 256-byte
// slots per token in all.
// CHECK-LABEL: exec.arena @act activations size 0 per_token 512 align 256
// CHECK: %[[X:.+]] = exec.slice @act[tokens 0] sizes(%{{.+}}) : !exec.view<?x64xf32>
// CHECK: %[[Y:.+]] = exec.slice @act[tokens 256] sizes(%{{.+}}) : !exec.view<?x64xf32>
// CHECK: exec.rms_norm %[[X]], %{{.+}} -> %[[Y]]
// CHECK: %[[Z:.+]] = exec.slice @act[tokens 0] sizes(%{{.+}}) : !exec.view<?x64xf32>
// CHECK: exec.rms_norm %[[Y]], %{{.+}} -> %[[Z]]
// CHECK: %[[W:.+]] = exec.slice @act[tokens 256] sizes(%{{.+}}) : !exec.view<?x64xf32>
// CHECK: exec.rms_norm %[[Z]], %{{.+}} -> %[[W]]
// CHECK: exec.step_output logits %[[W]]
// CHECK-NOT: exec.alloc
// With a 64-byte alignment, rows of 256 bytes pack the same way.
// A64-LABEL: exec.arena @act activations size 0 per_token 512 align 64
exec.arena @weights weights size 256 align 64 section "weights"
exec.schedule @main mixed {
  %t = exec.step_size tokens
  %ids = exec.step_input token_ids : !exec.view<?xi64>
  %table = exec.weight "table" @weights[0] : !exec.view<1x64xf32>
  %w = exec.weight "norm" @weights[0] : !exec.view<64xf32>
  %x = exec.alloc sizes(%t) : !exec.view<?x64xf32>
  exec.embedding %table[%ids] -> %x : !exec.view<1x64xf32>, !exec.view<?xi64> -> !exec.view<?x64xf32>
  %y = exec.alloc sizes(%t) : !exec.view<?x64xf32>
  exec.rms_norm %x, %w -> %y {epsilon = 1.0e-05 : f64} : !exec.view<?x64xf32>, !exec.view<64xf32> -> !exec.view<?x64xf32>
  %z = exec.alloc sizes(%t) : !exec.view<?x64xf32>
  exec.rms_norm %y, %w -> %z {epsilon = 1.0e-05 : f64} : !exec.view<?x64xf32>, !exec.view<64xf32> -> !exec.view<?x64xf32>
  %v = exec.alloc sizes(%t) : !exec.view<?x64xf32>
  exec.rms_norm %z, %w -> %v {epsilon = 1.0e-05 : f64} : !exec.view<?x64xf32>, !exec.view<64xf32> -> !exec.view<?x64xf32>
  exec.step_output logits %v : !exec.view<?x64xf32>
}

// -----

// A residual read far ahead stays live across the steps between. The
// largest buffer is placed first ([T, 128] at 0), then by start: r above
// it, the split's two outputs above both (they are written while big is
// read and r is live, even the one nothing reads), and the sum reuses big's
// bytes once the split has read them.
// CHECK-LABEL: exec.arena @act activations size 0 per_token 1280 align 256
// CHECK: %[[R:.+]] = exec.slice @act[tokens 512] sizes(%{{.+}}) : !exec.view<?x64xf32>
// CHECK: %[[BIG:.+]] = exec.slice @act[tokens 0] sizes(%{{.+}}) : !exec.view<?x128xf32>
// CHECK: %[[V:.+]] = exec.view %[[BIG]] : !exec.view<?x128xf32> -> !exec.view<?x2x64xf32>
// CHECK: %[[S:.+]] = exec.slice @act[tokens 768] sizes(%{{.+}}) : !exec.view<?x64xf32>
// CHECK: %[[X:.+]] = exec.slice @act[tokens 1024] sizes(%{{.+}}) : !exec.view<?x64xf32>
// CHECK: %[[SUM:.+]] = exec.slice @act[tokens 0] sizes(%{{.+}}) : !exec.view<?x64xf32>
// CHECK: exec.residual_add %[[R]], %[[S]] -> %[[SUM]]
exec.arena @weights weights size 512 align 64 section "weights"
exec.schedule @main mixed {
  %t = exec.step_size tokens
  %ids = exec.step_input token_ids : !exec.view<?xi64>
  %table = exec.weight "table" @weights[0] : !exec.view<1x64xf32>
  %t2 = exec.weight "table2" @weights[0] : !exec.view<1x128xf32>
  %r = exec.alloc sizes(%t) : !exec.view<?x64xf32>
  exec.embedding %table[%ids] -> %r : !exec.view<1x64xf32>, !exec.view<?xi64> -> !exec.view<?x64xf32>
  %big = exec.alloc sizes(%t) : !exec.view<?x128xf32>
  exec.embedding %t2[%ids] -> %big : !exec.view<1x128xf32>, !exec.view<?xi64> -> !exec.view<?x128xf32>
  %v = exec.view %big : !exec.view<?x128xf32> -> !exec.view<?x2x64xf32>
  %s = exec.alloc sizes(%t) : !exec.view<?x64xf32>
  %x = exec.alloc sizes(%t) : !exec.view<?x64xf32>
  exec.split %big -> %s, %x : !exec.view<?x128xf32> -> !exec.view<?x64xf32>, !exec.view<?x64xf32>
  %sum = exec.alloc sizes(%t) : !exec.view<?x64xf32>
  exec.residual_add %r, %s -> %sum : !exec.view<?x64xf32>
  exec.step_output logits %sum : !exec.view<?x64xf32>
}

// -----

// Static buffers go to the fixed region; one row per sequence to the seqs
// region (the logits).
// CHECK-LABEL: exec.arena @act activations size 256 per_token 256 per_seq 1024 align 256
// CHECK: exec.slice @act[fixed 0] : !exec.view<2x8xf32>
// CHECK: exec.slice @act[tokens 0] sizes(%{{.+}}) : !exec.view<?x64xf32>
// CHECK: exec.slice @act[seqs 0] sizes(%{{.+}}) : !exec.view<?x256xf32>
exec.arena @weights weights size 70016 align 64 section "weights"
exec.schedule @main mixed {
  %t = exec.step_size tokens
  %s = exec.step_size seqs
  %ids = exec.step_input token_ids : !exec.view<?xi64>
  %table = exec.weight "table" @weights[0] : !exec.view<1x64xf32>
  %lm = exec.weight "lm" @weights[256] : !exec.view<256x64xf32>
  %c = exec.weight "c" @weights[0] : !exec.view<2x8xf32>
  %e = exec.alloc : !exec.view<2x8xf32>
  exec.copy %c -> %e : !exec.view<2x8xf32> -> !exec.view<2x8xf32>
  %h = exec.alloc sizes(%t) : !exec.view<?x64xf32>
  exec.embedding %table[%ids] -> %h : !exec.view<1x64xf32>, !exec.view<?xi64> -> !exec.view<?x64xf32>
  %l = exec.alloc sizes(%s) : !exec.view<?x256xf32>
  exec.logits %h, %lm -> %l {select_last} : !exec.view<?x64xf32>, !exec.view<256x64xf32> -> !exec.view<?x256xf32>
  exec.step_output logits %l : !exec.view<?x256xf32>
}
