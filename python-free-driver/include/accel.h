/*===- accel.h - the accel C API ---------------------------------*- C -*-===*
 *
 * Compile an ONNX transformer model into a plan, load the plan, score token
 * sequences and generate text, from C alone (C99; also usable from C++).
 * docs/c-api.md is the guide; this header is the reference.
 *
 *   accel_compile_options co;
 *   accel_compile_options_init(&co);
 *   co.onnx_path = "model.onnx";
 *   co.output_path = "model.plan";
 *   if (accel_compile(&co) != ACCEL_OK)
 *     fprintf(stderr, "%s\n", accel_last_error());
 *
 * Conventions
 *  - Errors: every function that can fail returns an accel_status. ACCEL_OK
 *    is 0. On failure, accel_last_error() returns one sentence (or, for a
 *    compile the model failed, one line per compiler diagnostic, each
 *    naming the ONNX node) saying what failed. The message is per thread
 *    and stays valid until the next accel_* call on the same thread; every
 *    accel_* function that returns an accel_status resets it ("" on
 *    success). No function aborts or throws on bad input.
 *  - Ownership: handles (accel_model) are created by the library and freed
 *    with their _free function. Strings and arrays the library returns
 *    through out-parameters are owned by the caller and freed with
 *    accel_string_free() / accel_tokens_free(); on failure out-parameters
 *    are set to NULL / 0. Input pointers are only read during the call.
 *  - Options structs: initialise with their _init function (which sets
 *    struct_size and every default), then set the fields you need. A NULL
 *    options pointer means "all defaults". struct_size lets later versions
 *    add fields at the end without breaking programs built against this
 *    header.
 *  - Threading: every function may be called from any thread. Calls on one
 *    accel_model are serialised by a lock inside it (one sequence at a time);
 *    use one model per thread to run in parallel. accel_compile() calls are
 *    independent of each other. Callbacks run on the calling thread, inside
 *    the call, and must not call accel_* functions on the same model (that
 *    returns ACCEL_ERROR_INVALID_ARGUMENT).
 *
 *===----------------------------------------------------------------------===*/
#ifndef ACCEL_H
#define ACCEL_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32) && defined(ACCEL_BUILDING_LIBRARY)
#define ACCEL_API __declspec(dllexport)
#elif defined(_WIN32)
#define ACCEL_API __declspec(dllimport)
#elif defined(__GNUC__)
#define ACCEL_API __attribute__((visibility("default")))
#else
#define ACCEL_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*
 * Versions
 *===----------------------------------------------------------------------===*/

#define ACCEL_VERSION_MAJOR 0
#define ACCEL_VERSION_MINOR 1
#define ACCEL_VERSION_PATCH 0
/* The version of the API this header describes, as one number:
 * MAJOR * 10000 + MINOR * 100 + PATCH. While MAJOR is 0, a change of MINOR
 * may change the API; from 1.0 on, only a change of MAJOR does. */
#define ACCEL_API_VERSION                                                      \
  (ACCEL_VERSION_MAJOR * 10000 + ACCEL_VERSION_MINOR * 100 + ACCEL_VERSION_PATCH)

/* The ACCEL_API_VERSION the library was built with (compare it with the
 * macro to check that the header and the library agree). */
ACCEL_API unsigned accel_version(void);
/* "MAJOR.MINOR.PATCH", static storage. */
ACCEL_API const char *accel_version_string(void);

/*===----------------------------------------------------------------------===*
 * Errors
 *===----------------------------------------------------------------------===*/

typedef enum accel_status {
  ACCEL_OK = 0,
  /* A NULL or out-of-range argument: an option, a token id outside the
   * vocabulary, a sequence longer than the context, a text prompt without a
   * tokenizer; a file that is not a plan at all (wrong magic) or a plan of
   * an unsupported format version; a call from a callback back into the
   * same model. */
  ACCEL_ERROR_INVALID_ARGUMENT = 1,
  /* A file that is not there or cannot be opened: the ONNX model, the
   * plan, a tokenizer.json or config.json. */
  ACCEL_ERROR_NOT_FOUND = 2,
  /* A damaged plan: truncated, a corrupt header, metadata or schedule, a
   * checksum mismatch. */
  ACCEL_ERROR_DATA_LOSS = 3,
  /* Something this machine cannot do: a plan built for another target, a
   * missing GPU driver. */
  ACCEL_ERROR_UNAVAILABLE = 4,
  /* Out of memory or KV cache blocks. */
  ACCEL_ERROR_RESOURCE_EXHAUSTED = 5,
  /* A feature that does not exist yet (GPU plans, tensor parallelism). */
  ACCEL_ERROR_UNIMPLEMENTED = 6,
  /* A bug in accel; please report it with the message. */
  ACCEL_ERROR_INTERNAL = 7,
  /* The compiler rejected the model: it does not parse as ONNX, uses an
   * operator or construct accel does not support, or cannot be laid out as
   * a plan. The message names the ONNX node. */
  ACCEL_ERROR_INVALID_MODEL = 8
} accel_status;

/* The message of the last failed accel_* call on this thread ("" after a
 * successful one). Never NULL. Valid until the next accel_* call on this
 * thread. */
ACCEL_API const char *accel_last_error(void);
/* "ok", "invalid argument", ... (static storage; "unknown" for a value
 * that is not an accel_status). */
ACCEL_API const char *accel_status_name(accel_status status);

/*===----------------------------------------------------------------------===*
 * Compiling: ONNX → plan
 *===----------------------------------------------------------------------===*/

/* Receives a warning or remark of the compile (e.g. a subgraph that could
 * not be raised and runs slower), one line, "<file>: node '<name>':
 * warning: <message>", NUL-terminated, valid during the call. */
typedef void (*accel_diagnostic_callback)(const char *line, void *user_data);

typedef struct accel_compile_options {
  size_t struct_size;         /* sizeof(accel_compile_options), set by _init */
  const char *onnx_path;      /* required: the ONNX model (external data
                                 beside it) */
  const char *output_path;    /* required: where the plan is written; a
                                 failed compile leaves nothing there */
  const char *target;         /* "cpu" (default when NULL); "a100", "h100",
                                 "h200" are known but not implemented yet */
  const char *tokenizer_path; /* NULL: tokenizer.json beside the model, when
                                 there is one */
  int no_tokenizer;           /* nonzero: the plan carries no tokenizer */
  const char *model_config_path; /* NULL: config.json beside the model, when
                                    there is one (max positions, BOS/EOS) */
  accel_diagnostic_callback on_diagnostic; /* NULL: warnings are dropped */
  void *user_data;            /* passed to on_diagnostic */
  int tp_size;                /* tensor-parallel ranks to partition for
                                 (accelc -tp, docs/passes/partition.md);
                                 0 or 1: not partitioned. accel_model_load
                                 runs such a plan on the CPU as tp_size
                                 threads */
  int pp_size;                /* pipeline stages to split the layers into
                                 (accelc -pp; combines with tp_size); 0 or
                                 1: one stage. CPU target only; such a plan
                                 runs as pp_size x tp_size threads */
} accel_compile_options;

ACCEL_API void accel_compile_options_init(accel_compile_options *options);
/* Compiles options->onnx_path into a plan at options->output_path. Errors:
 * ACCEL_ERROR_INVALID_ARGUMENT (NULL options or paths, unknown target),
 * ACCEL_ERROR_NOT_FOUND (the model, tokenizer or config is not there),
 * ACCEL_ERROR_INVALID_MODEL (the compiler rejected the model; the message
 * names the node), ACCEL_ERROR_UNIMPLEMENTED (a GPU target). */
ACCEL_API accel_status accel_compile(const accel_compile_options *options);

/*===----------------------------------------------------------------------===*
 * Models: a loaded plan
 *===----------------------------------------------------------------------===*/

typedef struct accel_model accel_model;

typedef struct accel_load_options {
  size_t struct_size;    /* sizeof(accel_load_options), set by _init */
  int64_t max_model_len; /* longest sequence (prompt + generated); 0 (the
                            default): the model's max positions, or 2048
                            when the plan does not know them */
  int verify_checksums;  /* nonzero (the default): check every section's
                            CRC at load (reads every weight byte once) */
  const char *gpu_dtype; /* plans for a GPU target: "f32" (NULL, the
                            default), "bf16" or "f16" */
  int gpu_device;        /* plans for a GPU target: the CUDA device (0) */
  double gpu_memory_utilization; /* plans for a GPU target: the fraction of
                            the GPU's memory to use, the KV cache getting
                            what the weights and activations leave (vLLM's
                            --gpu-memory-utilization); 0 (the default): 0.9 */
  int gpu_enforce_eager; /* plans for a GPU target: nonzero runs decode
                            steps without CUDA graphs (0: graphs) */
} accel_load_options;

ACCEL_API void accel_load_options_init(accel_load_options *options);
/* Maps and checks the plan at `plan_path` and prepares its KV cache.
 * `options` may be NULL. On success *model_out is a new model, to be freed
 * with accel_model_free(); on failure it is NULL. Errors:
 * ACCEL_ERROR_NOT_FOUND (no such file), ACCEL_ERROR_DATA_LOSS (truncated,
 * corrupt, bad checksum), ACCEL_ERROR_INVALID_ARGUMENT (not a plan, an
 * unsupported format version, max_model_len out of range, an ACCEL_*
 * environment variable that does not parse or was removed: docs/env.md),
 * ACCEL_ERROR_UNAVAILABLE (built for another target). */
ACCEL_API accel_status accel_model_load(const char *plan_path, const accel_load_options *options,
                                        accel_model **model_out);
/* Frees the model and everything it holds. NULL is a no-op. */
ACCEL_API void accel_model_free(accel_model *model);

/* Model facts: the vocabulary (the width of a logits row) and the longest
 * sequence the model accepts; -1 for a NULL model. */
ACCEL_API int64_t accel_model_vocab_size(const accel_model *model);
ACCEL_API int64_t accel_model_max_model_len(const accel_model *model);
/* 1 when the plan carries a tokenizer (text prompts work), else 0 (also for
 * a NULL model). */
ACCEL_API int accel_model_has_tokenizer(const accel_model *model);

/*===----------------------------------------------------------------------===*
 * Scoring: logits at every position
 *===----------------------------------------------------------------------===*/

/* Runs the sequence ids[0..n) through the model and writes the float32
 * logits of every position to logits_out, row-major [n, vocab] (the caller
 * provides n * accel_model_vocab_size() floats). `chunk` tokens are fed per
 * step through the KV cache: 0 feeds the whole sequence in one step, 1 one
 * token at a time (as decoding does); the logits agree either way up to
 * rounding. Errors: ACCEL_ERROR_INVALID_ARGUMENT (NULL pointers, n == 0, a
 * token outside [0, vocab), n > max_model_len, chunk < 0). */
ACCEL_API accel_status accel_score(accel_model *model, const int64_t *ids, size_t n,
                                   int64_t chunk, float *logits_out);

/*===----------------------------------------------------------------------===*
 * Tokenizer (plans that carry one)
 *===----------------------------------------------------------------------===*/

/* UTF-8 text → token ids. add_special_tokens: nonzero adds the tokenizer's
 * BOS / template tokens. *ids_out is freed with accel_tokens_free(). */
ACCEL_API accel_status accel_tokenize(accel_model *model, const char *text,
                                      int add_special_tokens, int64_t **ids_out,
                                      size_t *num_ids_out);
/* Token ids → UTF-8 text (NUL-terminated), freed with accel_string_free(). */
ACCEL_API accel_status accel_detokenize(accel_model *model, const int64_t *ids, size_t n,
                                        char **text_out);

/*===----------------------------------------------------------------------===*
 * Generation
 *===----------------------------------------------------------------------===*/

typedef struct accel_generate_options {
  size_t struct_size;       /* sizeof(accel_generate_options), set by _init */
  int64_t max_tokens;       /* tokens to generate at most (default 64) */
  float temperature;        /* 0 (the default): greedy; else sample */
  float top_p;              /* (0, 1]; 1 (default): off */
  int64_t top_k;            /* 0 (default): off */
  float min_p;              /* [0, 1]; 0 (default): off */
  float repetition_penalty; /* > 0; 1 (default): off */
  uint64_t seed;            /* used when has_seed: the same seed gives the
                               same tokens on every machine */
  int has_seed;             /* 0 (default): seeded from the OS */
  const char *const *stop;  /* num_stop strings that end generation (not
                               included in the output); needs a tokenizer */
  size_t num_stop;
  int ignore_eos;           /* nonzero: keep going past end-of-sequence */
  int add_special_tokens;   /* nonzero (default): add BOS / template tokens
                               to a text prompt */
} accel_generate_options;

ACCEL_API void accel_generate_options_init(accel_generate_options *options);

/* Receives the output text as it becomes final: never a partial UTF-8
 * character nor a possible prefix of a stop string. `text` is
 * NUL-terminated, `length` bytes long, valid during the call; the pieces
 * concatenate to the full output. */
typedef void (*accel_text_callback)(const char *text, size_t length, void *user_data);

/* Generates from a UTF-8 text prompt (the plan must carry a tokenizer).
 * `options` may be NULL (greedy, 64 tokens). `on_text` (may be NULL)
 * streams the text; `text_out` (may be NULL) receives the whole output,
 * freed with accel_string_free(). Errors: ACCEL_ERROR_INVALID_ARGUMENT
 * (no tokenizer, bad sampling options, a prompt longer than the context). */
ACCEL_API accel_status accel_generate(accel_model *model, const char *prompt,
                                      const accel_generate_options *options,
                                      accel_text_callback on_text, void *user_data,
                                      char **text_out);

/* Generates from token ids (works without a tokenizer; then stop strings
 * are not allowed and on_text is never called). `tokens_out` (may be NULL)
 * receives the generated ids, the end-of-sequence token excluded, freed
 * with accel_tokens_free(); `num_tokens_out` (required with tokens_out)
 * their number. Errors as accel_generate(), and ids outside the
 * vocabulary. */
ACCEL_API accel_status accel_generate_tokens(accel_model *model, const int64_t *prompt_ids,
                                             size_t num_prompt_ids,
                                             const accel_generate_options *options,
                                             accel_text_callback on_text, void *user_data,
                                             int64_t **tokens_out, size_t *num_tokens_out);

/*===----------------------------------------------------------------------===*
 * Memory the library hands out
 *===----------------------------------------------------------------------===*/

/* Frees a string returned by accel_generate() or accel_detokenize(). NULL is
 * a no-op. */
ACCEL_API void accel_string_free(char *text);
/* Frees ids returned by accel_tokenize() or accel_generate_tokens(). NULL is
 * a no-op. */
ACCEL_API void accel_tokens_free(int64_t *ids);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ACCEL_H */
