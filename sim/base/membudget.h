/* membudget.h: the process's memory budget.
 *
 * A command that would need more memory than its budget stops with an
 * error that names the limit and how to raise it, instead of being killed
 * by the kernel (or swapping the machine to a halt) part way through.
 *
 * What is counted: the process's peak resident set (getrusage's
 * ru_maxrss), so every allocation counts, whoever made it (cJSON, libyaml,
 * stdio), and memory that was asked for but never touched does not.  An
 * allocation of 1 MiB or more through sim_xcalloc/sim_xrealloc is checked
 * before it is made (peak + request), so one huge array cannot push the
 * machine into swap before the next check.
 *
 * Where it is checked: those large allocations; every 4096 cJSON
 * allocations (main() installs membudget_json_malloc as cJSON's hook); every
 * 65536 engine events; and at the start of each simulation (run_system).
 * The engine and run_system stop with a diagnostic like the work budget's;
 * an allocation that would pass the budget cannot return to its caller, so
 * membudget_fail() prints the error, removes every staged output file
 * (afile) and runs the cleanups registered with membudget_cleanup_push (the
 * run command puts back the old files of its --out folder), then exits 1.
 *
 * The limit: none until membudget_set_bytes() (a library caller, a test);
 * the command line sets STRATA_MAX_MEMORY if given, else 90% of the
 * machine's physical memory, and `run --max-memory SIZE` overrides both.
 */
#ifndef STRATA_MEMBUDGET_H
#define STRATA_MEMBUDGET_H

#include <stddef.h>
#include <stdint.h>

#include "diag.h"

/* The limit in bytes; 0 = no budget. */
void membudget_set_bytes(uint64_t bytes);
/* Parses a size as users type it ("4GiB", "512MiB", "8GB", or bytes);
 * 0 and *bytes, or -1 if it is not a size of at least 1 MiB. */
int membudget_parse(const char *text, uint64_t *bytes);
/* STRATA_MAX_MEMORY if set (0; -1 if it is not a size: message printed),
 * else 90% of physical memory. */
int membudget_from_env(void);
/* The peak resident set so far, in bytes. */
uint64_t membudget_peak(void);
/* 1 when peak + more bytes would pass the limit (0 with no limit). */
int membudget_exceeded(size_t more);
/* 0, or -1 with *d: "the run needed more than LIMIT of memory ...". */
int membudget_check(size_t more, const char *file, struct diag *d);
/* Prints the error, cleans up (see above) and exits 1. */
_Noreturn void membudget_fail(size_t more);
/* Cleanups for membudget_fail, last pushed first run (at most 16). */
void membudget_cleanup_push(void (*fn)(void *arg), void *arg);
void membudget_cleanup_pop(void);
/* cJSON's malloc hook: malloc, with a budget check every 4096 calls. */
void *membudget_json_malloc(size_t n);

/* How to raise the limit, for messages. */
#define MEMBUDGET_HOW "raise it with --max-memory SIZE (run) or STRATA_MAX_MEMORY=SIZE (every command)"

#endif
