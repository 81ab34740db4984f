/*===- generate.c - compile, load, score and generate, from C -------------===*
 *
 *   accel-c-example <model.onnx> <out.plan> [prompt] [max_tokens]
 *
 * Compiles the ONNX model into a plan (tokenizer.json and config.json beside
 * the model are picked up), loads it, scores a few tokens and prints the
 * most likely next token at each position, then generates: from the text
 * prompt, streamed to stdout, when the plan carries a tokenizer; from token
 * ids otherwise. Plain C99; links libaccel.so only.
 *
 *===----------------------------------------------------------------------===*/
#include "accel.h"

#include <stdio.h>
#include <stdlib.h>

/* Compiler warnings (a subgraph that could not be raised) go to stderr. */
static void on_diagnostic(const char *line, void *user_data) {
  (void)user_data;
  fprintf(stderr, "%s\n", line);
}

/* Streams generated text as it becomes final. */
static void on_text(const char *text, size_t length, void *user_data) {
  (void)user_data;
  fwrite(text, 1, length, stdout);
  fflush(stdout);
}

static int fail(const char *what, accel_status status) {
  fprintf(stderr, "accel-c-example: %s failed (%s): %s\n", what, accel_status_name(status),
          accel_last_error());
  return 1;
}

int main(int argc, char **argv) {
  const char *onnx_path, *plan_path, *prompt;
  long max_tokens = 32;
  accel_compile_options compile;
  accel_model *model = NULL;
  accel_generate_options gen;
  accel_status status;
  int64_t ids[8];
  size_t n = 0, i;
  int64_t *prompt_ids = NULL, *tokens = NULL;
  size_t num_prompt_ids = 0, num_tokens = 0;
  float *logits;
  int64_t vocab;
  int rc = 1;

  if (argc < 3 || argc > 5) {
    fprintf(stderr, "usage: %s <model.onnx> <out.plan> [prompt] [max_tokens]\n", argv[0]);
    return 2;
  }
  onnx_path = argv[1];
  plan_path = argv[2];
  prompt = argc > 3 ? argv[3] : "In the beginning";
  if (argc > 4)
    max_tokens = strtol(argv[4], NULL, 10);
  if (accel_version() != ACCEL_API_VERSION) {
    fprintf(stderr, "accel-c-example: built against accel %d.%d.%d, running with %s\n",
            ACCEL_VERSION_MAJOR, ACCEL_VERSION_MINOR, ACCEL_VERSION_PATCH,
            accel_version_string());
    return 1;
  }
  printf("accel %s\n", accel_version_string());

  /* 1. Compile: ONNX -> plan. */
  accel_compile_options_init(&compile);
  compile.onnx_path = onnx_path;
  compile.output_path = plan_path;
  compile.on_diagnostic = on_diagnostic;
  status = accel_compile(&compile);
  if (status != ACCEL_OK)
    return fail("compiling", status);
  printf("compiled %s -> %s\n", onnx_path, plan_path);

  /* 2. Load (NULL options: the defaults). */
  status = accel_model_load(plan_path, NULL, &model);
  if (status != ACCEL_OK)
    return fail("loading", status);
  vocab = accel_model_vocab_size(model);
  printf("vocabulary %lld, context %lld tokens, %s\n", (long long)vocab,
         (long long)accel_model_max_model_len(model),
         accel_model_has_tokenizer(model) ? "tokenizer" : "no tokenizer");

  /* 3. Score a few tokens: the prompt's when there is a tokenizer. */
  if (accel_model_has_tokenizer(model)) {
    status = accel_tokenize(model, prompt, 1, &prompt_ids, &num_prompt_ids);
    if (status != ACCEL_OK) {
      fail("tokenizing", status);
      goto done;
    }
    for (i = 0; i < num_prompt_ids && n < 8; ++i)
      ids[n++] = prompt_ids[i];
  } else {
    for (n = 0; n < 6; ++n)
      ids[n] = (int64_t)((n * 37 + 11) % (size_t)vocab);
  }
  logits = malloc(n * (size_t)vocab * sizeof(float));
  if (!logits) {
    fprintf(stderr, "accel-c-example: out of memory\n");
    goto done;
  }
  status = accel_score(model, ids, n, 0, logits);
  if (status != ACCEL_OK) {
    free(logits);
    fail("scoring", status);
    goto done;
  }
  for (i = 0; i < n; ++i) {
    const float *row = logits + i * (size_t)vocab;
    int64_t best = 0, v;
    for (v = 1; v < vocab; ++v)
      if (row[v] > row[best])
        best = v;
    printf("position %zu: token %lld -> argmax %lld (logit %.4f)\n", i, (long long)ids[i],
           (long long)best, row[best]);
  }
  free(logits);

  /* 4. Generate, greedily. */
  accel_generate_options_init(&gen);
  gen.max_tokens = max_tokens;
  if (accel_model_has_tokenizer(model)) {
    printf("prompt: %s\n--- generated ---\n%s", prompt, prompt);
    fflush(stdout);
    status = accel_generate(model, prompt, &gen, on_text, NULL, NULL);
    printf("\n--- end ---\n");
    if (status != ACCEL_OK) {
      fail("generating", status);
      goto done;
    }
  } else {
    printf("the plan has no tokenizer: generating from token ids instead of text\n");
    gen.ignore_eos = 1;
    status = accel_generate_tokens(model, ids, n, &gen, NULL, NULL, &tokens, &num_tokens);
    if (status != ACCEL_OK) {
      fail("generating", status);
      goto done;
    }
    printf("generated ids:");
    for (i = 0; i < num_tokens; ++i)
      printf(" %lld", (long long)tokens[i]);
    printf("\n");
  }
  rc = 0;

done:
  accel_tokens_free(tokens);
  accel_tokens_free(prompt_ids);
  accel_model_free(model);
  return rc;
}
