/* verbs.h: the one list of strata's verbs.  Everything that names the verbs
 * comes from CLI_VERB_MAP: the declarations in cli.h, the dispatch table and
 * `strata --help` (main.c), the man page (`strata help --man`, manpage.c,
 * written to docs/strata.1), and the shell completions, which ask the binary
 * (`strata list verbs`).  Adding a verb is a line here and its cmd_VERB.c.
 *
 * X(id, name, summary): the verb's function is cli_<id> and its usage text
 * cli_<id>_usage (defined in sim/cli/cmd_<id>.c, or names.c for list); name
 * is what the user types; summary is the man page's paragraph (plain text). */
#ifndef STRATA_VERBS_H
#define STRATA_VERBS_H

#define CLI_VERB_MAP(X)                                                                       \
    X(run, "run",                                                                             \
      "Runs a trace, or ops given on the command line (--op gemm:m=8192,n=8192,k=8192); "    \
      "prints total time, work, bytes per level, energy and power (on a "                    \
      "config with a power block), where the time went and the slowest ops. --out writes "   \
      "report.json, ops.csv, timeline.json (Perfetto), plots and report.html. --sustained "  \
      "runs at the clock the board's power limit holds in a run repeated for seconds "       \
      "(docs/energy.md).")                                                                    \
    X(info, "info",                                                                           \
      "Peak FLOP/s per dtype (dense, vector, 2:4 sparse), the memory levels and their ridge " \
      "points; for a system, its devices, switches, hosts and links.")                       \
    X(gen, "gen",                                                                             \
      "Writes the trace of one step of a Hugging Face decoder model. Its first line says "   \
      "what it assumed (batch, prompt, context); flags that do not apply to the phase are "  \
      "warned about. gen KIND:key=value,... writes the trace of run --op's ops.")            \
    X(validate, "validate",                                                                   \
      "Predicts every row of a measurements CSV; errors per row and per group. "             \
      "--leave-one-chip-out fits the keys on every chip but one and predicts that one.")      \
    X(plot, "plot", "Re-renders the plots and HTML page of a saved report.")                 \
    X(import, "import",                                                                       \
      "Turns a PyTorch profiler (Kineto) trace or a Chakra execution trace into a strata "   \
      "trace.")                                                                               \
    X(fit, "fit", "The memory budget of a model step against the device's memory.")          \
    X(compare, "compare",                                                                     \
      "Sets the prediction against an imported trace's measured kernel times.")               \
    X(scalesim, "scalesim", "Runs a SCALE-Sim v2 config and topology; writes its report CSVs.") \
    X(serve, "serve",                                                                         \
      "Runs requests through an LLM serving engine on the hardware: Poisson arrivals, a "    \
      "closed loop or a requests file; continuous batching (vLLM's, with or without "        \
      "chunked prefill) or static batching over a paged KV cache sized as fit sizes it, "    \
      "each step's time simulated from its ops. Prints requests/s, tokens/s, TTFT, TPOT "    \
      "and end-to-end latency percentiles, queueing, KV occupancy and preemptions; --json "  \
      "and --csv (a row a request) (docs/serving.md).")                                      \
    X(plan, "plan",                                                                           \
      "Searches the deployments of a model for a workload under a latency SLA: every "      \
      "hardware given, TP in powers of two, a list of max_num_seqs and chunked prefill on " \
      "or off, each a serve run (on -j threads). Prints per hardware the best by output "   \
      "tokens/s per device that meet the SLA with their TTFT and TPOT percentiles, or the " \
      "closest when none does (exit 3); --csv and --json of every candidate, --out with "   \
      "the Pareto front as CSV and a plot (docs/plan.md).")                                 \
    X(bench, "bench", "An nccl-tests table of one collective on a system.")                  \
    X(sweep, "sweep",                                                                         \
      "Runs every point of a design space on every trace; one CSV row per point and trace "  \
      "(ending in energy_J and power_W on a chip with a power block), plots per key (and "  \
      "for two keys a heatmap per trace) and an HTML page. Shards merge into the same bytes; strata-mpi sweep under mpirun splits "   \
      "the points over ranks.")                                                               \
    X(newchip, "new-chip",                                                                    \
      "A config from a chip's data sheet and its architecture's defaults, every value with " \
      "its source.")                                                                          \
    X(calibrate, "calibrate",                                                                 \
      "Fits config values to measured rows (GSL nonlinear least squares) with "              \
      "uncertainties; writes an overlay for --hw-overlay.")                                   \
    X(list, "list",                                                                           \
      "The shipped configs, systems and models with their paths, the dtypes and weight "     \
      "formats, or the verbs.")

#endif
