/* onyx: command-line front end of the runtime.
 *
 *   onyx run MODEL ...     run once, print / save the outputs
 *   onyx test DIR ...      run ONNX backend-test folders
 *   onyx perf MODEL ...    time load and runs (onnxruntime_perf_test style)
 *   onyx info MODEL        describe a model
 *   onyx quantize IN OUT   write a quantised model (src/quantize/) */
#include <stdio.h>
#include <string.h>

#include "tools/cli.h"

static const char *const general_help =
    "usage: onyx COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  run MODEL    run a model once and print its outputs\n"
    "  test DIR...  run ONNX backend-test folders and compare with the expected outputs\n"
    "  perf MODEL   measure load time, latency and peak memory\n"
    "  info MODEL   show inputs, outputs, opsets, operators and provider assignment\n"
    "  optimize MODEL OUT   optimise a model and save it\n"
    "  quantize IN OUT --mode dynamic|static|int4   write an int8 (or int4) model\n"
    "  convert IN OUT --to float16|bfloat16   convert a float32 model to 16-bit floats\n"
    "  ops [--markdown]     list the supported operators, opset ranges and types\n"
    "  ops --required-by MODEL...  the operator list of a minimal build for these models\n"
    "  serve --model-repository DIR   KServe v2 / Triton model server (onyx serve --help)\n"
    "  generate MODEL --input-ids 1,2,3   generate tokens with a decoder model (onyx help generate)\n"
    "  help [CMD]   show help for a command\n"
    "\n"
    "  onyx --version   print the version\n";

static const char *const run_help =
    "usage: onyx run MODEL [options]\n"
    "  --inputs FILE         inputs: .npz (arrays keyed by input name), .npy (one-input models)\n"
    "                        or a folder of input_K.pb files\n"
    "  --input NAME=FILE     one input from .npy, .npz or .pb (TensorProto, SequenceProto, ...)\n"
    "  --output FILE.npz     save all outputs to an .npz that numpy.load reads\n"
    "  --dump DIR            save outputs as DIR/outputs.json + DIR/NAME.bin (ort_run.js layout)\n"
    "  --dim NAME=V          value of a symbolic dimension for generated inputs (default 1)\n"
    "  -x THREADS            intra-op threads (default: one per core)\n"
    "  -o LEVEL              optimization: disabled|basic|extended|all\n"
    "  --disable-pass NAME   skip an optimiser pass (repeatable)\n"
    "  --bf16-fastmath       float32 MatMul/Gemm weights in bfloat16 on AVX512-BF16 CPUs\n"
    "                        (session.enable_bf16_fastmath=1; also for perf and test)\n"
    "  -p, --profile FILE    write a Chrome-trace profile (ONNX Runtime's format)\n"
    "  -e, --providers LIST  execution providers in priority order, e.g. cuda,cpu (the CPU\n"
    "                        takes the rest; one that cannot start is skipped with a warning);\n"
    "                        options as NAME:KEY=VALUE, e.g. cuda:device_id=0:use_tf32=1\n"
    "  --show N              values to print per output (default 8)\n"
    "  --runs N              run N times, printing and saving the last run's outputs (runs\n"
    "                        after the first take the memory plan the first recorded)\n"
    "  --timeout S           terminate the run after S seconds (exit status 1, 'terminated')\n"
    "  -S SEED               seed for generated inputs (default 0)\n"
    "Inputs not given are generated: floats uniform in [-1,1), integers 0..9 (1 for *mask*\n"
    "inputs), bools alternating.\n";

static const char *const test_help =
    "usage: onyx test DIR... [options]\n"
    "  DIR is a test folder (model.onnx + test_data_set_N/), or a folder of them; X.onnx\n"
    "  beside X_output_0.pb is a test too (the 'light' layout).\n"
    "  --filter REGEX        run only tests whose name matches (POSIX extended regex)\n"
    "  --exclude-file F      known failures, lines 'test_name  reason'; reported as SKIP when\n"
    "                        they fail, as UNEXPECTED-PASS (a failure) when they pass\n"
    "  --timeout S           seconds per test (default 60): its runs end with a 'terminated'\n"
    "                        error at S, and a process still alive 2 s later is killed\n"
    "  -j N                  tests run in parallel (default 1)\n"
    "  --rtol R --atol A     tolerance |got - expected| <= A + R*|expected| (1e-3, 1e-7)\n"
    "  -x THREADS, -o LEVEL  as for run; --providers LIST as for run\n"
    "  --verbose             timings and more detail\n"
    "  --no-fork             run tests in this process (for debugging: no isolation/timeout)\n"
    "  --concurrent N        run every test from N threads at once on one session\n"
    "Prints PASS/FAIL/ERROR/SKIP per test and 'N passed, N failed, N skipped'; exits 0 iff\n"
    "nothing failed.\n";

static const char *const perf_help =
    "usage: onyx perf MODEL [result_file] [options]\n"
    "  -x THREADS            intra-op threads (default: one per core)\n"
    "  -r RUNS               timed runs (default 10)\n"
    "  -w WARMUP             untimed runs first (default 1; the first run is first_run_ms)\n"
    "  -m times|duration     fixed run count, or run for -t SECONDS (default 10)\n"
    "  --inputs FILE         inputs (.npz, .npy or folder of input_K.pb); default: generated\n"
    "  --input NAME=FILE     one input\n"
    "  --dim NAME=V, -f NAME:V   symbolic dimension value for generated inputs\n"
    "  -S SEED               seed for generated inputs; -I generate inputs (the default)\n"
    "  -o LEVEL              optimization level; -e/--providers LIST execution providers (cuda,cpu)\n"
    "  -p, --profile FILE    write a Chrome-trace profile of load and runs\n"
    "  -s                    percentile statistics on stderr\n"
    "  -n                    load only\n"
    "  --timeout S           terminate any run that takes longer than S seconds\n"
    "  -y                    accepted for onnxruntime_perf_test compatibility, ignored\n"
    "Prints one JSON line: model, threads, load_ms, first_run_ms, median_ms, min_ms, p90_ms,\n"
    "peak_rss_mb.\n";

static const char *const info_help =
    "usage: onyx info MODEL [-x THREADS] [-o LEVEL] [--optimized] [--providers LIST]\n"
    "       onyx info --cpu\n"
    "  prints inputs and outputs (types, shapes, symbolic dims), opsets, producer, IR version,\n"
    "  operator counts, initializers, the CPU instruction set in use and the provider of each node.\n"
    "  --optimized           also the operator counts after optimisation and the passes that fired\n"
    "  --providers LIST      partition for these providers (cuda,cpu): nodes per provider, the\n"
    "                        compiled groups and the copies between devices\n"
    "  --cpu                 only the CPU line: instruction set in use (ONYX_ISA=avx512|avx2|neon|generic\n"
    "                        forces a lower one), the best this CPU has, the blocked layout's block\n";

static const char *const optimize_help =
    "usage: onyx optimize MODEL OUT [--level disabled|basic|extended|all] [--disable-pass NAME]...\n"
    "  optimises MODEL at the level (default all) and writes OUT, a valid ONNX model (initializers\n"
    "  of 1 MiB and more go to OUT.data); prints the node counts and the passes that fired.\n";

static const char *const generate_help =
    "usage: onyx generate MODEL --input-ids 1,2,3 [--max-new-tokens N] [--greedy | --top-k K --top-p P\n"
    "                     --temperature T --seed S] [--eos-id ID] [-x THREADS] [-o LEVEL] [-e PROVIDERS]\n"
    "                     [--bf16-fastmath] [-p PROFILE]\n"
    "  prefill with the prompt ids, then decode one token per run with the key-value cache kept\n"
    "  between steps (a model in ONNX Runtime's generation layout: input_ids, attention_mask,\n"
    "  past_key_values.N.key/value -> logits, present.N.key/value). Greedy unless a sampling\n"
    "  flag is given. Prints the generated ids and the prefill and decode speeds.\n";
static const char *const quantize_help =
    "usage: onyx quantize IN OUT --mode dynamic|static|int4 [options]\n"
    "  writes OUT, a quantised standard ONNX model (ONNX Runtime runs it too); a refused request\n"
    "  (unreadable model, OUT equal to IN, unknown op type or node, mismatched calibration data)\n"
    "  writes nothing.\n"
    "  --mode dynamic        int8 weights, activations quantised at run time (MatMul ->\n"
    "                        DynamicQuantizeLinear + MatMulInteger, as ONNX Runtime's quantize_dynamic)\n"
    "  --mode static         weights and calibrated activations (QDQ or integer operators)\n"
    "  --mode int4           4-bit block-quantised MatMul weights (com.microsoft MatMulNBits)\n"
    "  --calibration P       .npz file or folder of them (repeatable, or comma-separated);\n"
    "                        default: --samples generated inputs (static)\n"
    "  --samples N           generated calibration inputs when none are given (default 16)\n"
    "  -S SEED               seed for generated calibration inputs (default 0)\n"
    "  --method M            calibration: minmax (default), entropy, percentile\n"
    "  --percentile P        kept percentile for --method percentile (default 99.999)\n"
    "  --per-channel         one weight scale per output channel\n"
    "  --reduce-range        7-bit weights\n"
    "  --format F            qdq (default) or qoperator (static)\n"
    "  --op-types LIST       op types to quantise (comma-separated; default: all the mode handles)\n"
    "  --nodes LIST          only these nodes; --exclude-nodes LIST: never these\n"
    "  --weight-type T       int8 (default) or uint8; --activation-type T: uint8 (default) or int8\n"
    "  --block-size B        int4: elements per block along K (default 32, a power of two >= 16)\n"
    "  --symmetric | --asymmetric   int4: zero point implied (default) or stored per block\n"
    "  --accuracy-level L    int4: MatMulNBits accuracy_level, 0 (default) or 4 (int8 activations)\n"
    "  --scale-search        int4: per block, the range of least squared error (default: round to nearest)\n"
    "  --bits 4|8            int4: MatMulNBits bits (default 4)\n"
    "  --lm-head-bits 4|8    int4: bits of a MatMul writing a graph output (the head; default: --bits)\n";
static const char *const convert_help =
    "usage: onyx convert IN OUT --to float16|bfloat16 [--keep-io-types] [--op-block-list LIST]\n"
    "                    [--node-block-list LIST]\n"
    "  writes OUT with the float32 initializers and operators of IN in float16 (or bfloat16),\n"
    "  Casts where float32 and 16-bit values meet (initializers of 1 MiB and more go to OUT.data)\n"
    "  --keep-io-types       graph inputs and outputs stay float32 (Casts at the boundary)\n"
    "  --op-block-list LIST  comma-separated operator types left in float32, replacing the default\n"
    "                        list of range-sensitive operators (ReduceSum, CumSum, TopK, Range...)\n"
    "  --node-block-list LIST  comma-separated node names left in float32\n"
    "  Refuses, writing nothing, a model that does not load, an unknown operator in the block\n"
    "  list and an OUT naming IN.\n";

static const char *help_text(const char *cmd) {
    const struct {   /* not static: cli_serve_help lives in another unit */
        const char *cmd, *text;
    } texts[] = {{"run", run_help}, {"test", test_help}, {"perf", perf_help}, {"info", info_help},
                 {"optimize", optimize_help}, {"quantize", quantize_help},
                 {"serve", cli_serve_help}, {"convert", convert_help}, {"generate", generate_help}};
    for (size_t i = 0; cmd && i < sizeof texts / sizeof texts[0]; i++)
        if (strcmp(cmd, texts[i].cmd) == 0) return texts[i].text;
    return general_help;
}

void cli_print_help(FILE *f, const char *cmd) { fputs(help_text(cmd), f); }

void cli_print_usage(FILE *f, const char *cmd) {
    const char *help = help_text(cmd);
    fprintf(f, "%.*s\n", (int)strcspn(help, "\n"), help);
    fprintf(f, "(run 'onyx help%s%s' for the options)\n", cmd ? " " : "", cmd ? cmd : "");
}

int onyx_cli_main(int argc, char **argv) {
    if (argc < 2) {
        cli_print_help(stderr, NULL);
        return CLI_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0 || strcmp(cmd, "version") == 0) {
        printf("onyx %s\n", onyx_version());
        return CLI_EXIT_OK;
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        cli_print_help(stdout, argc > 2 ? argv[2] : NULL);
        return CLI_EXIT_OK;
    }
    /* each command parses argv[2..] */
    if (strcmp(cmd, "run") == 0) return cmd_run(argc - 2, argv + 2);
    if (strcmp(cmd, "test") == 0) return cmd_test(argc - 2, argv + 2);
    if (strcmp(cmd, "generate") == 0) return cmd_generate(argc - 2, argv + 2);
    if (strcmp(cmd, "perf") == 0) return cmd_perf(argc - 2, argv + 2);
    if (strcmp(cmd, "info") == 0) return cmd_info(argc - 2, argv + 2);
    if (strcmp(cmd, "optimize") == 0) return cmd_optimize(argc - 2, argv + 2);
    if (strcmp(cmd, "quantize") == 0) return cmd_quantize(argc - 2, argv + 2);
    if (strcmp(cmd, "convert") == 0) return cmd_convert(argc - 2, argv + 2);
    if (strcmp(cmd, "ops") == 0) return cmd_ops(argc - 2, argv + 2);
    if (strcmp(cmd, "serve") == 0) return cmd_serve(argc - 2, argv + 2);
    fprintf(stderr, "onyx: unknown command '%s'\n\n", cmd);
    cli_print_help(stderr, NULL);
    return CLI_EXIT_USAGE;
}
